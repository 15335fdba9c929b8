# shellcheck shell=bash
# Case 7: TPC-C on PostgreSQL on tmpfs, 4 warehouses, 8 terminals on this machine's CPUs: the
# client must not be what is measured (its share of the busy CPU <= 15 %), and the load of
# 4 warehouses (parallel COPY, keys and indexes after) takes <= 90 s. The same run with the
# transactions sent statement by statement (procedures=false) is shown beside it: that is
# what the stored procedures save.

tpcc_run() { # OUT.json DB PROCEDURES
    bk "$1" tpcc --stack "tmpfs:size=3g" \
        --set "db=$2,warehouses=4,terminals=8,runtime=${TPCC_SECS}s,procedures=$3"
}

# tpcc_case DB CASE LOAD_TARGET_S: TPCC_ROUNDS rounds of a run with stored procedures and one
# without on DB; the client's share of busy CPU (<= 15 %), transactions/s both ways, and the
# 4-warehouse load (<= LOAD_TARGET_S).
tpcc_case() {
    local db=$1 name=$2 load_target=$3 r shares=() loads=() tps=() plain_shares=() plain_tps=()
    local out=$WORK/tpcc-$db
    for ((r = 1; r <= TPCC_ROUNDS; r++)); do
        tpcc_run "$out-$r.json" "$db" true
        shares+=("$(j "$out-$r.json" .summary.client_cpu_share_pct)")
        loads+=("$(j "$out-$r.json" .database.load.seconds)")
        tps+=("$(j "$out-$r.json" .summary.tps)")
        tpcc_run "$out-plain-$r.json" "$db" false
        plain_shares+=("$(j "$out-plain-$r.json" .summary.client_cpu_share_pct)")
        plain_tps+=("$(j "$out-plain-$r.json" .summary.tps)")
    done
    detail "tpcc $db procedures=true: client share % ${shares[*]}; load s ${loads[*]}; tps ${tps[*]}"
    detail "tpcc $db procedures=false: client share % ${plain_shares[*]}; tps ${plain_tps[*]}"
    local share load
    share=$(median "${shares[@]}") load=$(median "${loads[@]}")
    result "$name 8 terminals" "client share of busy CPU (median of $TPCC_ROUNDS)" \
        "$(FMT=%.1f calc "$share")% (range $(minmax "${shares[@]}"))" \
        "statements: $(FMT=%.1f calc "$(median "${plain_shares[@]}")")%" "-" "<= 15 %" \
        "$(verdict ge 15 "$share")"
    result "$name 8 terminals" "transactions/s (median of $TPCC_ROUNDS)" \
        "$(human "$(median "${tps[@]}")")" "statements: $(human "$(median "${plain_tps[@]}")")" \
        "$(ratio "$(median "${tps[@]}")" "$(median "${plain_tps[@]}")")" "report" INFO
    result "$name 4 warehouses" "load seconds (median of $TPCC_ROUNDS)" \
        "$(FMT=%.1f calc "$load") s (range $(minmax "${loads[@]}"))" "-" "-" "<= $load_target s" \
        "$(verdict ge "$load_target" "$load")"
}

case_tpcc() {
    tpcc_case postgres "7 tpcc pg tmpfs" 90
}
