//! `/proc/meminfo`: memory and page-cache sizes.

use super::number;
use crate::error::ProbeError;

const FILE: &str = "/proc/meminfo";

/// The `/proc/meminfo` figures bakeoff reports, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemInfo {
    /// `MemTotal`.
    pub total: u64,
    /// `MemAvailable` (since kernel 3.14); on older kernels `MemFree + Buffers + Cached`.
    pub available: u64,
    /// `Cached`: the page cache.
    pub cached: u64,
    /// `Dirty`: waiting to be written back.
    pub dirty: u64,
    /// `Writeback`: being written back now.
    pub writeback: u64,
}

/// Parses `/proc/meminfo`. `MemTotal`, `Cached`, `Dirty` and `Writeback` are required; values in
/// `kB` (which the kernel means as KiB) are converted to bytes.
pub fn parse_meminfo(text: &str) -> Result<MemInfo, ProbeError> {
    let mut found: [Option<u64>; 7] = [None; 7];
    const KEYS: [&str; 7] = [
        "MemTotal",
        "MemAvailable",
        "Cached",
        "Dirty",
        "Writeback",
        "MemFree",
        "Buffers",
    ];
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let Some(slot) = KEYS.iter().position(|k| *k == key) else {
            continue;
        };
        found[slot] = Some(value(key, rest)?);
    }
    let need =
        |i: usize| found[i].ok_or_else(|| ProbeError::parse(FILE, format!("no {} line", KEYS[i])));
    let (total, cached, dirty, writeback) = (need(0)?, need(2)?, need(3)?, need(4)?);
    let available = match found[1] {
        Some(a) => a,
        None => need(5)?
            .saturating_add(found[6].unwrap_or(0))
            .saturating_add(cached),
    };
    Ok(MemInfo {
        total,
        available,
        cached,
        dirty,
        writeback,
    })
}

/// `"   24684096 kB"` → bytes.
fn value(key: &str, rest: &str) -> Result<u64, ProbeError> {
    let mut tokens = rest.split_ascii_whitespace();
    let n = number(FILE, key, tokens.next().unwrap_or(""))?;
    match tokens.next() {
        None => Ok(n),
        Some("kB") => Ok(n.saturating_mul(1024)),
        Some(unit) => Err(ProbeError::parse(
            FILE,
            format!("{key}: unknown unit {unit:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_fixture() {
        let text = include_str!("../../tests/fixtures/proc/6.18.44/meminfo");
        let m = parse_meminfo(text).unwrap();
        assert_eq!(
            m,
            MemInfo {
                total: 24684096 * 1024,
                available: 24372388 * 1024,
                cached: 879092 * 1024,
                dirty: 80 * 1024,
                writeback: 0,
            }
        );
    }

    #[test]
    fn old_kernel_without_memavailable() {
        let text = "MemTotal: 100 kB\nMemFree: 10 kB\nBuffers: 1 kB\nCached: 5 kB\n\
                    Dirty: 2 kB\nWriteback: 0 kB\nHugePages_Total: 0\n";
        assert_eq!(parse_meminfo(text).unwrap().available, 16 * 1024);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_meminfo("").is_err());
        assert!(parse_meminfo("MemTotal: x kB").is_err());
        assert!(parse_meminfo("MemTotal: 1 MB\nCached: 1\nDirty: 1\nWriteback: 1").is_err());
        assert!(parse_meminfo("MemTotal: 1 kB\nDirty: 1\nWriteback: 1").is_err());
    }
}
