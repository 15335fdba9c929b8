# shellcheck shell=bash
# Case 6: agreement with fio on a loop device (direct I/O, ext4 on it): 8 KiB random reads,
# O_DIRECT, same file, interleaved rounds. Also checks bakeoff's device figures for the loop
# device against its own and fio's operation counts, and /proc/diskstats during the fio runs.

case_loop() {
    local d img dev name mnt file secs=$LOOP_SECS r tool s0 s1
    tmp_under d /var/tmp loop
    img=$d/disk.img mnt=$d/mnt
    fallocate -l 1G "$img"
    attach_loop dev "$img"
    name=${dev#/dev/}
    # No lazy init: ext4lazyinit would otherwise write inode tables during the measurements.
    mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
    mkdir "$mnt"
    mount "$dev" "$mnt"
    CLEAN_MOUNTS+=("$mnt")
    file=$mnt/bakeoff-data.0
    log "loop: $dev (direct-io $(cat "/sys/block/$name/loop/dio")) on $img, mounted at $mnt"
    bk "$WORK/loop-layout.json" randread --target "$mnt" --set bs=8k,direct=true,size=512m,runtime=100ms
    local -a B=() BD=() F=() FD=()
    for ((r = 1; r <= ROUNDS; r++)); do
        for tool in $(rotate "$r" bakeoff fio); do
            case $tool in
            bakeoff)
                bk "$WORK/loop-bk-$r.json" randread --target "$mnt" \
                    --set "bs=8k,direct=true,size=512m,runtime=${secs}s"
                B+=("$(j "$WORK/loop-bk-$r.json" .summary.read_iops)")
                BD+=("$(jq -r --arg n "$name" '[.devices[] | select(.name == $n) | .read_iops][0] // "nan"' \
                    "$WORK/loop-bk-$r.json")")
                ;;
            fio)
                read -r s0 _ < <(diskstats "$name")
                fio_json "$WORK/loop-fio-$r.json" --name=x --filename="$file" --rw=randread --bs=8k \
                    --direct=1 --ioengine=psync --runtime="$secs" --time_based --size=512m
                read -r s1 _ < <(diskstats "$name")
                F+=("$(j "$WORK/loop-fio-$r.json" '.jobs[0].read.iops')")
                FD+=("$(FMT=%.1f calc "($s1 - $s0) / ($(j "$WORK/loop-fio-$r.json" '.jobs[0].read.runtime') / 1000)")")
                ;;
            esac
        done
    done
    detail "loop rounds ($name): bakeoff ${B[*]} | bakeoff device ${BD[*]} | fio ${F[*]} | diskstats during fio ${FD[*]}"
    detail "loop per-round ratios bakeoff/fio: $(pair_ratios "${B[*]}" "${F[*]}")"
    detail "loop devices seen by bakeoff (last round): $(jq -c '[.devices[] | {name, role, loop_dio, read_iops}]' "$WORK/loop-bk-$ROUNDS.json")"
    local b bd f fd r1 r2 r3 r4
    b=$(median "${B[@]}") bd=$(median "${BD[@]}") f=$(median "${F[@]}") fd=$(median "${FD[@]}")
    r1=$(ratio "$b" "$f") r2=$(ratio "$bd" "$f") r3=$(ratio "$bd" "$b") r4=$(ratio "$fd" "$f")
    within() { ge "$1" "$2" && ge "$3" "$1"; }
    result "6 loop dio 8k" "app read IOPS (median of $ROUNDS x ${secs}s)" "$(human "$b")" "fio $(human "$f")" \
        "$r1" "0.85-1.15" "$(verdict within "$r1" 0.85 1.15)"
    result "6 loop dio 8k" "$name device read IOPS (bakeoff .devices[])" "$(human "$bd")" "fio $(human "$f")" \
        "$r2" "0.85-1.15" "$(verdict within "$r2" 0.85 1.15)"
    result "6 loop dio 8k" "$name device vs app IOPS, same bakeoff run" "$(human "$bd")" "bakeoff app $(human "$b")" \
        "$r3" "0.95-1.05" "$(verdict within "$r3" 0.95 1.05)"
    result "6 loop dio 8k" "/proc/diskstats $name during fio vs fio" "-" "diskstats $(human "$fd") / fio $(human "$f")" \
        "$r4" "0.95-1.05" "$(verdict within "$r4" 0.95 1.05)"
    # Torn down by bench_cleanup at exit (mount, then loop, then the image's directory).
}
