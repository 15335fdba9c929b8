#!/bin/bash
# Quiet-machine risk outcomes (issue 23), second day: crash points aimed at busy flushes (every
# other subset state). Debug build of commit 469682e in /work/main. Records go to $R; the gzipped
# ones are beside this script. This script was stopped after the MariaDB run: its two 200-state
# runs gave way to measure-study.sh (the ext4 one, then the study).
set -u
B=/work/main/target/debug/bakeoff
R=${R:-/work/results/risk2}
mkdir -p "$R"
cd /work/main
log() { echo "$(date +%T) $*" | tee -a $R/log.txt; }
run() { # name stack set states
  log "start $1"
  $B run tpcc --stack "$2" --set "$3" --crash-states "$4" --quiet --json "$R/$1.json" > "$R/$1.txt" 2> "$R/$1.err"
  log "done $1 rc=$?"
}
PG=db=postgres,warehouses=1,terminals=4,runtime=20s,ramp_time=0
run pg-fpw-off-ext4 ext4 "$PG,pg.full_page_writes=off" 50
run pg-fpw-off-btrfs btrfs "$PG,pg.full_page_writes=off" 50
run pg-fsync-off-ext4 ext4 "$PG,pg.fsync=off" 30
MY=db=mariadb,warehouses=1,terminals=4,runtime=20s,ramp_time=0
run my-dblwr-off-ext4 ext4 "$MY,my.innodb_doublewrite=OFF" 30
run pg-defaults-ext4 ext4 "$PG" 200
run pg-defaults-xfs xfs "$PG" 200
log finished
