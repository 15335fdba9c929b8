//! What each stack type can be built with, known before anything is built: the device sizes its
//! mkfs accepts, what mkfs allocates in a sparse image, and the mount options the kernel takes
//! (the room its file system keeps for itself is in [`capacity`](mod@super::capacity)). The sizes were measured with the tools on
//! the development machine (docs/stacks.md has the table and how); mount options are asked of
//! the kernel itself.

use super::btrfs::spec::{BtrfsSpec, Profile};
use crate::spec::StackSpec;
use std::os::fd::{AsFd, BorrowedFd};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Sizes a stack type's devices may have.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeLimits {
    /// The smallest device its mkfs (with bakeoff's arguments) accepts.
    pub min_bytes: u64,
    /// The largest device its file system supports.
    pub max_bytes: u64,
}

impl SizeLimits {
    /// No limits (a raw device).
    pub const NONE: SizeLimits = SizeLimits {
        min_bytes: 1,
        max_bytes: u64::MAX,
    };

    /// Why a device of `size` bytes cannot be built, or `None`.
    pub fn refuse(&self, size: u64) -> Option<String> {
        let b = bakeoff_core::units::format_bytes;
        if size < self.min_bytes {
            return Some(format!(
                "a device of {} is below the smallest this type's mkfs accepts, {} ({} bytes)",
                b(size),
                b(self.min_bytes),
                self.min_bytes
            ));
        }
        (size > self.max_bytes).then(|| {
            format!(
                "a device of {} is above the largest this type supports, {}",
                b(size),
                b(self.max_bytes)
            )
        })
    }
}

/// ext4 with mkfs.ext4's defaults: 104 KiB at least (1 KiB blocks); 1 EiB at most (4 KiB
/// blocks, 64bit).
pub(crate) fn ext4(_: &StackSpec) -> SizeLimits {
    SizeLimits {
        min_bytes: 104 * KIB,
        max_bytes: 1 << 60,
    }
}

/// ext4's mkfs (lazy init off) allocates its inode tables and journal in the image: by the
/// inode ratio mke2fs.conf gives its size class, 256-byte inodes, and a journal of 1/64 of
/// the device between 4 MiB and 1 GiB (an estimate that errs high).
pub(crate) fn ext4_mkfs_bytes(size: u64) -> u64 {
    let ratio = match size {
        s if s < 512 * MIB => 4096,
        s if s < 4 * TIB => 16384,
        s if s < 16 * TIB => 32768,
        _ => 65536,
    };
    size / ratio * 256 + (size / 64).clamp(4 * MIB, GIB)
}

/// xfs: mkfs.xfs refuses less than 300 MiB; 8 EiB at most.
pub(crate) fn xfs(_: &StackSpec) -> SizeLimits {
    SizeLimits {
        min_bytes: 300 * MIB,
        max_bytes: 8 << 60,
    }
}

/// xfs's mkfs allocates its log: 1/2048 of the device, between 64 MiB and 2 GiB.
pub(crate) fn xfs_mkfs_bytes(size: u64) -> u64 {
    (size / 2048).clamp(64 * MIB, 2 * GIB) + 4 * MIB
}

/// btrfs: mkfs.btrfs's smallest device follows the profiles: 45 MiB, plus 64 MiB for dup
/// metadata (one device's default) or 24 MiB for a striped or mirrored one (raid1 is the
/// default over several devices), plus 120 MiB for dup data or 56 MiB for a raid data
/// profile. Measured for every pair of profiles on one, two and four devices.
pub(crate) fn btrfs(spec: &StackSpec) -> SizeLimits {
    let profiles: &BtrfsSpec = spec.typed();
    let metadata = match profiles.metadata {
        Some(Profile::Single) => 0,
        Some(Profile::Dup) => 64,
        Some(_) => 24,
        None if spec.devices > 1 => 24,
        None => 64,
    };
    let data = match profiles.data {
        None | Some(Profile::Single) => 0,
        Some(Profile::Dup) => 120,
        Some(_) => 56,
    };
    SizeLimits {
        min_bytes: (45 + metadata + data) * MIB,
        max_bytes: u64::MAX,
    }
}

/// ZFS: a vdev of 64 MiB at least (SPA_MINDEVSIZE).
pub(crate) fn zfs(_: &StackSpec) -> SizeLimits {
    SizeLimits {
        min_bytes: 64 * MIB,
        max_bytes: u64::MAX,
    }
}

/// A small file system's mkfs allocates little: superblocks, labels, a first chunk.
pub(crate) fn small_mkfs_bytes(_: u64) -> u64 {
    16 * MIB
}

