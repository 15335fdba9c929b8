//! What the target is and which file system it is on.

use crate::mounts::{canonical_or_ancestor, merged_options, mount_for};
use crate::parse::parse_mountinfo;
use crate::read::{read, MOUNTINFO};
use bakeoff_core::record::TargetInfo;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Describes the target: `kind` is `block_device` for a block device node (file-system fields
/// `None`), else `directory`, with type, options (per-mount then file-system options, without
/// duplicates) and source of the mount that holds the canonical path. Never fails: what cannot be
/// found is `None`.
pub fn target_info(path: &Path) -> TargetInfo {
    let is_block = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    let mut info = TargetInfo {
        path: path.display().to_string(),
        kind: if is_block {
            "block_device"
        } else {
            "directory"
        }
        .to_string(),
        ..TargetInfo::default()
    };
    if is_block {
        return info;
    }
    let Ok(text) = read(MOUNTINFO) else {
        return info;
    };
    let mounts = parse_mountinfo(&text);
    if let Some(mount) = mount_for(&mounts, &canonical_or_ancestor(path)) {
        info.filesystem = Some(mount.fstype.clone());
        info.mount_options = Some(merged_options(mount));
        info.mount_source = Some(mount.source.clone());
    }
    info
}

/// The file system holding `path` if it keeps its files in memory
/// ([`TargetInfo::in_memory_filesystem`]). Dropping caches would only move its pages to the
/// inactive list, and a run would then measure their re-activation (the LRU lock on each
/// page's second read), not a cold start.
pub fn in_memory_filesystem(path: &Path) -> Option<String> {
    target_info(path).in_memory_filesystem().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_root_and_shm() {
        let root = target_info(Path::new("/"));
        assert_eq!(root.kind, "directory");
        assert!(root.filesystem.is_some());
        assert!(root.mount_options.as_deref().is_some_and(|o| !o.is_empty()));
        if Path::new("/dev/shm").is_dir() {
            let shm = target_info(Path::new("/dev/shm/not-yet-created"));
            assert_eq!(shm.filesystem.as_deref(), Some("tmpfs"));
            assert_eq!(
                in_memory_filesystem(Path::new("/dev/shm")).as_deref(),
                Some("tmpfs")
            );
        }
        assert_eq!(in_memory_filesystem(Path::new("/proc/self")), None);
    }
}
