//! `/sys/block/<dev>/stat`: I/O counters of one block device
//! (kernel `Documentation/block/stat.rst`).

use super::number;
use crate::error::ProbeError;

const FILE: &str = "/sys/block/<dev>/stat";

/// Counters of one block device since it appeared. Sectors are always 512 bytes, whatever the
/// device's logical block size. Tick fields are milliseconds and are 32-bit in the kernel, so
/// they wrap; diff them with `device_stats` (`delta.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Reads completed.
    pub read_ios: u64,
    /// Reads merged into other reads.
    pub read_merges: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    /// Milliseconds reads spent queued and in service (summed over requests).
    pub read_ticks_ms: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Writes merged into other writes.
    pub write_merges: u64,
    /// 512-byte sectors written.
    pub write_sectors: u64,
    /// Milliseconds writes spent queued and in service (summed over requests).
    pub write_ticks_ms: u64,
    /// Requests in flight now.
    pub in_flight: u64,
    /// Milliseconds the device had requests in flight.
    pub io_ticks_ms: u64,
    /// Weighted milliseconds spent with requests in flight.
    pub time_in_queue_ms: u64,
    /// Discards completed (since kernel 4.18).
    pub discard_ios: Option<u64>,
    /// Flush requests completed (since kernel 5.5).
    pub flush_ios: Option<u64>,
    /// Milliseconds flush requests spent in service (since kernel 5.5).
    pub flush_ticks_ms: Option<u64>,
}

/// Parses the one line of `/sys/block/<dev>/stat`: 11 fields, 15 since kernel 4.18 (discards),
/// 17 since 5.5 (flushes). Extra trailing fields from future kernels are ignored.
pub fn parse_block_stat(text: &str) -> Result<DiskCounters, ProbeError> {
    const NAMES: [&str; 17] = [
        "read I/Os",
        "read merges",
        "read sectors",
        "read ticks",
        "write I/Os",
        "write merges",
        "write sectors",
        "write ticks",
        "in_flight",
        "io_ticks",
        "time_in_queue",
        "discard I/Os",
        "discard merges",
        "discard sectors",
        "discard ticks",
        "flush I/Os",
        "flush ticks",
    ];
    let mut v = [0u64; 17];
    let mut n = 0;
    for (slot, (name, token)) in v
        .iter_mut()
        .zip(NAMES.iter().zip(text.split_ascii_whitespace()))
    {
        *slot = number(FILE, name, token)?;
        n += 1;
    }
    if n < 11 {
        return Err(ProbeError::parse(
            FILE,
            format!("{n} fields, expected 11, 15 or 17"),
        ));
    }
    Ok(DiskCounters {
        read_ios: v[0],
        read_merges: v[1],
        read_sectors: v[2],
        read_ticks_ms: v[3],
        write_ios: v[4],
        write_merges: v[5],
        write_sectors: v[6],
        write_ticks_ms: v[7],
        in_flight: v[8],
        io_ticks_ms: v[9],
        time_in_queue_ms: v[10],
        discard_ios: (n >= 15).then_some(v[11]),
        flush_ios: (n >= 17).then_some(v[15]),
        flush_ticks_ms: (n >= 17).then_some(v[16]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_fixture_with_17_fields() {
        let text = include_str!("../../tests/fixtures/proc/6.18.44/sys_block_vda_stat");
        let c = parse_block_stat(text).unwrap();
        assert_eq!(c.read_ios, 26873);
        assert_eq!(c.read_merges, 5324);
        assert_eq!(c.read_sectors, 2585106);
        assert_eq!(c.read_ticks_ms, 14229);
        assert_eq!(c.write_ios, 4480);
        assert_eq!(c.write_merges, 10491);
        assert_eq!(c.write_sectors, 1089752);
        assert_eq!(c.write_ticks_ms, 2414);
        assert_eq!(c.in_flight, 0);
        assert_eq!(c.io_ticks_ms, 5848);
        assert_eq!(c.time_in_queue_ms, 16927);
        assert_eq!(c.discard_ios, Some(3761));
        assert_eq!(c.flush_ios, Some(761));
        assert_eq!(c.flush_ticks_ms, Some(13));
    }

    #[test]
    fn older_kernels_have_fewer_fields() {
        let c = parse_block_stat("1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        assert_eq!(
            (c.time_in_queue_ms, c.discard_ios, c.flush_ios),
            (11, None, None)
        );
        let c = parse_block_stat("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").unwrap();
        assert_eq!(
            (c.discard_ios, c.flush_ios, c.flush_ticks_ms),
            (Some(12), None, None)
        );
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_block_stat("").is_err());
        assert!(parse_block_stat("1 2 3 4 5 6 7 8 9 10").is_err());
        assert!(parse_block_stat("1 2 3 4 5 6 7 8 9 10 x").is_err());
        assert!(parse_block_stat("1 2 3 4 5 6 7 8 9 10 99999999999999999999999").is_err());
    }
}
