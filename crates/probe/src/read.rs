//! The thin system layer: where each source lives, and reading it with the path in the error.

use crate::ProbeError;
use std::path::Path;

/// CPU time counters.
pub(crate) const PROC_STAT: &str = "/proc/stat";
/// Memory sizes.
pub(crate) const PROC_MEMINFO: &str = "/proc/meminfo";
/// CPU description.
pub(crate) const PROC_CPUINFO: &str = "/proc/cpuinfo";
/// This process's mount table.
pub(crate) const MOUNTINFO: &str = "/proc/self/mountinfo";
/// OpenZFS ARC statistics (absent without ZFS kernel modules).
pub(crate) const ARCSTATS: &str = "/proc/spl/kstat/zfs/arcstats";
/// The kernel's current clock source.
pub(crate) const CLOCKSOURCE: &str =
    "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// Reads a whole file, naming it in the error.
pub(crate) fn read(path: impl AsRef<Path>) -> Result<String, ProbeError> {
    let path = path.as_ref();
    std::fs::read_to_string(path).map_err(|source| ProbeError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// A one-value sysfs attribute, trimmed; `None` when missing, unreadable or empty.
pub(crate) fn attribute(path: impl AsRef<Path>) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let value = text.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// The counters file of the block device with kernel name `name`.
pub(crate) fn block_stat_path(name: &str) -> String {
    format!("/sys/block/{name}/stat")
}
