#!/bin/bash
# Quiet-machine risk outcomes (issue 23), debug build of the commit in /work/main.
set -u
B=/work/main/target/debug/bakeoff
R=/work/results/risk
cd /work/main
log() { echo "$(date +%T) $*" | tee -a $R/log.txt; }
run() { # name stack set states
  log "start $1"
  $B run tpcc --stack "$2" --set "$3" --crash-states "$4" --quiet --json "$R/$1.json" > "$R/$1.txt" 2> "$R/$1.err"
  log "done $1 rc=$?"
}
PG=db=postgres,warehouses=1,terminals=4,runtime=20s,ramp_time=0
run pg-defaults-ext4 ext4 "$PG" 40
run pg-synccommit-off-ext4 ext4 "$PG,pg.synchronous_commit=off" 30
run pg-fpw-off-ext4 ext4 "$PG,pg.full_page_writes=off" 30
run pg-fpw-off-btrfs btrfs "$PG,pg.full_page_writes=off" 30
SQ=db=sqlite,warehouses=1,terminals=4,runtime=20s,ramp_time=0,sqlite.journal_mode=wal
run sqlite-full-ext4 ext4 "$SQ,sqlite.synchronous=full" 30
run sqlite-off-ext4 ext4 "$SQ,sqlite.synchronous=off" 30
log finished
