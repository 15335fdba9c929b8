# shellcheck shell=bash
# Helpers shared by bench/run-all and bench/cases/*.sh. Source it; do not run it.
#
# Everything a benchmark creates (temp dirs, loop devices, mounts) is registered here and
# removed by bench_cleanup, which bench_init installs as the EXIT/INT/TERM trap.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
BAKEOFF=${CARGO_TARGET_DIR:-$REPO/target}/release/bakeoff

# Cleanup registries, undone in reverse order: mounts, then loops, then paths.
CLEAN_MOUNTS=()
CLEAN_LOOPS=()
CLEAN_PATHS=()
WORK=
RESULTS=

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

bench_cleanup() {
    local rc=$? i
    set +e
    trap - EXIT INT TERM
    for ((i = ${#CLEAN_MOUNTS[@]} - 1; i >= 0; i--)); do
        local m=${CLEAN_MOUNTS[i]}
        if mountpoint -q "$m" 2>/dev/null; then
            umount "$m" 2>/dev/null || { sleep 1; umount "$m" 2>/dev/null; } || umount -l "$m"
        fi
    done
    for ((i = ${#CLEAN_LOOPS[@]} - 1; i >= 0; i--)); do
        # Entries are DEV|BACKING: detach only if DEV still has our backing file (a loop
        # number freed earlier may since have been taken by someone else).
        local l=${CLEAN_LOOPS[i]%%|*} back=${CLEAN_LOOPS[i]#*|}
        [[ $(losetup -n -O BACK-FILE "$l" 2>/dev/null | sed 's/ *$//') == "$back" ]] && losetup -d "$l"
    done
    for ((i = ${#CLEAN_PATHS[@]} - 1; i >= 0; i--)); do
        rm -rf -- "${CLEAN_PATHS[i]}"
    done
    CLEAN_MOUNTS=() CLEAN_LOOPS=() CLEAN_PATHS=()
    exit "$rc"
}

on_signal() { log "interrupted: cleaning up"; exit 130; }

# bench_init: checks tools, creates the work dir, installs the cleanup trap.
bench_init() {
    trap bench_cleanup EXIT
    trap on_signal INT TERM
    local t
    for t in cargo fio gcc jq awk; do
        command -v "$t" >/dev/null || die "$t is required"
    done
    WORK=$(mktemp -d /tmp/bakeoff-bench.XXXXXX)
    CLEAN_PATHS+=("$WORK")
    RESULTS=$WORK/results.tsv
    : >"$RESULTS"
}

# build_bakeoff: the release binary this run measures.
build_bakeoff() {
    log "building release bakeoff"
    (cd "$REPO" && cargo build --release --quiet) >&2
    [[ -x $BAKEOFF ]] || die "no binary at $BAKEOFF"
}

# build_pread_loop: compiles bench/pread_loop.c into the work dir; prints the binary path.
build_pread_loop() {
    local out=$WORK/pread_loop
    [[ -x $out ]] || gcc -O2 -o "$out" "$BENCH_DIR/pread_loop.c" -lpthread
    printf '%s\n' "$out"
}

# tmp_under VAR PARENT NAME: sets VAR to a new temp dir under PARENT, removed at exit.
# (Not a command substitution: the registration must happen in this shell.)
tmp_under() {
    local _tmp_new
    _tmp_new=$(mktemp -d "$2/bakeoff-bench-$3.XXXXXX") || die "mktemp under $2"
    CLEAN_PATHS+=("$_tmp_new")
    printf -v "$1" '%s' "$_tmp_new"
}

# attach_loop VAR IMAGE: sets VAR to a new loop device (direct I/O) backed by IMAGE.
attach_loop() {
    local _loop_new
    _loop_new=$(losetup --find --show --direct-io=on "$2") || die "losetup $2 failed"
    CLEAN_LOOPS+=("$_loop_new|$(realpath "$2")")
    printf -v "$1" '%s' "$_loop_new"
}

# remove_layout DIR: bakeoff's data files and manifest in DIR.
remove_layout() { rm -f -- "$1"/bakeoff-*.* "$1/.bakeoff-dataset.json"; }

# bk OUT.json ARGS...: bakeoff run ARGS --json OUT --quiet; the terminal summary goes to
# OUT.txt. Fails on a non-zero exit or a status other than "completed".
bk() {
    local out=$1
    shift
    if ! "$BAKEOFF" run "$@" --json "$out" --quiet >"${out%.json}.txt" 2>&1; then
        cat "${out%.json}.txt" >&2
        die "bakeoff run $* failed"
    fi
    [[ $(jq -r .status "$out") == completed ]] || die "bakeoff run $*: status $(jq -r .status "$out")"
}

# fio_json OUT.json ARGS...: fio ARGS --output-format=json --output=OUT.
fio_json() {
    local out=$1
    shift
    fio "$@" --output-format=json --output="$out" >/dev/null || die "fio $* failed"
}

# j FILE FILTER: one value from a JSON file (raw).
j() { jq -r "$2" "$1"; }

# median N...: the median of the numbers.
median() {
    printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1}
        END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2];
              else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# calc EXPR: floating-point arithmetic with awk, printed with %.4g unless FMT is set.
calc() { awk -v fmt="${FMT:-%.4g}" "BEGIN { printf fmt \"\\n\", $1 }"; }

# minmax N...: "MIN–MAX" of the numbers (3 decimals).
minmax() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f–%.3f\n", lo, hi }'; }

# ratio_cell "R1 R2 ...": the median per-round ratio and its spread, for the table.
ratio_cell() {
    local -a rs
    read -ra rs <<<"$1"
    printf '%s (%s)\n' "$(FMT=%.3f calc "$(median "${rs[@]}")")" "$(minmax "${rs[@]}")"
}

# ratio A B: A / B with 3 decimals.
ratio() { FMT=%.3f calc "($1) / ($2)"; }

# ge A B: true if A >= B.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

now_s() { date +%s.%N; }

# human N: 1234567 -> 1,234,567 (integers) for the table.
human() { LC_ALL=C awk -v n="$1" 'BEGIN {
    if (n !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { print n; exit }
    s = sprintf("%.0f", n); neg = s ~ /^-/; if (neg) s = substr(s, 2)
    out = ""; while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    print (neg ? "-" : "") s out }'; }

# result CASE METRIC BAKEOFF REFERENCE RATIO TARGET VERDICT: one row of the final table.
result() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"
    log "result: $1 | $2 | bakeoff $3 | ref $4 | ratio $5 | target $6 | $7"
}

# verdict OK: PASS or FAIL.
verdict() { if "$@"; then echo PASS; else echo FAIL; fi; }

print_table() {
    local header=$'case\tmetric\tbakeoff\treference\tratio\ttarget\tresult'
    {
        printf '%s\n' "$header"
        cat "$RESULTS"
    } | awk -F'\t' '
        { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR; nf = (NF > nf ? NF : nf) }
        END {
            for (r = 1; r <= n; r++) {
                line = ""
                for (i = 1; i <= nf; i++) line = line sprintf("%-" w[i] "s", cell[r, i]) (i < nf ? " | " : "")
                print line
                if (r == 1) { sep = ""; for (i = 1; i <= nf; i++) { s = ""; for (k = 0; k < w[i]; k++) s = s "-"; sep = sep s (i < nf ? "-+-" : "") } print sep }
            }
        }'
}

# diskstats DEV: "reads read_sectors writes write_sectors" of DEV from /proc/diskstats.
diskstats() { awk -v d="$1" '$3 == d { print $4, $6, $8, $10 }' /proc/diskstats; }