/// Mount options `mount(8)` turns into mount flags itself (and options only fstab uses): the
/// kernel's file-system parsers never see them.
const VFS_OPTIONS: &[&str] = &[
    "defaults",
    "ro",
    "rw",
    "exec",
    "noexec",
    "suid",
    "nosuid",
    "dev",
    "nodev",
    "sync",
    "async",
    "dirsync",
    "mand",
    "nomand",
    "atime",
    "noatime",
    "diratime",
    "nodiratime",
    "relatime",
    "norelatime",
    "strictatime",
    "nostrictatime",
    "lazytime",
    "nolazytime",
    "iversion",
    "noiversion",
    "silent",
    "loud",
    "symfollow",
    "nosymfollow",
    "auto",
    "noauto",
    "user",
    "nouser",
    "users",
    "owner",
    "group",
    "nofail",
    "_netdev",
];

/// Checks `options` (`noatime,data=journal`) against the kernel's parser for `fstype`, as the
/// real mount would (mount(8) uses the same `fsconfig` calls): each option the file system
/// parses is set on a new, unattached file-system context, which needs no device and builds
/// nothing. Flags mount(8) handles itself are taken as they are. Needs `CAP_SYS_ADMIN`.
///
/// `Err` is the kernel's refusal of an option; `Ok(Some(note))` says why the kernel could not
/// be asked (see [`unaskable`]), and the real mount decides.
pub fn check_mount_options(fstype: &str, options: &str) -> Result<Option<String>, String> {
    use rustix::mount::{fsconfig_set_flag, fsconfig_set_string, fsopen, FsOpenFlags};
    let fs = match fsopen(fstype, FsOpenFlags::FSOPEN_CLOEXEC) {
        Ok(fs) => fs,
        Err(e) if unaskable(e) => {
            return Ok(Some(format!(
                "mount options {options} were not checked before building: the kernel cannot                  be asked about {fstype} here ({e}); the mount will say"
            )))
        }
        Err(e) => return Err(format!("cannot ask the kernel about {fstype} mount options: {e}")),
    };
    for opt in options.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        if VFS_OPTIONS.contains(&opt) || opt.starts_with("x-") || opt.starts_with("comment=") {
            continue;
        }
        let set = match opt.split_once('=') {
            Some((key, value)) => fsconfig_set_string(&fs, key, value),
            None => fsconfig_set_flag(&fs, opt),
        };
        if let Err(e) = set {
            let said = kernel_message(fs.as_fd());
            let why = said.unwrap_or_else(|| e.to_string());
            return Err(format!(
                "the kernel's {fstype} refuses mount option '{opt}': {why}"
            ));
        }
    }
    Ok(None)
}

/// `fsopen` errors that say nothing about the options: a kernel without the call (before 5.2:
/// `ENOSYS`), a sandbox that forbids it (seccomp, containers: `EPERM`, `EACCES`), a file
/// system whose module is not loaded yet (`ENODEV`: mount(8) has it loaded). The check is
/// skipped and the real mount decides.
pub fn unaskable(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    [Errno::NOSYS, Errno::PERM, Errno::ACCESS, Errno::NODEV].contains(&e)
}

/// The message the kernel logged on a file-system context (`e ext4: Unknown parameter 'x'`),
/// without its severity letter.
fn kernel_message(fd: BorrowedFd<'_>) -> Option<String> {
    let mut buf = [0u8; 512];
    let n = rustix::io::read(fd, &mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf[..n]).trim().to_string();
    let text = text
        .split_once(' ')
        .map_or(text.clone(), |(_, m)| m.to_string());
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> StackSpec {
        StackSpec::parse_arg(text).unwrap()
    }

    #[test]
    fn btrfs_minimum_follows_the_profiles_as_measured() {
        let min = |t: &str| btrfs(&spec(t)).min_bytes / MIB;
        assert_eq!(min("btrfs"), 109);
        assert_eq!(min("btrfs:devices=2"), 69);
        assert_eq!(min("btrfs:devices=2,profile=raid1"), 125);
        assert_eq!(min("btrfs:devices=4,profile=raid10"), 125);
        assert_eq!(min("btrfs:profile=dup"), 229);
        assert_eq!(min("btrfs:metadata=single"), 45);
    }

    #[test]
    fn a_kernel_that_cannot_be_asked_leaves_the_options_to_the_mount() {
        use rustix::io::Errno;
        for e in [Errno::NOSYS, Errno::PERM, Errno::ACCESS, Errno::NODEV] {
            assert!(unaskable(e), "{e}");
        }
        for e in [Errno::INVAL, Errno::NOENT, Errno::OPNOTSUPP, Errno::NOMEM] {
            assert!(!unaskable(e), "{e}");
        }
    }

    #[test]
    fn devices_outside_the_limits_are_refused() {
        let l = ext4(&spec("ext4"));
        assert!(l.refuse(100 * KIB).is_some() && l.refuse(GIB).is_none());
        assert!(ext4_mkfs_bytes(10 * TIB) > 80 * GIB);
    }
}
