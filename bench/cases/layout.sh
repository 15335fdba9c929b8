# shellcheck shell=bash
# Case 5: how fast bakeoff lays out a 2 GiB dataset, against dd with fdatasync, same directory.
# bakeoff's layout is timed as the wall time of `bakeoff run randread --set size=2g,
# runtime=100ms` minus the 100 ms run (so process start, probing and the run's teardown count
# against bakeoff). dd is `dd if=/dev/zero of=FILE bs=1M count=2048 conv=fdatasync`, wall time.

layout_target() { # LABEL DIR
    local label=$1 dir=$2 r t0 t1 bytes=$((2 << 30))
    local -a B=() D=()
    for ((r = 1; r <= LAYOUT_ROUNDS; r++)); do
        remove_layout "$dir"
        rm -f -- "$dir/dd.img"
        sync
        t0=$(now_s)
        bk "$WORK/layout-$r.json" randread --target "$dir" --set size=2g,runtime=100ms
        t1=$(now_s)
        B+=("$(FMT=%.1f calc "$bytes / 1e6 / ($t1 - $t0 - 0.1)")")
        remove_layout "$dir"
        sync
        t0=$(now_s)
        dd if=/dev/zero of="$dir/dd.img" bs=1M count=2048 conv=fdatasync status=none
        t1=$(now_s)
        D+=("$(FMT=%.1f calc "$bytes / 1e6 / ($t1 - $t0)")")
        rm -f -- "$dir/dd.img"
    done
    remove_layout "$dir"
    sync
    detail "layout $label MB/s: bakeoff ${B[*]} | dd ${D[*]}"
    local b d rr
    b=$(median "${B[@]}") d=$(median "${D[@]}")
    rr=$(ratio "$b" "$d")
    result "5 layout 2 GiB" "$label MB/s (median of $LAYOUT_ROUNDS)" "$(FMT=%.0f calc "$b")" "dd $(FMT=%.0f calc "$d")" \
        "$rr" ">= 0.80" "$(verdict ge "$rr" 0.80)"
}

case_layout() {
    local d
    tmp_under d /var/tmp layout
    layout_target "ext4 (/var/tmp)" "$d"
    rm -rf -- "$d"
    tmp_under d /dev/shm layout
    layout_target "tmpfs (/dev/shm)" "$d"
    rm -rf -- "$d"
}
