#!/usr/bin/env bash
# Builds bakeoff (release) and installs it system-wide with its shell completions and man
# pages, all generated from the command-line definitions, and docs/ (which the pages name). Run it as root, or as a user with
# sudo: cargo builds as you, and only the copying runs with sudo, only when you are not root.
#   PREFIX=/usr/local (default)   DESTDIR=/some/staging/root (default: none)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${PREFIX:-/usr/local}
root=${DESTDIR:-}
command -v cargo >/dev/null || { echo "install: cargo not found: run scripts/setup.sh and install Rust (rustup)" >&2; exit 1; }
cargo build --release --locked -p bakeoff
bin="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/bakeoff"
[ -x "$bin" ] || { echo "install: $bin was not built" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/man1"
"$bin" completions bash >"$stage/bakeoff.bash"
"$bin" completions zsh >"$stage/_bakeoff"
"$bin" completions fish >"$stage/bakeoff.fish"
"$bin" man --out-dir "$stage/man1"
as_root() {
    if [ "$(id -u)" -eq 0 ] || [ -n "$root" ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "install: copying into $prefix needs root: run this as root (sudo is not installed)" >&2
        exit 1
    fi
}
as_root install -D -m 755 "$bin" "$root$prefix/bin/bakeoff"
as_root install -D -m 644 "$stage/bakeoff.bash" "$root$prefix/share/bash-completion/completions/bakeoff"
as_root install -D -m 644 "$stage/_bakeoff" "$root$prefix/share/zsh/site-functions/_bakeoff"
as_root install -D -m 644 "$stage/bakeoff.fish" "$root$prefix/share/fish/vendor_completions.d/bakeoff.fish"
for page in "$stage"/man1/*.1; do
    as_root install -D -m 644 "$page" "$root$prefix/share/man/man1/$(basename "$page")"
done
(cd docs && find . -name '*.md' -print) | while read -r doc; do
    as_root install -D -m 644 "docs/$doc" "$root$prefix/share/doc/bakeoff/$doc"
done
echo "install: bakeoff, completions (bash, zsh, fish), $(ls "$stage/man1" | wc -l) man pages and docs/ in $root$prefix" >&2
