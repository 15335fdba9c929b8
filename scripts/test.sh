#!/usr/bin/env bash
# Every test of the workspace, in two lanes at once: the database crate's tests (bakeoff-db)
# beside everything else. On a 2-core machine most of a database test is waiting for a server,
# so the lanes overlap well; tests that measure take the machine alone and the other lane waits
# for them (bakeoff_testkit::turn, CONTRIBUTING.md "Tests"). Arguments go to both `cargo test`s
# (e.g. `-- --nocapture`). The database lane's output follows the other's.
set -uo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --no-run || exit $?
log=$(mktemp -t bakeoff-db-lane.XXXXXX)
cargo test -p bakeoff-db "$@" >"$log" 2>&1 &
lane=$!
trap 'kill "$lane" 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 130' INT TERM
cargo test --workspace --exclude bakeoff-db "$@"
rest=$?
wait "$lane"
db=$?
echo "--- the database lane (cargo test -p bakeoff-db) ---"
cat "$log"
if [ "$rest" -ne 0 ] || [ "$db" -ne 0 ]; then
    echo "scripts/test.sh: failed (everything else: exit $rest; bakeoff-db: exit $db)" >&2
    exit 1
fi
