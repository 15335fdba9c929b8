//! Making tracefs available where the kernel has it but nobody mounted it.
//!
//! A fresh machine has an empty `/sys/kernel/tracing`: the kernel creates the mount point, and
//! systemd (`sys-kernel-tracing.mount`), perf or trace-cmd mount tracefs on first use. bakeoff,
//! as root, does as perf does (`mount -t tracefs nodev /sys/kernel/tracing`) and leaves the
//! mount in place, as they do: tracefs is the kernel's own pseudo file system, holds no data and
//! no state of bakeoff's (its instances are removed on their own), and unmounting it could break
//! another tracer that started using it meanwhile.

use crate::sys::{is_root, lock_exclusive, mount_pseudo};
use std::path::Path;

/// Where tracefs is mounted.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// Makes sure tracefs is mounted at [`TRACEFS`], mounting it if the kernel has it and bakeoff
/// is root; otherwise says why it is not there and what the user can do.
pub fn ensure_mounted() -> Result<(), String> {
    if mounted() {
        return Ok(());
    }
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !kernel_has_tracefs(&filesystems) {
        return Err(format!(
            "tracefs is not mounted at {TRACEFS} and the kernel has no tracefs (CONFIG_TRACING)"
        ));
    }
    if !is_root() {
        return Err(format!(
            "tracefs is not mounted at {TRACEFS} and only root can mount it \
             (mount -t tracefs nodev {TRACEFS})"
        ));
    }
    mount()
}

/// Whether tracefs is mounted at [`TRACEFS`] (its root has `instances`; the bare mount point is
/// an empty directory).
fn mounted() -> bool {
    Path::new(TRACEFS).join("instances").is_dir()
}

/// Whether `/proc/filesystems` lists tracefs.
fn kernel_has_tracefs(filesystems: &str) -> bool {
    filesystems
        .lines()
        .any(|line| line.split_whitespace().last() == Some("tracefs"))
}

/// Mounts tracefs at [`TRACEFS`], once even when threads or processes race: each takes a
/// `flock` on the mount point's directory (one per open, so threads exclude each other too),
/// and one that waited sees the other's mount through the path and does not stack a second.
fn mount() -> Result<(), String> {
    let point = std::fs::File::open(TRACEFS)
        .map_err(|e| format!("tracefs is not mounted and {TRACEFS} cannot be opened: {e}"))?;
    lock_exclusive(&point).map_err(|e| format!("cannot lock {TRACEFS} to mount tracefs: {e}"))?;
    if mounted() {
        return Ok(());
    }
    mount_pseudo("nodev", TRACEFS, "tracefs").map_err(|e| {
        format!(
            "tracefs is not mounted at {TRACEFS} and mounting it failed: {e} \
             (mount -t tracefs nodev {TRACEFS})"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::kernel_has_tracefs;

    #[test]
    fn tracefs_is_found_in_proc_filesystems() {
        assert!(kernel_has_tracefs("nodev\tsysfs\nnodev\ttracefs\n\text4\n"));
        assert!(!kernel_has_tracefs("nodev\tsysfs\n\text4\n"));
    }
}
