//! Which block devices hold a path: the thin system layer over `stat`, `/sys/dev/block`,
//! `/sys/block/<dev>/loop` and, for file systems without one device, a per-file-system resolver.

use crate::error::ProbeError;
use crate::mounts::mount_for;
use crate::parse::parse_mountinfo;
use crate::read::{attribute, read, MOUNTINFO};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Role of the device the target's file system sits on (counts for amplification).
pub const ROLE_STACK: &str = "stack";
/// Role of a device under a loop device's backing file (shown for context).
pub const ROLE_BACKING: &str = "backing";
/// Role of a device of a separate log stack (its bytes are the log's).
pub const ROLE_LOG: &str = "log";

/// A block device under the target, as named by the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Kernel name, e.g. `vda`, `loop3`, or a partition such as `vda1`.
    pub name: String,
    /// [`ROLE_STACK`] or [`ROLE_BACKING`].
    pub role: String,
    /// `/sys/block/<dev>/device/model`, trimmed, if the device reports one.
    pub model: Option<String>,
    /// For a loop device: its backing file.
    pub loop_backing: Option<String>,
    /// For a loop device: whether direct I/O to the backing file is on.
    pub loop_dio: Option<bool>,
}

/// A device number split into major and minor.
type DevNum = (u32, u32);

/// The block devices holding `path` (a block device node, or a file or directory on a file system).
///
/// A block device node stands for itself; anything else for the device of its file system. A
/// partition is reported as itself, with its own counters (its disk's would add the I/O of the
/// disk's other partitions: the root file system, swap). A loop
/// device is followed one level to the device holding its backing file, with role
/// [`ROLE_BACKING`]. File systems on anonymous devices are resolved per type: btrfs lists its
/// member devices; tmpfs, overlay, FUSE (including zfs-fuse, for now) and the like have none, and
/// give an empty list. Missing sysfs attributes leave fields `None`; a path that cannot be
/// examined is an error naming it.
pub fn resolve_devices(path: &Path) -> Result<Vec<DeviceInfo>, ProbeError> {
    let mut out = Vec::new();
    resolve_path(path, ROLE_STACK, &mut out)?;
    Ok(out)
}

/// Adds the devices holding `path` to `out` with `role`.
fn resolve_path(path: &Path, role: &str, out: &mut Vec<DeviceInfo>) -> Result<(), ProbeError> {
    let stat_err = |source| ProbeError::Stat {
        path: path.to_path_buf(),
        source,
    };
    let meta = fs::metadata(path).map_err(stat_err)?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = split_dev(dev);
    if major != 0 {
        return add_device((major, minor), path, role, out);
    }
    let canonical = fs::canonicalize(path).map_err(stat_err)?;
    for member in anonymous_members(&canonical, (major, minor))? {
        add_device(member, path, role, out)?;
    }
    Ok(())
}

/// Adds one device (and, for a stack loop device, what holds its backing file).
fn add_device(
    num: DevNum,
    path: &Path,
    role: &str,
    out: &mut Vec<DeviceInfo>,
) -> Result<(), ProbeError> {
    let name = disk_name(num, path)?;
    if let Some(seen) = out.iter_mut().find(|d| d.name == name) {
        if role == ROLE_STACK {
            seen.role = ROLE_STACK.to_string();
        }
        return Ok(());
    }
    let info = describe(&name, role);
    let backing = info.loop_backing.clone();
    out.push(info);
    match backing {
        // Deleted backing files cannot be examined; the loop device itself still counts.
        Some(file) if role == ROLE_STACK && !file.ends_with(" (deleted)") => {
            resolve_path(Path::new(&file), ROLE_BACKING, out)
        }
        _ => Ok(()),
    }
}

/// Kernel name of the device (disk or partition) with number `num`, via `/sys/dev/block`.
fn disk_name((major, minor): DevNum, path: &Path) -> Result<String, ProbeError> {
    let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let unknown = || ProbeError::UnknownDevice {
        major,
        minor,
        path: path.to_path_buf(),
    };
    let target = fs::canonicalize(&link).map_err(|_| unknown())?;
    let name = target.file_name().ok_or_else(unknown)?;
    Ok(name.to_string_lossy().into_owned())
}

/// Reads what sysfs says about device `name`; missing attributes are `None`. A partition's
/// model and loop state are its disk's.
fn describe(name: &str, role: &str) -> DeviceInfo {
    let sys = PathBuf::from(format!("/sys/class/block/{name}"));
    let disk = if sys.join("partition").exists() {
        fs::canonicalize(&sys)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or(sys)
    } else {
        sys
    };
    DeviceInfo {
        name: name.to_string(),
        role: role.to_string(),
        model: attribute(disk.join("device/model")),
        loop_backing: attribute(disk.join("loop/backing_file")),
        loop_dio: attribute(disk.join("loop/dio")).map(|v| v == "1"),
    }
}

/// The block devices under a file system on an anonymous device (major 0), found from its mount.
/// The one place to add a resolver for another file-system type.
fn anonymous_members(canonical: &Path, dev: DevNum) -> Result<Vec<DevNum>, ProbeError> {
    let mounts = parse_mountinfo(&read(MOUNTINFO)?);
    // Prefer the mount carrying this very device number; btrfs subvolumes have their own
    // anonymous numbers, so fall back to the mount point alone.
    let same_dev: Vec<_> = mounts
        .iter()
        .filter(|m| (m.major, m.minor) == dev)
        .cloned()
        .collect();
    let Some(mount) = mount_for(&same_dev, canonical).or_else(|| mount_for(&mounts, canonical))
    else {
        return Ok(Vec::new());
    };
    match mount.fstype.as_str() {
        "btrfs" => crate::btrfs::members(&mount.source, canonical),
        // ZFS pools (zfs-fuse, zfs) are resolved by the stacks work; until then, like tmpfs,
        // overlay and other FUSE file systems, no block device.
        _ => Ok(Vec::new()),
    }
}

/// Splits a Linux `dev_t` as glibc's `major()`/`minor()` do.
pub(crate) fn split_dev(dev: u64) -> DevNum {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc's `makedev()`.
    fn makedev(major: u64, minor: u64) -> u64 {
        ((major & 0xfff) << 8) | ((major & !0xfff) << 32) | (minor & 0xff) | ((minor & !0xff) << 12)
    }

    #[test]
    fn splits_dev_t() {
        assert_eq!(split_dev(0xfe00), (254, 0));
        assert_eq!(split_dev(0x0701), (7, 1));
        for (major, minor) in [
            (0, 0),
            (259, 0x1003),
            (0x12345, 0xabcdef),
            (0xffff_ffff, 0xffff_ffff),
        ] {
            let (ma, mi) = split_dev(makedev(major, minor));
            assert_eq!((u64::from(ma), u64::from(mi)), (major, minor));
        }
    }

    #[test]
    fn missing_path_is_an_error_naming_it() {
        let err = resolve_devices(Path::new("/no/such/path")).unwrap_err();
        assert!(err.to_string().contains("/no/such/path"), "{err}");
    }
}
