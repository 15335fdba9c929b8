# shellcheck shell=bash
# Case 3: filebench oltp with 200 shadows on this machine's CPUs: how much of the busy CPU is
# bakeoff's process, with the modelled application CPU (usermode hog, default 200000) and
# without it (usermode=0: only the tool's own work and the I/O system calls it makes).

oltp_rows() { # LABEL JSON RUNTIME_SECS [TARGET_US]
    local label=$1 f=$2 share busy rd wr secs tool_us tool_us_op
    share=$(j "$f" .tool.share_of_busy_pct) busy=$(j "$f" .summary.cpu_busy_pct)
    rd=$(j "$f" .summary.read_iops) wr=$(j "$f" .summary.write_iops)
    secs=$(FMT=%.3f calc "$(j "$f" .measured_ns) / 1e9")
    # bakeoff's own CPU (its process, from getrusage over the window) per application operation.
    tool_us=$(j "$f" .cpu.split.tool_us)
    tool_us_op=$(FMT=%.2f calc "$tool_us / ($secs * ($rd + $wr))")
    detail "oltp $label: share_of_busy ${share}% cpu_busy ${busy}% read ${rd}/s write ${wr}/s measured ${secs}s (runtime asked ${3}s) tool_cpu_per_op ${tool_us_op}us cpu split $(jq -c .cpu.split "$f") max_rss $(j "$f" .tool.max_rss_bytes)"
    result "3 oltp 200 shadows" "$label: bakeoff share of busy CPU" "$(FMT=%.1f calc "$share")%" \
        "machine busy $(FMT=%.1f calc "$busy")% of $(nproc) CPUs" "-" "report" INFO
    result "3 oltp 200 shadows" "$label: read / write IOPS" "$(human "$rd") / $(human "$wr")" "-" "-" "report" INFO
    if [[ -n ${4:-} ]]; then
        result "3 oltp 200 shadows" "$label: bakeoff CPU per app op" "${tool_us_op} us" "-" "-" \
            "<= $4 us" "$(verdict ge "$4" "$tool_us_op")"
    else
        result "3 oltp 200 shadows" "$label: bakeoff CPU per app op" "${tool_us_op} us" "-" "-" "report" INFO
    fi
}

case_oltp() {
    local d
    tmp_under d /var/tmp oltp
    bk "$WORK/oltp.json" oltp --target "$d" --set "shadows=200,runtime=${OLTP_SECS}s"
    oltp_rows "usermode=200000 (default)" "$WORK/oltp.json" "$OLTP_SECS"
    bk "$WORK/oltp-u0.json" oltp --target "$d" --set "shadows=200,usermode=0,runtime=${OLTP0_SECS}s"
    oltp_rows "usermode=0" "$WORK/oltp-u0.json" "$OLTP0_SECS" 10
    rm -rf -- "$d"
}
