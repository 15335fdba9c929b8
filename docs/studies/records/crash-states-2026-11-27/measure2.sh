#!/bin/bash
# Quiet-machine risk outcomes, second set (issue 23), debug build of the commit in /work/main.
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
run pg-defaults-xfs xfs db=postgres,warehouses=1,terminals=4,runtime=20s,ramp_time=0 40
MY=db=mariadb,warehouses=1,terminals=4,runtime=20s,ramp_time=0
run my-dblwr-on-ext4 ext4 "$MY" 30
run my-dblwr-off-ext4 ext4 "$MY,my.innodb_doublewrite=OFF" 30
log finished2
