#!/usr/bin/env bash
# Re-runs the published studies (docs/studies) and keeps their records in the repository:
# every study of studies/ that a write-up quotes, one `bakeoff compare` each, on a quiet machine
# (the disturbed-run rule on: docs/verdicts.md), its records gzipped into
# docs/studies/records/<study>/ with the command, commit, build and machine that produced
# them (PROVENANCE). The write-ups' tables are `bakeoff report` over those records
# (crates/bakeoff/tests/generated_docs.rs): after a re-run, rewrite them with
#   BAKEOFF_WRITE_DOCS=1 cargo test -p bakeoff --test generated_docs
# and review the diff.
#
#   bash scripts/reproduce-seeds.sh --dry-run        # every study, checked, with its time
#   sudo bash scripts/reproduce-seeds.sh             # all of them (hours), one after another
#   sudo bash scripts/reproduce-seeds.sh seed000-asm-zfs-ufs seed002-tpch   # some
#
# Run it with nothing else on the machine (no builds, tests or other benchmarks): runs that
# other work disturbs are run again, and a study the machine never lets settle spends its
# redos and keeps the runs marked. A study's results directory (results/<study>) is kept, so
# an interrupted one continues with --resume by running this again.
set -uo pipefail
cd "$(dirname "$0")/.."
# The studies a write-up quotes, in the order of the seeds.
studies=(
    seed000-asm-zfs-ufs
    seed000-writers
    seed001-build
    seed002-tpch
    seed002-sqlite-pagesize
    seed002-zfs-sweep
    seed003-oltp-raid10
    seed004-fileserving
    seed004-tpcc
    seed004-tpcc-rate
    innodb-doublewrite
    innodb-doublewrite-risk
    fullpage-risk
)
dry_run=0
chosen=()
for arg in "$@"; do
    case "$arg" in
    --dry-run) dry_run=1 ;;
    -h | --help)
        sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "reproduce-seeds: unknown option $arg (--dry-run, or study names)" >&2
        exit 2
        ;;
    *)
        [ -f "studies/$arg.toml" ] || {
            echo "reproduce-seeds: no study studies/$arg.toml (the studies: ${studies[*]})" >&2
            exit 2
        }
        chosen+=("$arg")
        ;;
    esac
done
[ "${#chosen[@]}" -gt 0 ] || chosen=("${studies[@]}")
cargo build --release -q -p bakeoff || exit $?
bakeoff=$PWD/target/release/bakeoff
# Every study is checked before any runs: a mistake in the last is found before hours are spent.
failed=0
for study in "${chosen[@]}"; do
    check=(compare --study "studies/$study.toml" --out "results/$study" --dry-run)
    [ -e "results/$study/study.json" ] && check+=(--resume)
    out=$("$bakeoff" "${check[@]}" 2>&1)
    code=$?
    time=$(grep -m1 '^estimated time:' <<<"$out" || echo "estimated time: ?")
    printf '%-26s %s\n' "$study" "${time#estimated time: }"
    if [ "$code" -ne 0 ]; then
        printf '%s\n' "$out" | sed 's/^/    /' >&2
        failed=1
    fi
done
[ "$failed" -eq 0 ] || { echo "reproduce-seeds: a study does not pass --dry-run" >&2; exit 2; }
[ "$dry_run" -eq 0 ] || exit 0
commit=$(git describe --always --dirty --abbrev=12)
# What of the build was not committed: a -dirty commit whose changes are docs or scripts built
# the same binary as the commit.
uncommitted=$(git status --porcelain -- crates Cargo.toml Cargo.lock | awk '{print $2}' | tr '\n' ' ')
mkdir -p results || exit $?
for study in "${chosen[@]}"; do
    results="results/$study"
    args=(compare --study "studies/$study.toml" --out "$results" --quiet-wait=10m)
    [ -e "$results/study.json" ] && args+=(--resume)
    echo "reproduce-seeds: $study: bakeoff ${args[*]}" >&2
    started=$(date -u +%FT%TZ)
    "$bakeoff" "${args[@]}" >"$results.txt" 2>"$results.err"
    code=$?
    [ "$code" -le 1 ] || { echo "reproduce-seeds: $study failed (exit $code): $results.err" >&2; exit "$code"; }
    # A run that never started (exit 1 is also "a cell failed") leaves no study record.
    [ -e "$results/study.json" ] || { echo "reproduce-seeds: $study left no $results/study.json: $results.err" >&2; exit 1; }
    keep="docs/studies/records/$study"
    rm -rf "$keep"
    mkdir -p "$keep"
    (cd "$results" && find . -name '*.json' -not -name '*.failed.json' \
        -exec cp --parents {} "$OLDPWD/$keep" \;)
    cp "$results.txt" "$keep/compare.txt"
    cp "$results.err" "$keep/compare.err"
    {
        echo "study: studies/$study.toml"
        echo "command: bakeoff ${args[*]}"
        echo "started: $started"
        echo "ended: $(date -u +%FT%TZ)"
        echo "commit: $commit"
        echo "uncommitted in the build: ${uncommitted:-nothing}"
        echo "build: $("$bakeoff" --version) (release)"
        echo "machine: $(uname -srm), $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB"
    } >"$keep/PROVENANCE"
    find "$keep" -type f \( -name '*.json' -o -name compare.err \) -exec gzip -9 {} +
    echo "reproduce-seeds: $study: records in $keep ($(du -sh "$keep" | cut -f1))" >&2
done
echo "reproduce-seeds: done; now BAKEOFF_WRITE_DOCS=1 cargo test -p bakeoff --test generated_docs" >&2
