# shellcheck shell=bash
# Case 3: filebench oltp with 200 shadows on this machine's CPUs: how much of the busy CPU is
# bakeoff's process, with the modelled application CPU (usermode hog, default 200000) and
# without it (usermode=0: only the tool's own work and the I/O system calls it makes). Without
# the hog, on tmpfs (no file system work behind the system calls) bakeoff's whole CPU per
# operation is the tool's cost; on ext4 its system time also holds ext4's and the journal's
# work for the O_DSYNC writes, so there the target is on its user time.

oltp_rows() { # LABEL JSON RUNTIME_SECS [TARGET_US]
    local label=$1 f=$2 share busy rd wr secs tool_us tool_us_op
    share=$(j "$f" .tool.share_of_busy_pct) busy=$(j "$f" .summary.cpu_busy_pct)
    rd=$(j "$f" .summary.read_iops) wr=$(j "$f" .summary.write_iops)
    secs=$(FMT=%.3f calc "$(j "$f" .measured_ns) / 1e9")
    # bakeoff's own CPU (its process, from getrusage over the window) per application operation.
    tool_us=$(j "$f" .cpu.split.tool_us)
    tool_us_op=$(FMT=%.2f calc "$tool_us / ($secs * ($rd + $wr))")
    local user_op sys_op
    user_op=$(FMT=%.2f calc "$(j "$f" .tool.user_us) / ($secs * ($rd + $wr))")
    sys_op=$(FMT=%.2f calc "$(j "$f" .tool.system_us) / ($secs * ($rd + $wr))")
    detail "oltp $label: share_of_busy ${share}% cpu_busy ${busy}% read ${rd}/s write ${wr}/s measured ${secs}s (runtime asked ${3}s) tool_cpu_per_op ${tool_us_op}us (user ${user_op}, system ${sys_op}) cpu split $(jq -c .cpu.split "$f") max_rss $(j "$f" .tool.max_rss_bytes)"
    result "3 oltp 200 shadows" "$label: bakeoff share of busy CPU" "$(FMT=%.1f calc "$share")%" \
        "machine busy $(FMT=%.1f calc "$busy")% of $(nproc) CPUs" "-" "report" INFO
    result "3 oltp 200 shadows" "$label: read / write IOPS" "$(human "$rd") / $(human "$wr")" "-" "-" "report" INFO
    case ${4:-} in
    all)
        result "3 oltp 200 shadows" "$label: bakeoff CPU per app op" "${tool_us_op} us" \
            "user ${user_op} + sys ${sys_op}" "-" "<= 10 us" "$(verdict ge 10 "$tool_us_op")"
        ;;
    user)
        result "3 oltp 200 shadows" "$label: bakeoff user CPU per app op" "${user_op} us" \
            "sys ${sys_op} (ext4, journal, O_DSYNC)" "-" "<= 10 us" "$(verdict ge 10 "$user_op")"
        ;;
    *)
        result "3 oltp 200 shadows" "$label: bakeoff CPU per app op" "${tool_us_op} us" \
            "user ${user_op} + sys ${sys_op}" "-" "report" INFO
        ;;
    esac
}

case_oltp() {
    local d s
    tmp_under d /var/tmp oltp
    tmp_under s /dev/shm oltp
    bk "$WORK/oltp.json" oltp --target "$d" --set "shadows=200,runtime=${OLTP_SECS}s"
    oltp_rows "ext4, usermode=200000 (default)" "$WORK/oltp.json" "$OLTP_SECS"
    bk "$WORK/oltp-u0.json" oltp --target "$d" --set "shadows=200,usermode=0,runtime=${OLTP0_SECS}s"
    oltp_rows "ext4, usermode=0" "$WORK/oltp-u0.json" "$OLTP0_SECS" user
    bk "$WORK/oltp-shm.json" oltp --target "$s" --set "shadows=200,usermode=0,runtime=${OLTP0_SECS}s"
    oltp_rows "tmpfs, usermode=0" "$WORK/oltp-shm.json" "$OLTP0_SECS" all
    rm -rf -- "$d" "$s"
}
