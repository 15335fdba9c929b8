#!/usr/bin/env bash
# Every test of the workspace, in three lanes at once. The database lane runs bakeoff-db's tests
# and then bakeoff's test files listed in db_lane; the mixed lane runs the other crates' tests
# and then bakeoff's files listed in mixed_lane; the bakeoff lane runs bakeoff's other test
# files. Tests that measure (CPU, latency, device counters, the page cache) or touch what a
# machine has one of take the machine alone, and the other lanes wait for them; tests that only
# check outcomes share it (bakeoff_testkit::turn, CONTRIBUTING.md "Tests"), and most of a
# shared test's time is a fixed window or a server's start, so three lanes overlap more of them
# than two on two CPUs. A test that compares speeds runs after the lanes. `cargo test
# --workspace` runs the same tests in one lane. Arguments go to every `cargo test` (e.g. `--
# --nocapture`); the other lanes' output follows the bakeoff lane's. Every lane runs all its test
# binaries (--no-fail-fast): one failure does not hide the next.
set -uo pipefail
cd "$(dirname "$0")/.."
# bakeoff's test files for the database and mixed lanes: long tests whose turns are mostly
# shared, split so the three lanes take about as long (the last CI's turn log, printed by
# .ci/run, says what each took).
db_lane=(tpch mariadb durability durability_blocks campaign)
mixed_lane=(readme_tour limits fileserving databases)
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
    [[ " ${db_lane[*]} ${mixed_lane[*]} " == *" $name "* ]] || rest+=(--test "$name")
done
db_tests=()
for name in "${db_lane[@]}"; do db_tests+=(--test "$name"); done
mixed_tests=()
for name in "${mixed_lane[@]}"; do mixed_tests+=(--test "$name"); done
# Build what each `cargo test` below runs, first: cargo resolves features by the packages a
# command selects, so `-p bakeoff-db`, `-p bakeoff` and the other crates are three builds of
# the shared crates (a `--workspace` build would be a fourth that none of them uses), and
# building them here keeps a lane from compiling while another lane's tests run.
cargo test -p bakeoff-db --no-run "${cargo_args[@]}" || exit $?
cargo test -p bakeoff --no-run "${cargo_args[@]}" || exit $?
cargo test --workspace --exclude bakeoff-db --exclude bakeoff --no-run "${cargo_args[@]}" || exit $?
db_log=$(mktemp -t bakeoff-db-lane.XXXXXX)
mixed_log=$(mktemp -t bakeoff-mixed-lane.XXXXXX)
started=$(date +%s)
(
    cargo test -p bakeoff-db --no-fail-fast "${cargo_args[@]}" -- "${test_args[@]}" "${skip[@]}"
    db=$?
    cargo test -p bakeoff --no-fail-fast "${db_tests[@]}" "${cargo_args[@]}" -- "${test_args[@]}"
    files=$?
    echo "scripts/test.sh: the database lane took $(($(date +%s) - started)) s"
    [ "$db" -eq 0 ] && [ "$files" -eq 0 ]
) >"$db_log" 2>&1 &
db_lane_pid=$!
(
    cargo test --workspace --exclude bakeoff-db --exclude bakeoff --no-fail-fast "${cargo_args[@]}" \
        -- "${test_args[@]}"
    others=$?
    cargo test -p bakeoff --no-fail-fast "${mixed_tests[@]}" "${cargo_args[@]}" -- "${test_args[@]}"
    files=$?
    echo "scripts/test.sh: the mixed lane took $(($(date +%s) - started)) s"
    [ "$others" -eq 0 ] && [ "$files" -eq 0 ]
) >"$mixed_log" 2>&1 &
mixed_lane_pid=$!
trap 'kill "$db_lane_pid" "$mixed_lane_pid" 2>/dev/null; rm -f "$db_log" "$mixed_log"' EXIT
trap 'exit 130' INT TERM
cargo test -p bakeoff --no-fail-fast --bins "${rest[@]}" "${cargo_args[@]}" -- "${test_args[@]}"
bakeoff=$?
echo "scripts/test.sh: the bakeoff lane took $(($(date +%s) - started)) s"
wait "$mixed_lane_pid"
mixed=$?
wait "$db_lane_pid"
db=$?
echo "--- the mixed lane (the other crates' tests, then bakeoff's ${mixed_lane[*]}) ---"
cat "$mixed_log"
echo "--- the database lane (bakeoff-db's tests, then bakeoff's ${db_lane[*]}) ---"
cat "$db_log"
echo "--- the comparisons of speed, alone ---"
alone=0
for entry in "${last[@]}"; do
    read -r package file name <<<"$entry"
    cargo test -p "$package" --test "$file" "${cargo_args[@]}" -- "${test_args[@]}" --exact "$name" ||
        alone=1
done
if [ "$bakeoff" -ne 0 ] || [ "$mixed" -ne 0 ] || [ "$db" -ne 0 ] || [ "$alone" -ne 0 ]; then
    echo "scripts/test.sh: failed (the bakeoff lane: exit $bakeoff; the mixed lane: exit $mixed;" \
        "the database lane: exit $db; the comparisons of speed: exit $alone)" >&2
    exit 1
fi
