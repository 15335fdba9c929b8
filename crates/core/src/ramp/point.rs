//! A ramp's points as the run record keeps them: each the whole-machine accounting of one
//! measured window at one offered rate, and the ramp's headline and why it stopped.

use super::control::{best, Outcome, Phase, Stop};
use super::{Limit, RampSpec, Stat, SATURATED_BELOW};
use crate::op::OpKind;
use crate::plan::{Plan, RolePlan};
use crate::record::{CpuStats, OpStats, RunRecord};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The roles a ramp paces: the ones that issue the workload's operations (not a log writer or
/// a db writer, which serve the others' commits and dirty blocks).
pub fn is_paced(role: &RolePlan) -> bool {
    role.threads > 0 && !role.log_writer && !role.db_writer
}

/// Why `plan` cannot be ramped, if it cannot.
pub fn check_rampable(plan: &Plan) -> Result<(), String> {
    if let Some(r) = plan.roles.iter().find(|r| r.rate_iops.is_some()) {
        return Err(format!(
            "the ramp sets every point's rate: remove rate_iops (set for role '{}')",
            r.name
        ));
    }
    if !plan.roles.iter().any(is_paced) {
        return Err("the workload has no role that issues operations to pace".into());
    }
    Ok(())
}

/// The plan of one point: `plan` with `offered_ops_s` split evenly over the threads of its
/// paced roles in every client process (each thread an open loop at its share), measured for
/// the spec's point length after the workload's own warm-up (`ramp_time`). A dataset sized by
/// the offered load (`data_per_ops`) is re-sized to the point's rate; the runner lays it out
/// again whenever a point's filesets differ from those laid out.
pub fn paced_plan(plan: &Plan, offered_ops_s: f64, spec: &RampSpec) -> Plan {
    let threads: u32 = plan
        .roles
        .iter()
        .filter(|r| is_paced(r))
        .map(|r| r.threads)
        .sum();
    // With clients=N every client runs every role: N times the threads offer the load.
    let all_threads = threads.max(1).saturating_mul(plan.clients.max(1));
    let per_thread = offered_ops_s / f64::from(all_threads);
    let mut paced = plan.clone();
    paced.runtime = spec.point;
    // A point's automatic warm-up lasts at most as long as the point (and at least one
    // steadiness window): an overloaded point is as steady as it gets, and the climb must not
    // spend ramp_max on each.
    let window = Duration::from_secs(crate::steady::rules::WINDOW_S as u64 + 1);
    if let Some(auto) = paced.ramp_auto.as_mut() {
        auto.max = auto.max.min(spec.point.max(window));
    }
    for role in paced.roles.iter_mut().filter(|r| is_paced(r)) {
        role.rate_iops = Some(per_thread);
    }
    paced.fit_datasets_to_rate();
    paced
}

/// One load point: what was offered, what was achieved, at what latency, and what it cost
/// the whole machine. Latency counts from each operation's scheduled start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RampPoint {
    /// Position in the order the points ran, from 1.
    pub index: u32,
    /// Climbing or bisecting.
    pub phase: Phase,
    /// Offered operations per second (the schedule's rate over all paced threads).
    pub offered_ops_s: f64,
    /// Completed operations per second.
    pub achieved_ops_s: f64,
    /// Completed operations (every kind but syncs and commits, which wait on others).
    pub ops: u64,
    /// Length of the measured window.
    pub measured_ns: u64,
    /// Mean latency over every operation.
    pub lat_mean_ns: Option<f64>,
    /// Median latency (the slowest kind's: see `docs/ramp.md`).
    pub lat_p50_ns: Option<u64>,
    /// 99th percentile latency (the slowest kind's).
    pub lat_p99_ns: Option<u64>,
    /// 99.9th percentile latency (the slowest kind's).
    pub lat_p999_ns: Option<u64>,
    /// Largest latency.
    pub lat_max_ns: Option<u64>,
    /// Median service time (submission to completion; the slowest kind's), beside the latency
    /// that counts queueing behind the schedule.
    pub service_p50_ns: Option<u64>,
    /// The limited statistic's value.
    pub limit_stat_ns: Option<f64>,
    /// It exceeded the limit.
    pub over_limit: bool,
    /// Achieved below 95 % of offered.
    pub saturated: bool,
    /// Whole-machine CPU over the point, split as in every run.
    pub cpu: Option<CpuStats>,
    /// CPU µs the work cost per operation (bakeoff, the stack's daemons, kernel threads).
    pub cpu_us_per_op: Option<f64>,
    /// Bytes read from the stack's devices (data and log stacks).
    pub device_read_bytes: Option<u64>,
    /// Bytes written to the stack's devices.
    pub device_write_bytes: Option<u64>,
    /// Device read MB/s (10^6 bytes).
    pub device_read_mb_s: Option<f64>,
    /// Device write MB/s.
    pub device_write_mb_s: Option<f64>,
    /// Largest device utilisation, %.
    pub device_util_pct: Option<f64>,
    /// Page cache at the end of the point.
    pub page_cache_bytes: Option<u64>,
    /// Largest dirty page cache seen.
    pub dirty_max_bytes: Option<u64>,
    /// ZFS ARC size at the end, where a kstat exists.
    pub arc_bytes: Option<u64>,
    /// Bytes of the laid-out dataset.
    pub dataset_bytes: u64,
    /// Per operation kind over every role, as a run reports them.
    pub kinds: Vec<OpStats>,
}

