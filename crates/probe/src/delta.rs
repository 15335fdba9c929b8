//! Pure delta math: two snapshots of counters → the figures of the run record.

use crate::devices::DeviceInfo;
use crate::parse::{CpuTimes, DiskCounters};
use bakeoff_core::record::{CpuStats, DeviceStats};

/// `end - start` of a monotonic counter, allowing for wrap-around.
///
/// If the counter went backwards and both values fit in 32 bits, it is taken to have wrapped at
/// 2^32 (32-bit kernels, and the kernel's 32-bit millisecond tick fields). Otherwise it was reset
/// (device re-created) and the delta is 0 rather than a huge bogus number.
pub fn counter_delta(start: u64, end: u64) -> u64 {
    if end >= start {
        end - start
    } else if start <= u64::from(u32::MAX) {
        u64::from((end as u32).wrapping_sub(start as u32))
    } else {
        0
    }
}

/// `num / den` as f64, or 0 when `den` is not positive (so no NaN or infinity leaks into records).
fn share(num: f64, den: f64) -> f64 {
    if den > 0.0 && den.is_finite() {
        num / den
    } else {
        0.0
    }
}

/// Whole-machine CPU use between two `/proc/stat` snapshots.
///
/// Percentages are of the total delta including idle and iowait; busy is
/// user + nice + system + irq + softirq + steal; `user_pct` includes nice; `busy_us` is the busy
/// ticks converted with `ticks_per_sec` (see [`crate::ticks_per_second`]). `cpus` is taken from
/// `end`.
pub fn cpu_stats(start: &CpuTimes, end: &CpuTimes, ticks_per_sec: f64) -> CpuStats {
    let d = |f: fn(&CpuTimes) -> u64| counter_delta(f(start), f(end)) as f64;
    let (user, nice, system) = (d(|c| c.user), d(|c| c.nice), d(|c| c.system));
    let (idle, iowait) = (d(|c| c.idle), d(|c| c.iowait));
    let (irq, softirq, steal) = (d(|c| c.irq), d(|c| c.softirq), d(|c| c.steal));
    let busy = user + nice + system + irq + softirq + steal;
    let total = busy + idle + iowait;
    let pct = |x: f64| 100.0 * share(x, total);
    CpuStats {
        cpus: end.cpus,
        busy_pct: pct(busy),
        user_pct: pct(user + nice),
        system_pct: pct(system),
        iowait_pct: pct(iowait),
        irq_pct: pct(irq),
        softirq_pct: pct(softirq),
        steal_pct: pct(steal),
        busy_us: share(busy, ticks_per_sec) * 1e6,
        split: None,
    }
}

