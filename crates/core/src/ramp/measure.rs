//! A ramp point read from the run record of its window: what the paced roles completed, their
//! latency (the slowest kind's percentiles), and what the stack's devices, the CPU and the
//! memory did over it.

use super::control::Phase;
use super::point::RampPoint;
use super::{Limit, Stat, SATURATED_BELOW};
use crate::op::OpKind;
use crate::record::{Latency, OpStats, RunRecord};

impl RampPoint {
    /// The point measured by `record` (one window at `offered_ops_s`).
    pub fn from_record(
        record: &RunRecord,
        index: u32,
        offered_ops_s: f64,
        phase: Phase,
        limit: &Limit,
    ) -> RampPoint {
        let paced: Vec<&str> = (record.plan.roles.iter())
            .filter(|r| r.rate_iops.is_some())
            .map(|r| r.name.as_str())
            .collect();
        let kinds: Vec<&OpStats> = (record.roles.iter())
            .filter(|r| paced.contains(&r.name.as_str()))
            .flat_map(|r| &r.ops)
            .filter(|o| !matches!(o.kind, OpKind::Sync | OpKind::Commit) && o.ops > 0)
            .collect();
        let ops: u64 = kinds.iter().map(|o| o.ops).sum();
        let secs = record.measured_ns as f64 / 1e9;
        let achieved = if secs > 0.0 { ops as f64 / secs } else { 0.0 };
        let lat = Latencies::of(&kinds);
        let limit_stat_ns = match limit.stat {
            Stat::Mean => lat.mean,
            Stat::Percentile(p) => lat.worst(&kinds, p).map(|v| v as f64),
        };
        let devices = Devices::of(record);
        let mem = record.memory.as_ref();
        let split = record.cpu.as_ref().and_then(|c| c.split.as_ref());
        RampPoint {
            index,
            phase,
            offered_ops_s,
            achieved_ops_s: achieved,
            ops,
            measured_ns: record.measured_ns,
            lat_mean_ns: lat.mean,
            lat_p50_ns: lat.worst(&kinds, 50.0),
            lat_p99_ns: lat.worst(&kinds, 99.0),
            lat_p999_ns: lat.worst(&kinds, 99.9),
            lat_max_ns: lat.max,
            service_p50_ns: (kinds.iter())
                .filter_map(|o| o.service.as_ref()?.at(50.0))
                .max(),
            over_limit: limit_stat_ns.is_some_and(|v| v > limit.max_ns as f64),
            limit_stat_ns,
            saturated: achieved < SATURATED_BELOW * offered_ops_s,
            cpu: record.cpu.clone(),
            cpu_us_per_op: split.filter(|_| ops > 0).map(|s| s.work_us() / ops as f64),
            device_read_bytes: devices.map(|d| d.read_bytes),
            device_write_bytes: devices.map(|d| d.write_bytes),
            device_read_mb_s: devices.map(|d| d.read_bytes as f64 / secs.max(1e-9) / 1e6),
            device_write_mb_s: devices.map(|d| d.write_bytes as f64 / secs.max(1e-9) / 1e6),
            device_util_pct: devices.map(|d| d.util_pct),
            page_cache_bytes: mem.map(|m| m.cached_end_bytes),
            dirty_max_bytes: mem.map(|m| m.dirty_max_bytes),
            arc_bytes: mem.and_then(|m| m.arc_size_bytes),
            dataset_bytes: record.plan.dataset_bytes(),
            kinds: record.ops.clone(),
        }
    }
}

/// Latency over several operation kinds: the mean is exact (weighted by counts); a percentile
/// is the slowest kind's, which bounds the percentile of all operations together from above.
struct Latencies {
    mean: Option<f64>,
    max: Option<u64>,
}

impl Latencies {
    fn of(kinds: &[&OpStats]) -> Latencies {
        let timed: Vec<(&OpStats, &Latency)> = (kinds.iter())
            .filter_map(|o| Some((*o, o.lat.as_ref()?)))
            .collect();
        let n: u64 = timed.iter().map(|(o, _)| o.ops).sum();
        let sum: f64 = timed.iter().map(|(o, l)| l.mean_ns * o.ops as f64).sum();
        Latencies {
            mean: (n > 0).then(|| sum / n as f64),
            max: timed.iter().map(|(_, l)| l.max_ns).max(),
        }
    }

    fn worst(&self, kinds: &[&OpStats], p: f64) -> Option<u64> {
        kinds.iter().filter_map(|o| o.lat.as_ref()?.at(p)).max()
    }
}

/// The stack's devices (data and log stacks; not the disks under loop images) over a point.
#[derive(Clone, Copy)]
struct Devices {
    read_bytes: u64,
    write_bytes: u64,
    util_pct: f64,
}

impl Devices {
    fn of(record: &RunRecord) -> Option<Devices> {
        let mine: Vec<_> = (record.devices.iter())
            .filter(|d| d.role == "stack" || d.role == "log")
            .collect();
        (!mine.is_empty()).then(|| Devices {
            read_bytes: mine.iter().map(|d| d.read_bytes).sum(),
            write_bytes: mine.iter().map(|d| d.write_bytes).sum(),
            util_pct: mine.iter().map(|d| d.util_pct).fold(0.0, f64::max),
        })
    }
}
