//! Turns the workers' statistics into results: per role, and per operation kind over all roles
//! (histograms merged, so a headline percentile is the percentile of every operation of the
//! kind, not the worst role's).

use crate::harness::RoleDesc;
use crate::histogram::LatencyCounts;
use crate::stats::{latency, ThreadStats, Totals};
use bakeoff_core::plan::OpKind;
use bakeoff_core::record::{OpStats, RoleResult};
use hdrhistogram::Histogram;
use std::time::Duration;

/// The union of the latency counts `pick` selects from `threads`, as a histogram.
fn merged<'a>(
    threads: &[&'a ThreadStats],
    pick: impl Fn(&'a ThreadStats) -> Option<&'a LatencyCounts>,
) -> Option<Histogram<u64>> {
    let mut acc: Option<LatencyCounts> = None;
    for h in threads.iter().filter_map(|t| pick(t)) {
        match &mut acc {
            None => acc = Some(h.clone()),
            Some(a) => a.add(h),
        }
    }
    acc.map(|a| a.to_histogram())
}

/// Per kind that occurred: counts from `delta` (the window), latency from the merged histograms.
pub fn merge_kinds(threads: &[&ThreadStats], delta: &Totals, measured: Duration) -> Vec<OpStats> {
    let secs = measured.as_secs_f64();
    let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let mut ops = Vec::new();
    for kind in OpKind::ALL {
        let i = kind.index();
        let lat = merged(threads, |t| t.lat[i].as_ref());
        if lat.is_none() && delta.ops[i] == 0 {
            continue;
        }
        let service = merged(threads, |t| t.service[i].as_ref());
        ops.push(OpStats {
            kind,
            ops: delta.ops[i],
            bytes: delta.bytes[i],
            iops: rate(delta.ops[i]),
            mb_s: rate(delta.bytes[i]) / 1e6,
            lat: lat.as_ref().and_then(latency),
            service: service.as_ref().and_then(latency),
        });
    }
    ops
}

/// One role's results over the window.
pub(crate) fn role_result(
    role: &RoleDesc,
    threads: &[ThreadStats],
    delta: &Totals,
    measured: Duration,
) -> RoleResult {
    let refs: Vec<&ThreadStats> = threads.iter().collect();
    // Both counted inside the window: commits served and log writes issued.
    let commits: u64 = threads.iter().map(|t| t.commits).sum();
    let log_writes = delta.ops[OpKind::LogWrite.index()];
    RoleResult {
        name: role.name.clone(),
        threads: role.threads,
        ops: merge_kinds(&refs, delta, measured),
        commits_per_write: (role.log_writer && log_writes > 0)
            .then(|| commits as f64 / log_writes as f64),
    }
}
