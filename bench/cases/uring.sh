# shellcheck shell=bash
# Case 2: the same file through io_uring at iodepth 32: bakeoff vs fio at its best for this work
# (registered files and buffers, batched submission and completion, norandommap).

case_uring() {
    shm_dataset
    local file=$SHM_DS/bakeoff-data.0 secs=$ROUND_SECS r tool
    local -a B=() F=()
    for ((r = 1; r <= ROUNDS; r++)); do
        for tool in $(rotate "$r" bakeoff fio); do
            case $tool in
            bakeoff)
                bk "$WORK/uring-bk-$r.json" randread --target "$SHM_DS" \
                    --set "bs=4k,size=1g,runtime=${secs}s,engine=io_uring,iodepth=32"
                B+=("$(j "$WORK/uring-bk-$r.json" .summary.read_iops)")
                ;;
            fio)
                fio_json "$WORK/uring-fio-$r.json" --name=x --filename="$file" --rw=randread \
                    --bs=4k --ioengine=io_uring --iodepth=32 --runtime="$secs" --time_based --size=1g \
                    --fixedbufs --registerfiles --iodepth_batch_submit=32 \
                    --iodepth_batch_complete_max=32 --norandommap --randrepeat=0 --invalidate=0
                F+=("$(j "$WORK/uring-fio-$r.json" '.jobs[0].read.iops')")
                ;;
            esac
        done
    done
    detail "io_uring rounds: bakeoff ${B[*]} | fio ${F[*]}"
    detail "io_uring per-round ratios bakeoff/fio: $(pair_ratios "${B[*]}" "${F[*]}")"
    local b f rf
    b=$(median "${B[@]}") f=$(median "${F[@]}")
    rf=$(pair_ratios "${B[*]}" "${F[*]}")
    local -a rfa
    read -ra rfa <<<"$rf"
    result "2 shm io_uring qd32" "read IOPS (median of $ROUNDS x ${secs}s)" "$(human "$b")" "fio tuned $(human "$f")" \
        "$(ratio_cell "$rf")" ">= 1.00" "$(verdict ge "$(median "${rfa[@]}")" 1.00)"
}
