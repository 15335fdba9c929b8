#!/bin/bash
# Issue 23's "done when": PostgreSQL's defaults on xfs, 200 crash states (ext4's 200 are in
# ../crash-states-2026-11-28/). The same workload as there: TPC-C, 1 warehouse, 4 terminals,
# 20 s, no warm-up, seed 1, torn writes at 4 KiB. Quiet machine, debug build of commit 2a4fb3a
# in /work/main. The record goes beside this script, gzipped.
set -u
B=${B:-/work/main/target/debug/bakeoff}
here=$(cd "$(dirname "$0")" && pwd)
echo "$(date -u +%FT%TZ) start" | tee "$here/log.txt"
"$B" run tpcc --stack xfs --set db=postgres,warehouses=1,terminals=4,runtime=20s,ramp_time=0 \
    --crash-states 200 --quiet --json "$here/pg-defaults-xfs.json" > "$here/pg-defaults-xfs.txt" \
    2> "$here/pg-defaults-xfs.err"
echo "$(date -u +%FT%TZ) done rc=$?" | tee -a "$here/log.txt"
gzip -f "$here/pg-defaults-xfs.json"
