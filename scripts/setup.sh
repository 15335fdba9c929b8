#!/usr/bin/env bash
# Installs the system packages bakeoff and its tests need (Debian/Ubuntu, as root).
# The Rust toolchain (cargo) must already be installed.
set -euo pipefail
packages=(fio e2fsprogs xfsprogs btrfs-progs util-linux zfs-fuse jq)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (rustup) first" >&2; exit 1; }
echo "setup: ok ($(fio --version), $(cargo --version))" >&2
