#!/bin/bash
# Second batch, after measure.sh's first five runs (2026-11-28, the same build): PostgreSQL's
# defaults on ext4 with 200 crash states, then the full-page-writes study.
set -u
B=/work/main/target/debug/bakeoff
R=${R:-/work/results/risk2}
cd /work/main
log() { echo "$(date +%T) $*" | tee -a $R/log.txt; }
log "start pg-defaults-ext4"
$B run tpcc --stack ext4 --set db=postgres,warehouses=1,terminals=4,runtime=20s,ramp_time=0 \
    --crash-states 200 --quiet --json $R/pg-defaults-ext4.json > $R/pg-defaults-ext4.txt 2> $R/pg-defaults-ext4.err
log "done pg-defaults-ext4 rc=$?"
log "start study fullpage-risk"
$B compare --study studies/fullpage-risk.toml --out $R/fullpage-risk > $R/fullpage-risk.txt 2> $R/fullpage-risk.err
log "done study fullpage-risk rc=$?"
