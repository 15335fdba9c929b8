#!/bin/bash
# verify= after a crash state (issue 23, item 5): a random 8 KiB (or 4 KiB) writer that syncs
# after every write, its blocks verified (crc32c), on each stack, with 100 crash states (ZFS: 20,
# at about 10 s a state). Known physics: blocks of the sector's size are never torn; 8 KiB
# blocks overwritten in place (ext4, xfs) can be torn at 4 KiB, which destroys the acknowledged
# version too; copy-on-write (btrfs, zfs) tears nothing; without barriers (ext4 nobarrier) the
# syncs reach no flush and acknowledged writes are lost. Quiet machine, debug build of the
# commit in /work/main. The records go beside this script, gzipped; the summary lines in
# summary.txt.
set -u
B=${B:-/work/main/target/debug/bakeoff}
here=$(cd "$(dirname "$0")" && pwd)
set_common="verify=crc32c,fsync=1,runtime=10s,ramp_time=0,size=64m"
echo "$(date -u +%FT%TZ) start $(git -C /work/main rev-parse --short HEAD)" | tee "$here/log.txt"
: > "$here/summary.txt"
run() {
    local name=$1 stack=$2 bs=$3 states=$4
    "$B" run randwrite --stack "$stack" --set "$set_common,bs=$bs" --crash-states "$states" \
        --quiet --json "$here/$name.json" > "$here/$name.txt" 2> "$here/$name.err"
    echo "$(date -u +%FT%TZ) $name rc=$?" | tee -a "$here/log.txt"
    { echo "== $name: --stack $stack --set $set_common,bs=$bs --crash-states $states"
      grep -A3 '^risk' "$here/$name.txt"; grep '^cpu' -A1 "$here/$name.txt"; } >> "$here/summary.txt"
    gzip -f "$here/$name.json"
}
run ext4-4k ext4 4k 100
run ext4-8k ext4 8k 100
run xfs-8k xfs 8k 100
run btrfs-8k btrfs 8k 100
run ext4-nobarrier-4k ext4:mount=nobarrier 4k 100
run zfs-8k zfs 8k 20
echo "$(date -u +%FT%TZ) done" | tee -a "$here/log.txt"
