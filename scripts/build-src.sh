#!/usr/bin/env bash
# Prepares the source repository the built-in `build` recipe clones (docs/phases.md): this
# project's sources at HEAD plus every dependency's sources from `cargo vendor`, with a
# .cargo/config.toml that makes cargo build from them offline, committed into a bare git
# repository. Thousands of small text files: what a nightly build's bringover copies.
#
#   bash scripts/build-src.sh [DEST]      # default /var/lib/bakeoff/build-src.git
#
# Idempotent: an existing DEST is left as it is (remove it to prepare it again). Needs cargo
# and git, and the crates in cargo's cache or a reachable crates.io (once; the recipe itself
# runs offline).
set -euo pipefail
dest=${1:-/var/lib/bakeoff/build-src.git}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -d "$dest" ] && git --git-dir="$dest" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    echo "build-src: $dest is ready ($(git --git-dir="$dest" log -1 --format=%s))" >&2
    exit 0
fi
command -v cargo >/dev/null || { echo "build-src: cargo not found: install Rust (rustup) first" >&2; exit 1; }
command -v git >/dev/null || { echo "build-src: git not found: apt-get install git" >&2; exit 1; }
work=$(mktemp -d /var/tmp/bakeoff-build-src.XXXXXX)
trap 'rm -rf "$work"' EXIT
src="$work/src"
mkdir -p "$src"
commit=$(git -C "$here" rev-parse --short=12 HEAD)
git -C "$here" archive HEAD | tar -x -C "$src"
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
mv "$dest.tmp" "$dest"
files=$(git --git-dir="$dest" ls-tree -r HEAD | wc -l)
echo "build-src: $dest holds bakeoff $commit and its vendored dependencies ($files files)" >&2
