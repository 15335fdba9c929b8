# shellcheck shell=bash
# Case 4: bakeoff's peak RSS does not grow with run length (randread 1 job; slob 40 sessions).

mem_pair() { # LABEL DIR SET-KEYS WORKLOAD
    local label=$1 dir=$2 keys=$3 wl=$4 a b r
    bk "$WORK/mem-$wl-short.json" "$wl" --target "$dir" --set "$keys,runtime=${MEM_SHORT}s"
    bk "$WORK/mem-$wl-long.json" "$wl" --target "$dir" --set "$keys,runtime=${MEM_LONG}s"
    a=$(j "$WORK/mem-$wl-short.json" .tool.max_rss_bytes)
    b=$(j "$WORK/mem-$wl-long.json" .tool.max_rss_bytes)
    r=$(ratio "$b" "$a")
    detail "memory $label: max_rss ${MEM_SHORT}s $a bytes, ${MEM_LONG}s $b bytes"
    result "4 memory" "$label: max RSS ${MEM_LONG}s vs ${MEM_SHORT}s" "$(FMT=%.1f calc "$b / 1048576") MiB" \
        "$(FMT=%.1f calc "$a / 1048576") MiB" "$r" "<= 1.10" "$(verdict ge 1.10 "$r")"
}

case_memory() {
    shm_dataset
    mem_pair "randread psync 1 job" "$SHM_DS" "bs=4k,size=1g,engine=psync" randread
    local d
    tmp_under d /dev/shm slob
    mem_pair "slob 32 readers + 8 writers" "$d" "readers=32,writers=8" slob
    rm -rf -- "$d"
}
