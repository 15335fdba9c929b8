//! The thin system layer: where each source lives, and reading it with the path in the error.

use crate::error::ProbeError;
use std::path::Path;

/// CPU time counters.
pub(crate) const PROC_STAT: &str = "/proc/stat";
/// Memory sizes.
pub(crate) const PROC_MEMINFO: &str = "/proc/meminfo";
/// CPU description.
pub(crate) const PROC_CPUINFO: &str = "/proc/cpuinfo";
/// This process's mount table.
pub(crate) const MOUNTINFO: &str = "/proc/self/mountinfo";
/// ZFS ARC statistics: OpenZFS's kstat, then zfs-fuse's kstat file system (absent when the
/// daemon runs with `--no-kstat-mount`).
pub(crate) const ARCSTATS: [&str; 2] = ["/proc/spl/kstat/zfs/arcstats", "/zfs-kstat/zfs/arcstats"];
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

/// The counters file of the block device (disk or partition) with kernel name `name`.
pub(crate) fn block_stat_path(name: &str) -> String {
    format!("/sys/class/block/{name}/stat")
}

/// Every process's `/proc/<pid>/stat`, parsed; processes that exit while being read, or whose
/// file does not parse, are left out.
pub fn processes() -> Vec<crate::parse::ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|text| crate::parse::parse_pid_stat(&text).ok())
        .collect()
}
