#!/bin/bash
# The doublewrite study's risk column: studies/innodb-doublewrite-risk.toml, 6 cells, 40 crash
# states each. Quiet machine, debug build of the commit in /work/main. The study's records
# (study.json and each run's record) are copied here, gzipped, with the compare's output.
set -u
B=${B:-/work/main/target/debug/bakeoff}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/work/results/innodb-doublewrite-risk}
rm -rf "$out"
echo "$(date -u +%FT%TZ) start $(git -C /work/main rev-parse --short HEAD)" | tee "$here/log.txt"
"$B" compare --study /work/main/studies/innodb-doublewrite-risk.toml --out "$out" \
    > "$here/compare.txt" 2> "$here/compare.err"
echo "$(date -u +%FT%TZ) done rc=$?" | tee -a "$here/log.txt"
rm -rf "$here/runs"
cp -r "$out/runs" "$here/runs"
cp "$out/study.json" "$here/study.json"
find "$here/runs" "$here/study.json" -name '*.json' -exec gzip -f {} +
du -sh "$here" | tee -a "$here/log.txt"
