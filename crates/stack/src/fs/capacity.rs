//! How much data each stack type holds on devices of a given size: the bytes `statvfs` reports
//! available once it is built (the figure the run checks before it writes), known before
//! anything is built. Each model follows what its mkfs lays out and was checked against the
//! built file systems on the development machine (docs/stacks.md): it errs low, by at most
//! [`TOLERANCE`] of the data devices' bytes above 16 MiB, so a dry run that says a dataset fits
//! is right, and one that says it does not is wrong only within that margin.

use super::btrfs::spec::{BtrfsSpec, Profile};
use super::zfs::spec::{PoolLayout, ZfsSpec};
use crate::spec::StackSpec;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// How far below the built stack's room a model may be, as a fraction of the data devices'
/// bytes (devices above 16 MiB).
pub const TOLERANCE: f64 = 0.03;

/// The data devices of `spec`'s backing devices (log devices hold none).
fn data_devices(spec: &StackSpec) -> u64 {
    spec.roles().iter().filter(|r| **r == "data").count() as u64
}

/// A type without a file system of its own (raw): every byte of every data device.
pub(crate) fn whole(spec: &StackSpec, per: u64) -> u64 {
    per.saturating_mul(data_devices(spec))
}

/// The journal mke2fs gives a file system of `blocks` blocks (`ext2fs_default_journal_size`).
fn ext4_journal_blocks(blocks: u64) -> u64 {
    const STEPS: [(u64, u64); 8] = [
        (2048, 0),
        (32768, 1024),
        (256 * KIB, 4096),
        (512 * KIB, 8192),
        (4096 * KIB, 16384),
        (8192 * KIB, 32768),
        (16384 * KIB, 65536),
        (32768 * KIB, 131072),
    ];
    STEPS
        .iter()
        .find(|(below, _)| blocks < *below)
        .map_or(262144, |&(_, journal)| journal)
}

/// ext4 with mke2fs.conf's defaults on its first device: root's 5 %, inode tables (256-byte
/// inodes by the size class's inode ratio), the journal, the clusters ext4 keeps for delayed
/// allocation (2 % up to 4096), and bitmaps, descriptors and superblock copies (more of them
/// with the 1 KiB blocks of devices under 512 MiB).
pub(crate) fn ext4(_: &StackSpec, per: u64) -> u64 {
    let block = if per < 512 * MIB { KIB } else { 4 * KIB };
    let ratio = match per {
        s if s < 3 * MIB => 8192,
        s if s < 512 * MIB => 4096,
        s if s < (4 << 40) => 16384,
        s if s < (16 << 40) => 32768,
        _ => 65536,
    };
    let blocks = per / block;
    let misc = if block == KIB { per / 40 } else { per / 200 };
    let kept = per / 20
        + per / ratio * 256
        + ext4_journal_blocks(blocks) * block
        + (blocks / 50).min(4096) * block
        + misc
        + 64 * KIB;
    per.saturating_sub(kept)
}

/// xfs on its first device: the log (1/2048 of the device, 64 MiB to 2 GiB), the blocks xfs
/// reserves (5 % up to 32 MiB), and allocation-group headers and free-space trees.
pub(crate) fn xfs(_: &StackSpec, per: u64) -> u64 {
    let log = (per / 2048).clamp(64 * MIB, 2 * GIB);
    let kept = log + (per / 20).min(32 * MIB) + per / 133 + 2 * MIB;
    per.saturating_sub(kept)
}

/// btrfs over its devices: the metadata chunks mkfs allocates (by the whole file system's
/// size: 32 MiB under 640 MiB, then 5 %, 256 MiB from 2.5 GiB, 1 GiB above 50 GiB), twice
/// unless metadata is `single`, and the system chunks; the rest divided by the data profile's
/// copies (two for dup, raid1 and raid10).
pub(crate) fn btrfs(spec: &StackSpec, per: u64) -> u64 {
    let total = per.saturating_mul(data_devices(spec));
    let profiles: &BtrfsSpec = spec.typed();
    let chunk = match total {
        t if t < 640 * MIB => 32 * MIB,
        t if t < 2560 * MIB => t / 20,
        t if t <= 50 * GIB => 256 * MIB,
        _ => GIB,
    };
    let kept = match profiles.metadata {
        Some(Profile::Single) => 16 * MIB,
        _ => 2 * chunk + 20 * MIB,
    };
    let copies = profiles.data.map_or(1, Profile::copies);
    total.saturating_sub(kept) / copies
}

