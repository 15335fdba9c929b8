#!/usr/bin/env bash
# Every test of the workspace, in two lanes at once. The database lane runs bakeoff-db's tests
# and then the README tour's; the other lane runs everything else. Tests that measure (CPU,
# latency, device counters, the page cache) or touch what a machine has one of take the machine
# alone, and the other lane waits for them; tests that only check outcomes share it
# (bakeoff_testkit::turn, CONTRIBUTING.md "Tests"). `cargo test --workspace` runs the same tests
# in one lane. Arguments go to every `cargo test` (e.g. `-- --nocapture`). The database lane's
# output follows the other's.
set -uo pipefail
cd "$(dirname "$0")/.."
# bakeoff's test files that run in the database lane (all their turns are shared).
db_lane=(readme_tour)
rest=()
for file in crates/bakeoff/tests/*.rs; do
    name=$(basename "$file" .rs)
    [[ " ${db_lane[*]} " == *" $name "* ]] || rest+=(--test "$name")
done
tour=()
for name in "${db_lane[@]}"; do tour+=(--test "$name"); done
cargo test --workspace --no-run || exit $?
log=$(mktemp -t bakeoff-db-lane.XXXXXX)
(
    cargo test -p bakeoff-db "$@"
    db=$?
    cargo test -p bakeoff "${tour[@]}" "$@"
    tour=$?
    [ "$db" -eq 0 ] && [ "$tour" -eq 0 ]
) >"$log" 2>&1 &
lane=$!
trap 'kill "$lane" 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 130' INT TERM
cargo test -p bakeoff --bins "${rest[@]}" "$@"
bakeoff=$?
cargo test --workspace --exclude bakeoff-db --exclude bakeoff "$@"
others=$?
wait "$lane"
db=$?
echo "--- the database lane (bakeoff-db's tests, then bakeoff's ${db_lane[*]}) ---"
cat "$log"
if [ "$bakeoff" -ne 0 ] || [ "$others" -ne 0 ] || [ "$db" -ne 0 ]; then
    echo "scripts/test.sh: failed (bakeoff: exit $bakeoff; other crates: exit $others;" \
        "the database lane: exit $db)" >&2
    exit 1
fi
