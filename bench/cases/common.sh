# shellcheck shell=bash
# State shared between cases: the 1 GiB dataset on /dev/shm used by psync, uring and memory.

SHM_DS=

# shm_dataset: lays out (once) a 1 GiB bakeoff dataset in a temp dir under /dev/shm and sets
# SHM_DS to that dir; its file is $SHM_DS/bakeoff-data.0 (fio and pread_loop read it too).
shm_dataset() {
    [[ -n $SHM_DS ]] && return 0
    tmp_under SHM_DS /dev/shm shm
    log "laying out 1 GiB in $SHM_DS"
    bk "$WORK/shm-layout.json" randread --target "$SHM_DS" --set bs=4k,size=1g,runtime=100ms
    [[ $(stat -c %s "$SHM_DS/bakeoff-data.0") == 1073741824 ]] || die "unexpected layout in $SHM_DS"
}

# detail TEXT: a line for the per-run details printed after the table.
detail() { printf '%s\n' "$*" >>"$WORK/details.txt"; log "$*"; }

# rotate R ITEMS...: the items rotated left by (R-1), so each tool takes each position in turn.
rotate() {
    local r=$1
    shift
    local a=("$@") n=$# i
    for ((i = 0; i < n; i++)); do printf '%s\n' "${a[((i + r - 1) % n)]}"; done
}

# pair_ratios "A1 A2 ..." "B1 B2 ...": the per-round ratios A_i / B_i.
pair_ratios() {
    local -a a b
    read -ra a <<<"$1"
    read -ra b <<<"$2"
    local i out=()
    for ((i = 0; i < ${#a[@]}; i++)); do out+=("$(ratio "${a[i]}" "${b[i]}")"); done
    printf '%s\n' "${out[*]}"
}
