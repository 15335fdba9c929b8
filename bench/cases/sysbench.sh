# shellcheck shell=bash
# Case 8: sysbench against MariaDB on xfs over a loop device (direct I/O), through bakeoff and
# by hand, interleaved: the server bakeoff starts and measures must perform as one started by
# hand with the same variables (bakeoff's defaults for this machine, read back from its run
# record), with the same data, cold start and warm-up. The hand side: mkfs.xfs on a loop
# device of the size bakeoff chose, mariadb-install-db, mariadbd as mysql, sysbench prepare,
# a restart around a cache drop, a warm-up sysbench run as long as bakeoff's, then the
# measured sysbench run; its printed TPS against bakeoff's.

SB_SET="tables=4,table_size=100000,threads=4"

sb_bakeoff() { # OUT.json
    bk "$1" sysbench --stack xfs --set "$SB_SET,runtime=${SB_SECS}s"
}

# The variables the server of a bakeoff record ran with that bakeoff decides by default.
sb_variables() { # RECORD.json
    jq -r '.database.settings | to_entries[] | select(.key | IN("innodb_buffer_pool_size",
        "innodb_log_file_size", "innodb_flush_method", "innodb_buffer_pool_dump_at_shutdown",
        "innodb_buffer_pool_load_at_startup", "max_connections", "performance_schema",
        "skip_networking", "skip_name_resolve")) | "\(.key)=\(.value)"' "$1"
}

sb_start() { # CNF SOCKET
    runuser -u mysql -- sh -c "exec mariadbd --defaults-file=$1 </dev/null >/dev/null 2>&1 &"
    local i
    for ((i = 0; i < 600; i++)); do
        mariadb-admin --no-defaults --socket="$2" --user=root ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    die "mariadbd ($1) did not answer within 60 s"
}

sb_stop() { # SOCKET
    mariadb-admin --no-defaults --socket="$1" --user=root shutdown || die "mariadb-admin shutdown"
}

sb_by_hand() { # RECORD.json OUT.txt
    local dir img loop mnt cnf sock bytes warm
    tmp_under dir /var/tmp sysbench
    bytes=$(j "$1" '.stack.backing[0].size_bytes')
    warm=$(FMT=%.0f calc "$(j "$1" .steady.warmup_s)")
    img=$dir/disk.img mnt=$dir/mnt sock=$dir/sock/mysqld.sock cnf=$dir/my.cnf
    truncate -s "$bytes" "$img"
    attach_loop loop "$img"
    mkfs.xfs -q -f "$loop"
    mkdir -p "$mnt" "$dir/sock"
    mount "$loop" "$mnt"
    CLEAN_MOUNTS+=("$mnt")
    mkdir "$mnt/mariadb"
    chown mysql: "$mnt/mariadb" "$dir/sock"
    chmod 755 "$dir"
    {
        echo "[mariadbd]"
        echo "datadir=$mnt/mariadb"
        echo "socket=$sock"
        echo "pid_file=$dir/sock/mariadbd.pid"
        echo "log_error=$dir/sock/error.log"
        sb_variables "$1"
    } >"$cnf"
    chmod 644 "$cnf"
    runuser -u mysql -- mariadb-install-db --defaults-file="$cnf" \
        --auth-root-authentication-method=normal --skip-test-db >/dev/null ||
        die "mariadb-install-db"
    sb_start "$cnf" "$sock"
    mariadb --no-defaults --socket="$sock" --user=root -e "CREATE DATABASE bakeoff"
    local conn=(--db-driver=mysql "--mysql-socket=$sock" --mysql-user=root --mysql-db=bakeoff
        --tables=4 --table-size=100000)
    sysbench oltp_read_write "${conn[@]}" --threads=4 prepare >/dev/null || die "sysbench prepare"
    sb_stop "$sock"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    sb_start "$cnf" "$sock"
    sysbench oltp_read_write "${conn[@]}" --threads=4 --time="$warm" run >/dev/null ||
        die "sysbench warm-up"
    sysbench oltp_read_write "${conn[@]}" --threads=4 --time="$SB_SECS" run >"$2" ||
        die "sysbench run"
    sb_stop "$sock"
    umount "$mnt"
}

case_sysbench() {
    local r ours=() theirs=() ratios=() printed=() record
    # Odd rounds run bakeoff first, even rounds the hand run first (with the previous round's
    # record: the same sizes and variables), so that neither side always runs second.
    for ((r = 1; r <= SB_ROUNDS; r++)); do
        if ((r % 2 == 0)); then
            sb_by_hand "$record" "$WORK/sysbench-hand-$r.txt"
        fi
        sb_bakeoff "$WORK/sysbench-$r.json"
        record=$WORK/sysbench-$r.json
        ours+=("$(j "$record" .summary.tps)")
        printed+=("$(j "$record" .database.sysbench.tps)")
        if ((r % 2 == 1)); then
            sb_by_hand "$record" "$WORK/sysbench-hand-$r.txt"
        fi
        theirs+=("$(awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }' "$WORK/sysbench-hand-$r.txt")")
        ratios+=("$(ratio "${ours[-1]}" "${theirs[-1]}")")
    done
    detail "sysbench through bakeoff: tps ${ours[*]} (sysbench printed ${printed[*]})"
    detail "sysbench by hand: tps ${theirs[*]}; per-round ratios ${ratios[*]} (odd rounds bakeoff first)"
    result "8 sysbench mariadb xfs 4 threads" "TPS, bakeoff's server vs one started by hand" \
        "$(human "$(median "${ours[@]}")")" "$(human "$(median "${theirs[@]}")")" \
        "$(ratio_cell "${ratios[*]}")" "report (within noise)" INFO
}