/// One device's figures between two `/sys/block/<dev>/stat` snapshots taken `secs` apart.
///
/// Bytes are sectors × 512; average sizes and waits are `None` when there were no operations;
/// waits are tick milliseconds per operation, in µs; `util_pct` is the share of the window with
/// I/O in flight, clamped to 0–100; `flush_ops` is present only when both snapshots have it.
pub fn device_stats(
    dev: &DeviceInfo,
    start: &DiskCounters,
    end: &DiskCounters,
    secs: f64,
) -> DeviceStats {
    let d = |f: fn(&DiskCounters) -> u64| counter_delta(f(start), f(end));
    let (read_ops, write_ops) = (d(|c| c.read_ios), d(|c| c.write_ios));
    let read_bytes = d(|c| c.read_sectors).saturating_mul(512);
    let write_bytes = d(|c| c.write_sectors).saturating_mul(512);
    let per_op = |x: f64, ops: u64| (ops > 0).then(|| x / ops as f64);
    let util = 100.0 * share(d(|c| c.io_ticks_ms) as f64, secs * 1000.0);
    DeviceStats {
        name: dev.name.clone(),
        role: dev.role.clone(),
        model: dev.model.clone(),
        loop_backing: dev.loop_backing.clone(),
        loop_dio: dev.loop_dio,
        read_ops,
        read_bytes,
        write_ops,
        write_bytes,
        flush_ops: start
            .flush_ios
            .zip(end.flush_ios)
            .map(|(s, e)| counter_delta(s, e)),
        read_iops: share(read_ops as f64, secs),
        write_iops: share(write_ops as f64, secs),
        avg_read_size_bytes: per_op(read_bytes as f64, read_ops),
        avg_write_size_bytes: per_op(write_bytes as f64, write_ops),
        avg_read_wait_us: per_op(d(|c| c.read_ticks_ms) as f64 * 1e3, read_ops),
        avg_write_wait_us: per_op(d(|c| c.write_ticks_ms) as f64 * 1e3, write_ops),
        util_pct: util.clamp(0.0, 100.0),
        avg_queue_depth: (secs > 0.0).then(|| d(|c| c.time_in_queue_ms) as f64 / (secs * 1000.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_wrap_at_32_bits_or_reset() {
        assert_eq!(counter_delta(5, 7), 2);
        assert_eq!(counter_delta(u64::from(u32::MAX) - 1, 3), 5);
        assert_eq!(
            counter_delta(1 << 40, 3),
            0,
            "a 64-bit counter going back was reset"
        );
        assert_eq!(counter_delta(u64::MAX, u64::MAX), 0);
    }

    fn times(user: u64, system: u64, idle: u64, iowait: u64) -> CpuTimes {
        CpuTimes {
            user,
            nice: 0,
            system,
            idle,
            iowait,
            irq: 0,
            softirq: 0,
            steal: 0,
            cpus: 2,
        }
    }

    #[test]
    fn cpu_shares_of_total() {
        let s = cpu_stats(&times(0, 0, 0, 0), &times(30, 20, 40, 10), 100.0);
        assert_eq!(s.busy_pct, 50.0);
        assert_eq!(s.user_pct, 30.0);
        assert_eq!(s.system_pct, 20.0);
        assert_eq!(s.iowait_pct, 10.0);
        assert_eq!(s.busy_us, 500_000.0, "50 ticks at 100 Hz");
        assert_eq!(s.cpus, 2);
        let none = cpu_stats(&times(1, 1, 1, 1), &times(1, 1, 1, 1), 0.0);
        assert_eq!((none.busy_pct, none.busy_us), (0.0, 0.0));
    }

    fn device() -> DeviceInfo {
        DeviceInfo {
            name: "vda".into(),
            role: "stack".into(),
            model: None,
            loop_backing: None,
            loop_dio: None,
        }
    }

    #[test]
    fn device_rates_sizes_and_waits() {
        let start = DiskCounters {
            io_ticks_ms: u64::from(u32::MAX) - 499,
            flush_ios: Some(1),
            ..DiskCounters::default()
        };
        let end = DiskCounters {
            read_ios: 100,
            read_sectors: 1600,
            read_ticks_ms: 50,
            io_ticks_ms: 500,
            flush_ios: Some(4),
            ..DiskCounters::default()
        };
        let s = device_stats(&device(), &start, &end, 2.0);
        assert_eq!(
            (s.read_ops, s.read_bytes, s.read_iops),
            (100, 819_200, 50.0)
        );
        assert_eq!(s.avg_read_size_bytes, Some(8192.0));
        assert_eq!(s.avg_read_wait_us, Some(500.0));
        assert_eq!(
            (s.write_ops, s.avg_write_size_bytes, s.avg_write_wait_us),
            (0, None, None)
        );
        assert_eq!(s.util_pct, 50.0, "1000 ms of 2 s, across the 32-bit wrap");
        assert_eq!(s.flush_ops, Some(3));
        let no_flush = DiskCounters::default();
        assert_eq!(
            device_stats(&device(), &no_flush, &end, 2.0).flush_ops,
            None
        );
        let busy = DiskCounters {
            io_ticks_ms: 5000,
            ..end
        };
        assert_eq!(device_stats(&device(), &end, &busy, 1.0).util_pct, 100.0);
        assert_eq!(device_stats(&device(), &end, &busy, 0.0).util_pct, 0.0);
    }
}
