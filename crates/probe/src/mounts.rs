//! Choosing the mount a path lives on, and describing it. Pure, over parsed mountinfo.

use crate::parse::MountEntry;
use std::path::{Path, PathBuf};

/// The mount whose mount point is the longest whole-component prefix of `path` (which should be
/// canonical); among equal mount points the later one, which is mounted on top.
pub(crate) fn mount_for<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    mounts
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| Path::new(&m.mount_point).components().count())
}

/// Per-mount options followed by the file-system options not already listed:
/// `rw,relatime` + `rw,discard` → `rw,relatime,discard`.
pub(crate) fn merged_options(mount: &MountEntry) -> String {
    let mut all: Vec<&str> = Vec::new();
    for option in mount
        .options
        .split(',')
        .chain(mount.super_options.split(','))
    {
        if !option.is_empty() && !all.contains(&option) {
            all.push(option);
        }
    }
    all.join(",")
}

/// `path` made absolute with symlinks resolved as far as it exists: the longest existing ancestor
/// is canonicalized and the rest appended, so a not-yet-created target still finds its mount.
pub(crate) fn canonical_or_ancestor(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    for ancestor in absolute.ancestors() {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            let rest = absolute.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return real.join(rest);
        }
    }
    absolute
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_mountinfo;

    fn fixture() -> Vec<MountEntry> {
        parse_mountinfo(include_str!("../tests/fixtures/proc/6.18.44/mountinfo"))
    }

    #[test]
    fn longest_prefix_by_components_and_topmost() {
        let mounts = fixture();
        let at = |p: &str| mount_for(&mounts, Path::new(p)).map(|m| m.mount_id);
        assert_eq!(at("/work/main"), Some(27));
        assert_eq!(at("/"), Some(27));
        assert_eq!(
            at("/dev/shm/x"),
            Some(30),
            "the later of two mounts on /dev/shm"
        );
        assert_eq!(at("/dev/shmx"), Some(24), "not a component prefix: /dev");
        assert_eq!(at("/sys/fs/cgroup/cpu"), Some(32));
        assert_eq!(mount_for(&[], Path::new("/")), None);
    }

    #[test]
    fn options_are_merged_without_duplicates() {
        let mounts = fixture();
        let root = mount_for(&mounts, Path::new("/")).unwrap();
        assert_eq!(
            merged_options(root),
            "rw,relatime,discard,resv_strict,resuid=65534,resgid=65534"
        );
    }

    #[test]
    fn missing_tail_is_kept() {
        let p = canonical_or_ancestor(Path::new("/proc/self/../does/not/exist"));
        assert!(p.ends_with("does/not/exist"));
        assert!(p.is_absolute());
    }
}
