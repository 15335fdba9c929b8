#!/usr/bin/env bash
# Prepares the source repository the built-in `build` recipe clones (docs/phases.md): this
# project's sources at a fixed commit (below) plus every dependency's sources from `cargo vendor`, with a
# .cargo/config.toml that makes cargo build from them offline, committed into a bare git
# repository. Thousands of small text files: what a nightly build's bringover copies.
#
#   bash scripts/build-src.sh [DEST]      # default /var/lib/bakeoff/build-src.git
#
# The tree is pinned so that the recipe (seed 001's workload) builds the same sources however
# far HEAD has moved: BAKEOFF_BUILD_SRC_REV names another commit (HEAD: today's tree, which then
# changes with every commit). Idempotent: a DEST that holds the same commit is left as it is;
# one that holds another is prepared again. Needs cargo and git, this repository's history
# (not a shallow clone), and the crates in cargo's cache or a reachable crates.io (once; the
# recipe itself runs offline).
set -euo pipefail
dest=${1:-/var/lib/bakeoff/build-src.git}
here=$(cd "$(dirname "$0")/.." && pwd)
# bakeoff on 2026-11-28: 21,582 files, 450 MB with its vendored dependencies. Changing it changes the build recipe's workload: say so in docs/phases.md.
rev=${BAKEOFF_BUILD_SRC_REV:-f4681e755ec8c94f4b968c63fc7d8751dc32a0a4}
if ! commit=$(git -C "$here" rev-parse -q --verify "$rev^{commit}"); then
    # A shallow clone: build today's tree rather than fail the set-up, and say so loudly (its
    # commit message then names HEAD's commit, so a study's provenance shows it).
    echo "build-src: warning: commit $rev is not in $here (a shallow clone? \`git fetch" \
        "--unshallow\` and run this again): preparing HEAD instead, which is not the pinned" \
        "workload" >&2
    commit=$(git -C "$here" rev-parse HEAD)
fi
commit=${commit:0:12}
if [ -d "$dest" ] && git --git-dir="$dest" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    held=$(git --git-dir="$dest" log -1 --format=%s)
    if [ "$held" = "bakeoff $commit with its dependencies vendored" ]; then
        echo "build-src: $dest is ready ($held)" >&2
        exit 0
    fi
    echo "build-src: $dest holds '$held', not bakeoff $commit: preparing it again" >&2
fi
command -v cargo >/dev/null || { echo "build-src: cargo not found: install Rust (rustup) first" >&2; exit 1; }
command -v git >/dev/null || { echo "build-src: git not found: apt-get install git" >&2; exit 1; }
work=$(mktemp -d /var/tmp/bakeoff-build-src.XXXXXX)
trap 'rm -rf "$work"' EXIT
src="$work/src"
mkdir -p "$src"
git -C "$here" archive "$commit" | tar -x -C "$src"
mkdir -p "$src/.cargo"
# cargo vendor prints the source replacement that points cargo at vendor/.
(cd "$src" && cargo vendor --locked --versioned-dirs vendor) >"$src/.cargo/config.toml"
cat >>"$src/.cargo/config.toml" <<'EOF'

[net]
offline = true
EOF
# Vendored files must reach the clone byte for byte (cargo checks their checksums): -f adds
# what the crates' own .gitignore files would leave out.
git -C "$src" init -q -b main
git -C "$src" -c core.autocrlf=false add -A -f .
git -C "$src" -c user.name=bakeoff -c user.email=bakeoff@localhost \
    commit -q -m "bakeoff $commit with its dependencies vendored"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest.tmp"
git clone -q --bare "$src" "$dest.tmp"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
files=$(git --git-dir="$dest" ls-tree -r HEAD | wc -l)
echo "build-src: $dest holds bakeoff $commit and its vendored dependencies ($files files)" >&2
