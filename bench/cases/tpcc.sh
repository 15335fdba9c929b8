# shellcheck shell=bash
# Case 7: TPC-C on PostgreSQL on tmpfs, 4 warehouses, 8 terminals on this machine's CPUs: the
# client must not be what is measured (its share of the busy CPU <= 15 %), and the load of
# 4 warehouses (parallel COPY, keys and indexes after) takes <= 90 s. The same run with the
# transactions sent statement by statement (procedures=false) is shown beside it: that is
# what the stored procedures save.

tpcc_run() { # OUT.json PROCEDURES
    bk "$1" tpcc --stack "tmpfs:size=3g" \
        --set "db=postgres,warehouses=4,terminals=8,runtime=${TPCC_SECS}s,procedures=$2"
}

case_tpcc() {
    local r shares=() loads=() tps=() plain_shares=() plain_tps=()
    for ((r = 1; r <= TPCC_ROUNDS; r++)); do
        tpcc_run "$WORK/tpcc-$r.json" true
        shares+=("$(j "$WORK/tpcc-$r.json" .summary.client_cpu_share_pct)")
        loads+=("$(j "$WORK/tpcc-$r.json" .database.load.seconds)")
        tps+=("$(j "$WORK/tpcc-$r.json" .summary.tps)")
        tpcc_run "$WORK/tpcc-plain-$r.json" false
        plain_shares+=("$(j "$WORK/tpcc-plain-$r.json" .summary.client_cpu_share_pct)")
        plain_tps+=("$(j "$WORK/tpcc-plain-$r.json" .summary.tps)")
    done
    detail "tpcc procedures=true: client share % ${shares[*]}; load s ${loads[*]}; tps ${tps[*]}"
    detail "tpcc procedures=false: client share % ${plain_shares[*]}; tps ${plain_tps[*]}"
    local share load
    share=$(median "${shares[@]}") load=$(median "${loads[@]}")
    result "7 tpcc pg tmpfs 8 terminals" "client share of busy CPU (median of $TPCC_ROUNDS)" \
        "$(FMT=%.1f calc "$share")% (range $(minmax "${shares[@]}"))" \
        "statements: $(FMT=%.1f calc "$(median "${plain_shares[@]}")")%" "-" "<= 15 %" \
        "$(verdict ge 15 "$share")"
    result "7 tpcc pg tmpfs 8 terminals" "transactions/s (median of $TPCC_ROUNDS)" \
        "$(human "$(median "${tps[@]}")")" "statements: $(human "$(median "${plain_tps[@]}")")" \
        "$(ratio "$(median "${tps[@]}")" "$(median "${plain_tps[@]}")")" "report" INFO
    result "7 tpcc pg tmpfs 4 warehouses" "load seconds (median of $TPCC_ROUNDS)" \
        "$(FMT=%.1f calc "$load") s (range $(minmax "${loads[@]}"))" "-" "-" "<= 90 s" \
        "$(verdict ge 90 "$load")"
}