/// ZFS: the data devices' bytes the layout gives (a mirror one device's, raidz all but one, a
/// stripe of mirrors half), less labels, metaslab rounding and the space ZFS holds back:
/// zfs-fuse keeps about 1/40 of the pool besides 36 MiB; OpenZFS's slop is 1/32 of the pool,
/// at least 128 MiB (at most half the pool).
pub(crate) fn zfs(spec: &StackSpec, per: u64) -> u64 {
    let n = data_devices(spec);
    let data = match spec.typed::<ZfsSpec>().layout {
        PoolLayout::Mirror => 1,
        PoolLayout::Raidz => n.saturating_sub(1),
        PoolLayout::MirrorStripe => n / 2,
        PoolLayout::Stripe => n,
    };
    let pool = per.saturating_mul(data);
    let kept = if super::zfs::openzfs_loaded() {
        (pool / 32).max(128 * MIB).min(pool / 2) + pool / 64 + 8 * MIB * n
    } else {
        pool / 40 + 36 * MIB
    };
    pool.saturating_sub(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> StackSpec {
        StackSpec::parse_arg(text).unwrap()
    }

    /// `statvfs`'s available bytes of stacks built on the development machine (e2fsprogs
    /// 1.47.0, xfsprogs 6.1.0, btrfs-progs 6.2, zfs-fuse 0.7): the model is at most that, and
    /// within the tolerance of it.
    #[test]
    fn the_models_err_low_within_the_tolerance_of_built_stacks() {
        let built: &[(&str, u64, u64)] = &[
            ("ext4", 104 * KIB, 75776),
            ("ext4", MIB, 916480),
            ("ext4", 32 * MIB, 24101888),
            ("ext4", 128 * MIB, 110607360),
            ("ext4", 511 * MIB, 460473344),
            ("ext4", GIB, 950214656),
            ("ext4", 16 * GIB, 15854100480),
            ("xfs", 300 * MIB, 229732352),
            ("xfs", 512 * MIB, 439373824),
            ("xfs", GIB, 965767168),
            ("xfs", 16 * GIB, 16959598592),
            ("btrfs", 109 * MIB, 29360128),
            ("btrfs", GIB, 948568064),
            ("btrfs", 2550 * MIB, 2388656128),
            ("btrfs", 2560 * MIB, 2129657856),
            ("btrfs", 52000 * MIB, 52360642560),
            ("btrfs:devices=2,profile=raid1", GIB, 956956672),
            ("btrfs:devices=4,profile=raid10", GIB, 1868562432),
            ("btrfs:profile=dup", 512 * MIB, 225968128),
            ("btrfs:metadata=single", GIB, 1060110336),
            ("zfs", 64 * MIB, 27 * MIB),
            ("zfs", GIB, 983 * MIB),
            ("zfs", 4 * GIB, 3999 * MIB),
            ("zfs:devices=2,layout=mirror", GIB, 983 * MIB),
            ("zfs:devices=3,layout=raidz", GIB, 2002 * MIB),
            ("zfs:devices=4,layout=mirror-stripe", GIB, 1999 * MIB),
        ];
        for &(text, per, real) in built {
            let s = spec(text);
            if s.kind.name() == "zfs" && super::super::zfs::openzfs_loaded() {
                continue; // measured with zfs-fuse
            }
            let model = (s.kind.driver().capacity)(&s, per);
            let bytes = per * data_devices(&s);
            assert!(
                model <= real,
                "{text} on {per}: model {model} > built {real}"
            );
            if per > 16 * MIB {
                let short = (real - model) as f64 / bytes as f64;
                assert!(short <= TOLERANCE, "{text} on {per}: {short:.3} short");
            }
        }
    }

    #[test]
    fn a_mirror_holds_one_device_and_raw_holds_it_all() {
        assert_eq!(whole(&spec("raw"), GIB), GIB);
        let one = btrfs(&spec("btrfs:devices=2"), GIB);
        let mirror = btrfs(&spec("btrfs:devices=2,profile=raid1"), GIB);
        assert!(mirror < GIB && one > GIB, "{mirror} {one}");
        assert!(zfs(&spec("zfs:devices=2,layout=mirror"), GIB) < GIB);
    }
}