/// The ramp's answer: the highest offered rate that met the limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RampHeadline {
    /// The point (its `index`).
    pub point: u32,
    /// Offered operations per second there.
    pub offered_ops_s: f64,
    /// Achieved operations per second there: "N ops/s at <= limit".
    pub achieved_ops_s: f64,
    /// The limited statistic there.
    pub limit_stat_ns: Option<f64>,
    /// The ramp stopped at `max_points` without crossing the limit: the stack carries more.
    pub lower_bound: bool,
}

/// A whole ramp in the run record (`RunRecord.ramp`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RampRecord {
    /// The ramp as resolved (defaults filled in).
    pub spec: RampSpec,
    /// The limit as text (`p99 <= 5.00 ms`).
    pub limit: String,
    /// Every finished point, in the order run.
    pub points: Vec<RampPoint>,
    /// The highest rate that met the limit; `None` if no point did.
    pub headline: Option<RampHeadline>,
    /// Why the ramp stopped.
    pub stop: Stop,
    /// The first climbing rate that was over the limit or saturated, if one was.
    pub stopped_at_ops_s: Option<f64>,
    /// Caches are dropped once before the first point, never between points: the load grows
    /// on a warm stack, as seed 004's did.
    pub caches_dropped_between_points: bool,
}

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

    /// What the controller needs of it.
    pub fn outcome(&self) -> Outcome {
        Outcome {
            offered_ops_s: self.offered_ops_s,
            phase: self.phase,
            over_limit: self.over_limit,
            saturated: self.saturated,
        }
    }

    /// Met the limit and carried the load.
    pub fn good(&self) -> bool {
        self.outcome().good()
    }

    /// Device bytes read per operation.
    pub fn device_read_bytes_per_op(&self) -> Option<f64> {
        per_op(self.device_read_bytes, self.ops)
    }

    /// Device bytes written per operation.
    pub fn device_write_bytes_per_op(&self) -> Option<f64> {
        per_op(self.device_write_bytes, self.ops)
    }
}

fn per_op(bytes: Option<u64>, ops: u64) -> Option<f64> {
    bytes.filter(|_| ops > 0).map(|b| b as f64 / ops as f64)
}

/// Latency over several operation kinds: the mean is exact (weighted by counts); a percentile
/// is the slowest kind's, which bounds the percentile of all operations together from above.
struct Latencies {
    mean: Option<f64>,
    max: Option<u64>,
}

impl Latencies {
    fn of(kinds: &[&OpStats]) -> Latencies {
        let timed: Vec<(&OpStats, &crate::record::Latency)> = (kinds.iter())
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

impl RampRecord {
    /// The record of a ramp that ran `points` and stopped for `stop`.
    pub fn finish(spec: &RampSpec, points: Vec<RampPoint>, stop: Stop) -> RampRecord {
        let outcomes: Vec<Outcome> = points.iter().map(RampPoint::outcome).collect();
        let headline = best(&outcomes).map(|i| {
            let p = &points[i];
            RampHeadline {
                point: p.index,
                offered_ops_s: p.offered_ops_s,
                achieved_ops_s: p.achieved_ops_s,
                limit_stat_ns: p.limit_stat_ns,
                lower_bound: stop == Stop::MaxPoints,
            }
        });
        let stopped_at_ops_s = (points.iter())
            .find(|p| p.phase == Phase::Climb && !p.good())
            .map(|p| p.offered_ops_s);
        RampRecord {
            spec: spec.clone(),
            limit: spec.limit.to_string(),
            points,
            headline,
            stop,
            stopped_at_ops_s,
            caches_dropped_between_points: false,
        }
    }
}
