# shellcheck shell=bash
# Case 1: cache-resident 4 KiB random reads on /dev/shm, psync, one job.
# bakeoff vs fio at its best for this work (psync, norandommap, randrepeat=0) vs a bare pread
# loop that reads the clock once per 1024 reads, same file, interleaved rounds.

case_psync() {
    shm_dataset
    local file=$SHM_DS/bakeoff-data.0 secs=$ROUND_SECS pl r tool
    pl=$(build_pread_loop)
    local -a B=() F=() P=()
    for ((r = 1; r <= ROUNDS; r++)); do
        for tool in $(rotate "$r" bakeoff fio pread); do
            case $tool in
            bakeoff)
                bk "$WORK/psync-bk-$r.json" randread --target "$SHM_DS" \
                    --set "bs=4k,size=1g,runtime=${secs}s,engine=psync"
                B+=("$(j "$WORK/psync-bk-$r.json" .summary.read_iops)")
                ;;
            fio)
                fio_json "$WORK/psync-fio-$r.json" --name=x --filename="$file" --rw=randread \
                    --bs=4k --ioengine=psync --runtime="$secs" --time_based --size=1g \
                    --norandommap --randrepeat=0 --invalidate=0
                F+=("$(j "$WORK/psync-fio-$r.json" '.jobs[0].read.iops')")
                ;;
            pread)
                P+=("$("$pl" "$file" "$secs" 4096 | sed -n 's/^iops=\([0-9.]*\).*/\1/p')")
                ;;
            esac
        done
    done
    detail "psync rounds: bakeoff ${B[*]} | fio ${F[*]} | pread ${P[*]}"
    detail "psync per-round ratios: bakeoff/fio $(pair_ratios "${B[*]}" "${F[*]}") | bakeoff/pread $(pair_ratios "${B[*]}" "${P[*]}")"
    local b f p rf rp
    b=$(median "${B[@]}") f=$(median "${F[@]}") p=$(median "${P[@]}")
    rf=$(pair_ratios "${B[*]}" "${F[*]}") rp=$(pair_ratios "${B[*]}" "${P[*]}")
    local -a rfa rpa
    read -ra rfa <<<"$rf"
    read -ra rpa <<<"$rp"
    result "1 shm psync 4k" "read IOPS (median of $ROUNDS x ${secs}s)" "$(human "$b")" "fio tuned $(human "$f")" \
        "$(ratio_cell "$rf")" ">= 1.00" "$(verdict ge "$(median "${rfa[@]}")" 1.00)"
    result "1 shm psync 4k" "read IOPS (median of $ROUNDS x ${secs}s)" "$(human "$b")" "pread loop $(human "$p")" \
        "$(ratio_cell "$rp")" ">= 0.95" "$(verdict ge "$(median "${rpa[@]}")" 0.95)"
}
