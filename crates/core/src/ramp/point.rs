//! A ramp's points as the run record keeps them: each the whole-machine accounting of one
//! measured window at one offered rate, and the ramp's headline and why it stopped; and the
//! plan of each point. A point is read from its window's run record in `measure.rs`.

use super::control::{best, Outcome, Phase, Stop};
use super::RampSpec;
use crate::plan::{Plan, RolePlan};
use crate::record::{CpuStats, OpStats};
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
    if let Some(algorithm) = plan.verify {
        return Err(format!(
            "verify={} checks each block against the writes of one run, and a ramp runs its \
             points one after another over one layout: run the rates as separate runs",
            algorithm.name()
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
