#!/bin/bash
# Quiet-machine risk outcomes (issue 23), debug build of the commit in /work/main. The nine
# runs of 2026-11-27 in the order they ran (the last three as a second batch; the doublewrite-off
# run was stopped by Ctrl-C after 27 states). Records go to $R; the gzipped ones are beside this.
set -u
B=/work/main/target/debug/bakeoff
R=${R:-/work/results/risk}
mkdir -p "$R"
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
run pg-defaults-xfs xfs "$PG" 40
MY=db=mariadb,warehouses=1,terminals=4,runtime=20s,ramp_time=0
run my-dblwr-on-ext4 ext4 "$MY" 30
run my-dblwr-off-ext4 ext4 "$MY,my.innodb_doublewrite=OFF" 30
log finished
