#!/usr/bin/env bash
# Every test of the workspace, in two lanes at once. The database lane runs bakeoff-db's tests
# and then bakeoff's test files whose turns are mostly shared (db_lane); the other lane runs
# everything else. Tests that measure (CPU, latency, device counters, the page cache) or touch
# what a machine has one of take the machine alone, and the other lane waits for them; tests
# that only check outcomes share it (bakeoff_testkit::turn, CONTRIBUTING.md "Tests"). A test that compares speeds runs after both
# lanes (a lane's tests that need no turn could run beside it). `cargo test --workspace` runs
# the same tests in one lane. Arguments go to every `cargo test` (e.g. `-- --nocapture`); the
# database lane's output follows the other's.
set -uo pipefail
cd "$(dirname "$0")/.."
# bakeoff's test files that run in the database lane: long tests whose turns are mostly shared,
# so they overlap lane A's shared tests (a test's turn still orders it against every other).
db_lane=(readme_tour tpch mariadb durability durability_blocks limits fileserving databases campaign)
# Tests that compare speeds, as `package test-file test`: run last, with nothing beside them.
last=("bakeoff-db pg_pgbench a_server_bakeoff_started_performs_as_one_started_by_hand")
cargo_args=()
test_args=()
after_dashes=0
for arg in "$@"; do
    if [ "$after_dashes" -eq 0 ] && [ "$arg" = "--" ]; then
        after_dashes=1
    elif [ "$after_dashes" -eq 0 ]; then
        cargo_args+=("$arg")
    else
        test_args+=("$arg")
    fi
done
skip=()
for entry in "${last[@]}"; do
    read -r _ _ name <<<"$entry"
    skip+=(--skip "$name")
done
rest=()
for file in crates/bakeoff/tests/*.rs; do
    name=$(basename "$file" .rs)
    [[ " ${db_lane[*]} " == *" $name "* ]] || rest+=(--test "$name")
done
tour=()
for name in "${db_lane[@]}"; do tour+=(--test "$name"); done
# Build what each `cargo test` below runs, first: cargo resolves features by the packages a
# command selects, so `-p bakeoff-db`, `-p bakeoff` and the other crates are three builds of
# the shared crates (a `--workspace` build would be a fourth that none of them uses), and
# building them here keeps a lane from compiling while the other lane's tests run.
cargo test -p bakeoff-db --no-run "${cargo_args[@]}" || exit $?
cargo test -p bakeoff --no-run "${cargo_args[@]}" || exit $?
cargo test --workspace --exclude bakeoff-db --exclude bakeoff --no-run "${cargo_args[@]}" || exit $?
log=$(mktemp -t bakeoff-db-lane.XXXXXX)
started=$(date +%s)
(
    cargo test -p bakeoff-db "${cargo_args[@]}" -- "${test_args[@]}" "${skip[@]}"
    db=$?
    cargo test -p bakeoff "${tour[@]}" "${cargo_args[@]}" -- "${test_args[@]}"
    tour=$?
    echo "scripts/test.sh: the database lane took $(($(date +%s) - started)) s"
    [ "$db" -eq 0 ] && [ "$tour" -eq 0 ]
) >"$log" 2>&1 &
lane=$!
trap 'kill "$lane" 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 130' INT TERM
cargo test -p bakeoff --bins "${rest[@]}" "${cargo_args[@]}" -- "${test_args[@]}"
bakeoff=$?
cargo test --workspace --exclude bakeoff-db --exclude bakeoff "${cargo_args[@]}" -- "${test_args[@]}"
others=$?
echo "scripts/test.sh: the other lane took $(($(date +%s) - started)) s"
wait "$lane"
db=$?
echo "--- the database lane (bakeoff-db's tests, then bakeoff's ${db_lane[*]}) ---"
cat "$log"
echo "--- the comparisons of speed, alone ---"
alone=0
for entry in "${last[@]}"; do
    read -r package file name <<<"$entry"
    cargo test -p "$package" --test "$file" "${cargo_args[@]}" -- "${test_args[@]}" --exact "$name" ||
        alone=1
done
if [ "$bakeoff" -ne 0 ] || [ "$others" -ne 0 ] || [ "$db" -ne 0 ] || [ "$alone" -ne 0 ]; then
    echo "scripts/test.sh: failed (bakeoff: exit $bakeoff; other crates: exit $others;" \
        "the database lane: exit $db; the comparisons of speed: exit $alone)" >&2
    exit 1
fi
