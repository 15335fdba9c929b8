//! btrfs: a file system on an anonymous device whose member block devices sysfs lists under
//! `/sys/fs/btrfs/<uuid>/devices/` (one symlink per member, named by its kernel name).

use crate::error::ProbeError;
use crate::read::read;
use std::fs;
use std::path::{Path, PathBuf};

const SYS_FS_BTRFS: &str = "/sys/fs/btrfs";

/// Device numbers of the members of the btrfs file system mounted from `source` (e.g.
/// `/dev/loop0`), which holds `path`.
pub(crate) fn members(source: &str, path: &Path) -> Result<Vec<(u32, u32)>, ProbeError> {
    let fs_dir = filesystem_dir(source).ok_or_else(|| ProbeError::Unresolved {
        path: path.to_path_buf(),
        reason: format!("no file system under {SYS_FS_BTRFS} lists device {source}"),
    })?;
    let devices = fs_dir.join("devices");
    let entries = fs::read_dir(&devices).map_err(|source| ProbeError::Read {
        path: devices.clone(),
        source,
    })?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ProbeError::Read {
            path: devices.clone(),
            source,
        })?;
        let dev_file = entry.path().join("dev");
        let text = read(&dev_file)?;
        let num = parse_dev_pair(&text).ok_or_else(|| {
            ProbeError::parse(
                "/sys/class/block/<dev>/dev",
                format!("{text:?} is not MAJ:MIN"),
            )
        })?;
        out.push(num);
    }
    out.sort_unstable();
    Ok(out)
}

/// `/sys/fs/btrfs/<uuid>` of the file system with member `source`; if the source cannot be
/// matched (e.g. `/dev/root`) but only one btrfs file system exists, that one.
fn filesystem_dir(source: &str) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = fs::read_dir(SYS_FS_BTRFS)
        .ok()?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.join("devices").is_dir())
        .collect();
    let name = fs::canonicalize(source)
        .ok()
        .and_then(|p| Some(p.file_name()?.to_os_string()));
    let by_name = name.and_then(|n| dirs.iter().find(|d| d.join("devices").join(&n).exists()));
    match (by_name, dirs.as_slice()) {
        (Some(dir), _) => Some(dir.clone()),
        (None, [only]) => Some(only.clone()),
        (None, _) => None,
    }
}

/// `"254:2\n"` → `(254, 2)`.
fn parse_dev_pair(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_pairs() {
        assert_eq!(parse_dev_pair("254:2\n"), Some((254, 2)));
        assert_eq!(parse_dev_pair("254"), None);
        assert_eq!(parse_dev_pair("a:b"), None);
    }
}
