//! A load ramp on a laid-out dataset: the points the controller asks for, each one measured
//! window of the workload paced at its offered rate, back to back on the same stack (caches
//! are not dropped between points), then one run record with every point in `ramp`.

use super::Prepared;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::plan::Plan;
use bakeoff_core::ramp::Stop;
use bakeoff_core::ramp::{next_point, paced_plan, Next, Phase, RampPoint, RampRecord, RampSpec};
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::units::format_nanos;
use std::sync::atomic::{AtomicBool, Ordering};

/// The records a ramp keeps while it runs: the best point's (its figures become the run's)
/// and the latest one's (for a ramp that never met the limit).
#[derive(Default)]
struct Kept {
    best: Option<(f64, RunRecord)>,
    latest: Option<RunRecord>,
}

impl Kept {
    fn keep(&mut self, point: &RampPoint, record: RunRecord) {
        let better = self
            .best
            .as_ref()
            .is_none_or(|(r, _)| point.offered_ops_s > *r);
        if point.good() && better {
            self.best = Some((point.offered_ops_s, record));
        } else {
            self.latest = Some(record);
        }
    }

    /// The record whose figures the run shows.
    fn shown(self) -> Option<RunRecord> {
        self.best.map(|(_, r)| r).or(self.latest)
    }
}

/// Runs the ramp `spec` of `plan` on `prepared` and returns one record: the figures of the
/// headline point (or of the last point, if none met the limit) and every point in `ramp`.
/// Ctrl-C ends it with the finished points kept; a failed point fails the run.
pub fn measure_ramp(
    spec: &RampSpec,
    plan: &Plan,
    prepared: &mut Prepared,
    interrupt: &AtomicBool,
    quiet: bool,
) -> Result<RunRecord, Failure> {
    let mut point = |rate: f64| {
        let point_plan = paced_plan(plan, rate, spec);
        // A dataset sized by the offered load is laid out again for a point that needs more.
        prepared.fit(&point_plan, interrupt, quiet)?;
        prepared.measure(&point_plan, interrupt, quiet)
    };
    ramp_points(spec, interrupt, quiet, &mut point)
}

/// The ramp `spec` with `measure_point` measuring one point at an offered rate (ops/s):
/// here, or on every rank of an MPI job.
pub fn ramp_points(
    spec: &RampSpec,
    interrupt: &AtomicBool,
    quiet: bool,
    measure_point: &mut dyn FnMut(f64) -> Result<RunRecord, Failure>,
) -> Result<RunRecord, Failure> {
    let mut points: Vec<RampPoint> = Vec::new();
    let mut kept = Kept::default();
    let mut unfinished: Option<RunRecord> = None;
    let stop = loop {
        let outcomes: Vec<_> = points.iter().map(RampPoint::outcome).collect();
        let (rate, phase) = match next_point(spec, &outcomes) {
            Next::Done(stop) => break stop,
            Next::Point {
                offered_ops_s,
                phase,
            } => (offered_ops_s, phase),
        };
        // Before the first point the harness itself sees the interrupt and ends it at once.
        if interrupt.load(Ordering::Relaxed) && !points.is_empty() {
            break Stop::Interrupted;
        }
        let index = points.len() as u32 + 1;
        if !quiet {
            eprintln!(
                "ramp: point {index} ({}): {rate:.0} ops/s offered for {:.0}s",
                phase_name(phase),
                spec.point.as_secs_f64()
            );
        }
        let record = match measure_point(rate) {
            Err(f) if f.code == Code::Interrupted && !points.is_empty() => break Stop::Interrupted,
            other => other?,
        };
        match record.status {
            RunStatus::Completed => {}
            RunStatus::Interrupted => {
                unfinished = Some(record);
                break Stop::Interrupted;
            }
            RunStatus::Failed => {
                unfinished = Some(record);
                break Stop::Failed;
            }
        }
        let point = RampPoint::from_record(&record, index, rate, phase, &spec.limit);
        if !quiet {
            eprintln!("ramp: point {index}: {}", point_line(&point));
        }
        kept.keep(&point, record);
        points.push(point);
    };
    // A failed point's record carries the error; an interrupted ramp shows its best finished
    // point, or the unfinished one if none finished.
    let mut record = match stop {
        Stop::Failed => unfinished,
        _ => kept.shown().or(unfinished),
    }
    .ok_or_else(|| {
        failure(
            Code::Interrupted,
            "interrupted before the ramp's first point",
        )
    })?;
    record.status = match stop {
        Stop::Interrupted => RunStatus::Interrupted,
        Stop::Failed => RunStatus::Failed,
        _ => RunStatus::Completed,
    };
    record.ramp = Some(RampRecord::finish(spec, points, stop));
    Ok(record)
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Climb => "climbing",
        Phase::Bisect => "bisecting",
    }
}

/// `achieved 398 ops/s, mean 410 µs, p99 1.20 ms, p99.9 2.10 ms: within the limit`.
fn point_line(p: &RampPoint) -> String {
    let lat = |v: Option<f64>| v.map_or("-".into(), format_nanos);
    let verdict = match (p.over_limit, p.saturated) {
        (false, false) => "within the limit",
        (true, _) => "over the limit",
        (false, true) => "saturated (achieved < 95% of offered)",
    };
    format!(
        "achieved {:.0} ops/s, mean {}, p99 {}, p99.9 {}: {verdict}",
        p.achieved_ops_s,
        lat(p.lat_mean_ns),
        lat(p.lat_p99_ns.map(|v| v as f64)),
        lat(p.lat_p999_ns.map(|v| v as f64)),
    )
}
