#!/bin/bash
# Does a file system make a rename durable once fsync of the file and of its directory return?
# PostgreSQL's durable_rename() relies on it (replorigin_checkpoint, pg_control's neighbours).
# For each file system: three rounds of "create new.tmp, write 16 bytes, fsync it, rename it
# to new, fsync new, fsync the directory", each followed at once by a copy of the device read
# with O_DIRECT (what a power cut right then would leave); then each copy is brought back
# (ext4: mounted, its journal replayed; ZFS: the pool imported, its intent log replayed) and
# listed. A durable rename leaves `new` holding that round's bytes and no new.tmp.
# Usage (root; zfs-fuse installed and no zfs-fuse running): bash rename.sh ext4|zfs
set -euo pipefail
fs=${1:?ext4 or zfs}
work=$(mktemp -d /var/tmp/rename-XXXXXX)
loops=()
cleanup() {
    set +e
    if [ "$fs" = zfs ]; then
        zpool export rename_pool 2>/dev/null || { sleep 3; zpool export rename_pool 2>/dev/null; }
        zpool destroy rename_pool 2>/dev/null
        [ -f "$work/pid" ] && kill "$(cat "$work/pid")" && sleep 4
    fi
    umount "$work/mnt" 2>/dev/null
    for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 256M "$work/dev.img"
dev=$(losetup -f --show "$work/dev.img"); loops+=("$dev")
if [ "$fs" = zfs ]; then
    zfs-fuse --pidfile "$work/pid" --no-kstat-mount --disable-block-cache --max-arc-size 64
    sleep 2
    zpool create -f -o cachefile=none -m none rename_pool "$dev"
    zfs create -o mountpoint="$work/mnt" rename_pool/data
else
    mkfs.ext4 -q "$dev"; mkdir -p "$work/mnt"; mount "$dev" "$work/mnt"
fi
mkdir "$work/mnt/sub"; sync; sleep 8   # the directory on disk, by a transaction group too
python3 - "$work" "$dev" <<'PY'
import os, sys
work, dev = sys.argv[1], sys.argv[2]
d = work + "/mnt/sub"
for i in range(3):
    fd = os.open(d + "/new.tmp", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
    os.write(fd, b"NEWCONTENTS%05d" % i); os.fsync(fd); os.close(fd)
    os.rename(d + "/new.tmp", d + "/new")
    fd = os.open(d + "/new", os.O_RDONLY); os.fsync(fd); os.close(fd)
    fd = os.open(d, os.O_RDONLY); os.fsync(fd); os.close(fd)
    os.system(f"dd if={dev} of={work}/copy{i}.img bs=1M iflag=direct status=none")
PY
if [ "$fs" = zfs ]; then
    sleep 1; zpool export rename_pool || { sleep 3; zpool export rename_pool; }
else
    umount "$work/mnt"
fi
for i in 0 1 2; do
    copy=$(losetup -f --show "$work/copy$i.img"); loops+=("$copy")
    echo "after round $i (wrote NEWCONTENTS0000$i, renamed, fsync'd file and directory):"
    if [ "$fs" = zfs ]; then
        rm -rf "$work/devs"; mkdir "$work/devs"; ln -s "$copy" "$work/devs/d0"
        zpool import -d "$work/devs" -f -o cachefile=none -R "$work/root" rename_pool
        sub="$work/root$work/mnt/sub"
    else
        mount "$copy" "$work/mnt"; sub="$work/mnt/sub"
    fi
    for f in "$sub"/*; do printf '  %-8s %s\n' "$(basename "$f")" "$(cat "$f")"; done
    if [ "$fs" = zfs ]; then
        sleep 1; zpool export rename_pool || { sleep 3; zpool export rename_pool; }
    else
        umount "$work/mnt"
    fi
done
