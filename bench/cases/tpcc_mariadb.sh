# shellcheck shell=bash
# Case 9: TPC-C on MariaDB on tmpfs, 4 warehouses, 8 terminals on this machine's CPUs (issue
# 21): the client must not be what is measured (its share of the busy CPU <= 15 %, reported as
# case 7 reports PostgreSQL's), and the load of 4 warehouses takes <= 120 s. The same run with
# the transactions sent statement by statement (procedures=false) is shown beside it.

tpccmy_run() { # OUT.json PROCEDURES
    bk "$1" tpcc --stack "tmpfs:size=3g" \
        --set "db=mariadb,warehouses=4,terminals=8,runtime=${TPCC_SECS}s,procedures=$2"
}

case_tpccmy() {
    local r shares=() loads=() tps=() plain_shares=() plain_tps=()
    for ((r = 1; r <= TPCC_ROUNDS; r++)); do
        tpccmy_run "$WORK/tpccmy-$r.json" true
        shares+=("$(j "$WORK/tpccmy-$r.json" .summary.client_cpu_share_pct)")
        loads+=("$(j "$WORK/tpccmy-$r.json" .database.load.seconds)")
        tps+=("$(j "$WORK/tpccmy-$r.json" .summary.tps)")
        tpccmy_run "$WORK/tpccmy-plain-$r.json" false
        plain_shares+=("$(j "$WORK/tpccmy-plain-$r.json" .summary.client_cpu_share_pct)")
        plain_tps+=("$(j "$WORK/tpccmy-plain-$r.json" .summary.tps)")
    done
    detail "tpcc mariadb procedures=true: client share % ${shares[*]}; load s ${loads[*]}; tps ${tps[*]}"
    detail "tpcc mariadb procedures=false: client share % ${plain_shares[*]}; tps ${plain_tps[*]}"
    local share load
    share=$(median "${shares[@]}") load=$(median "${loads[@]}")
    result "9 tpcc mariadb tmpfs 8 terminals" "client share of busy CPU (median of $TPCC_ROUNDS)" \
        "$(FMT=%.1f calc "$share")% (range $(minmax "${shares[@]}"))" \
        "statements: $(FMT=%.1f calc "$(median "${plain_shares[@]}")")%" "-" "<= 15 %" \
        "$(verdict ge 15 "$share")"
    result "9 tpcc mariadb tmpfs 8 terminals" "transactions/s (median of $TPCC_ROUNDS)" \
        "$(human "$(median "${tps[@]}")")" "statements: $(human "$(median "${plain_tps[@]}")")" \
        "$(ratio "$(median "${tps[@]}")" "$(median "${plain_tps[@]}")")" "report" INFO
    result "9 tpcc mariadb tmpfs 4 warehouses" "load seconds (median of $TPCC_ROUNDS)" \
        "$(FMT=%.1f calc "$load") s (range $(minmax "${loads[@]}"))" "-" "-" "<= 120 s" \
        "$(verdict ge 120 "$load")"
}
