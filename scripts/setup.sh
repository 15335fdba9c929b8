#!/usr/bin/env bash
# Installs the system packages bakeoff and its tests need (Debian/Ubuntu). Run it as root, or as
# a user with sudo: only the package installation runs with sudo, and only when not root.
# The Rust toolchain (cargo) must already be installed for the user who builds.
set -euo pipefail
packages=(fio e2fsprogs xfsprogs btrfs-progs btrfs-compsize util-linux fdisk zfs-fuse jq postgresql git)
# The managed MariaDB server and sysbench against it (crates/db/src/mariadb, sysbench.rs).
packages+=(mariadb-server sysbench)
# The kernel-work tracer (crates/probe/src/kwork) is compiled by clang and linked with libelf
# and zlib.
packages+=(clang libelf-dev zlib1g-dev pkg-config linux-libc-dev)
# The write log under --crash-states (crates/stack/src/writelog) needs no package: fuser mounts
# with mount(2) as root (no libfuse to link, no fusermount), and the kernel's fuse module gives
# /dev/fuse.
# `run --mpi` (cargo feature mpi): OpenMPI, and libclang for the bindings rsmpi generates.
packages+=(openmpi-bin libopenmpi-dev libclang-dev clang)
# Its test across hosts makes them of network namespaces (ip) with hostnames of their own.
packages+=(iproute2 hostname)
# Headless Chromium renders the HTML report in tests/html.rs: Debian's headless shell where
# the archive has it (Debian 12), else the full browser.
if apt-cache show chromium-headless-shell >/dev/null 2>&1; then
    packages+=(chromium-headless-shell)
else
    packages+=(chromium)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "setup: installing packages needs root: run this as root (sudo is not installed)" >&2
        exit 1
    fi
}
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (rustup) first" >&2; exit 1; }
# The sources the built-in `build` recipe clones (once; offline afterwards): docs/phases.md.
build_src=${BAKEOFF_BUILD_SRC:-/var/lib/bakeoff/build-src.git}
parent=$(dirname "$build_src")
if [ "$(id -u)" -eq 0 ] || [ -w "$parent" ] || { [ ! -e "$parent" ] && [ -w "$(dirname "$parent")" ]; }; then
    bash "$(dirname "$0")/build-src.sh" "$build_src"
else
    echo "setup: $parent is not writable: run this as root to prepare $build_src for the build" \
         "recipe (or set BAKEOFF_BUILD_SRC to a writable path, and run the recipe with" \
         "--set BUILD_SRC=that-path)" >&2
fi
echo "setup: ok ($(fio --version), $(cargo --version))" >&2
