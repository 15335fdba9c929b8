//! Turns the workers' statistics into results: per role, and per operation kind over all roles
//! (histograms merged, so a headline percentile is the percentile of every operation of the
//! kind, not the worst role's). What a role recorded is first gathered as [`RoleCounts`]: exact
//! counts that add, across threads and across client processes, before any percentile is
//! taken.

use crate::histogram::LatencyCounts;
use crate::kinds::KINDS;
use crate::stats::{latency, ThreadStats, Totals};
use bakeoff_core::plan::{OpKind, Plan};
use bakeoff_core::record::{ClientOps, OpStats, RoleResult};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A group of threads as the results name it.
#[derive(Clone, Debug)]
pub struct RoleDesc {
    /// Role name.
    pub name: String,
    /// Threads it was planned with.
    pub threads: u32,
    /// A group-commit log writer (its results say how many commits each log write carried).
    pub log_writer: bool,
}

/// The roles of `plan` as results name them; `copies` runs of each (client processes).
pub(crate) fn role_descs(plan: &Plan, copies: u32) -> Vec<RoleDesc> {
    plan.roles
        .iter()
        .map(|r| RoleDesc {
            name: r.name.clone(),
            threads: r.threads * copies,
            log_writer: r.log_writer,
        })
        .collect()
}

/// What the threads of one role recorded over the measured window, exactly: operations and
/// bytes per kind, latency (and, under a rate, service-time) counts per kind, commits served.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct RoleCounts {
    /// Operations and bytes per kind in the window.
    pub delta: Totals,
    /// Latency counts per kind.
    pub lat: [Option<LatencyCounts>; KINDS],
    /// Service-time counts per kind (open loop only).
    pub service: [Option<LatencyCounts>; KINDS],
    /// Commits a log writer served in the window.
    pub commits: u64,
}

impl std::fmt::Debug for RoleCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoleCounts")
            .field("delta", &self.delta)
            .field("commits", &self.commits)
            .finish_non_exhaustive()
    }
}

fn add_counts(acc: &mut Option<LatencyCounts>, other: Option<&LatencyCounts>) {
    match (acc.as_mut(), other) {
        (Some(a), Some(b)) => a.add(b),
        (None, Some(b)) => *acc = Some(b.clone()),
        (_, None) => {}
    }
}

impl RoleCounts {
    /// The union of `threads`' statistics.
    pub fn of_threads(threads: &[ThreadStats]) -> RoleCounts {
        let mut c = RoleCounts {
            commits: threads.iter().map(|t| t.commits).sum(),
            ..RoleCounts::default()
        };
        for t in threads {
            c.delta.add(&t.window);
            for i in 0..KINDS {
                add_counts(&mut c.lat[i], t.lat[i].as_ref());
                add_counts(&mut c.service[i], t.service[i].as_ref());
            }
        }
        c
    }

    /// Adds another process's (or thread group's) counts of the same role.
    pub fn add(&mut self, other: &RoleCounts) {
        self.delta.add(&other.delta);
        self.commits += other.commits;
        for i in 0..KINDS {
            add_counts(&mut self.lat[i], other.lat[i].as_ref());
            add_counts(&mut self.service[i], other.service[i].as_ref());
        }
    }
}

/// Per kind that occurred: counts from `delta`, latency from the merged histograms.
fn op_stats(counts: &RoleCounts, measured: Duration) -> Vec<OpStats> {
    let secs = measured.as_secs_f64();
    let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let delta = &counts.delta;
    let mut ops = Vec::new();
    for kind in OpKind::ALL {
        let i = kind.index();
        let lat = counts.lat[i].as_ref().map(LatencyCounts::to_histogram);
        if lat.is_none() && delta.ops[i] == 0 {
            continue;
        }
        let service = counts.service[i].as_ref().map(LatencyCounts::to_histogram);
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

/// The results of a run: one per role, and per kind over every role.
pub fn summarize(
    roles: &[RoleDesc],
    counts: &[RoleCounts],
    measured: Duration,
) -> (Vec<RoleResult>, Vec<OpStats>) {
    let mut all = RoleCounts::default();
    counts.iter().for_each(|c| all.add(c));
    let results = roles
        .iter()
        .zip(counts)
        .map(|(role, c)| {
            // Both counted inside the window: commits served and log writes issued.
            let log_writes = c.delta.ops[OpKind::LogWrite.index()];
            RoleResult {
                name: role.name.clone(),
                threads: role.threads,
                ops: op_stats(c, measured),
                commits_per_write: (role.log_writer && log_writes > 0)
                    .then(|| c.commits as f64 / log_writes as f64),
            }
        })
        .collect();
    (results, op_stats(&all, measured))
}

/// What the `copies` of `plan` that reported (of `planned` started: client processes, MPI
/// ranks) recorded, added exactly into one result over `measured`: per role, per kind, and
/// the summed counts themselves.
pub fn add_copies(
    plan: &Plan,
    planned: u32,
    copies: &[&[RoleCounts]],
    measured: Duration,
) -> (Vec<RoleResult>, Vec<OpStats>, Vec<RoleCounts>) {
    let roles = role_descs(plan, planned);
    let mut counts = vec![RoleCounts::default(); roles.len()];
    for copy in copies {
        for (sum, role) in counts.iter_mut().zip(copy.iter()) {
            sum.add(role);
        }
    }
    let (results, ops) = summarize(&roles, &counts, measured);
    (results, ops, counts)
}

/// One copy's operations and bytes per kind (the kinds that occurred), over all its roles.
pub fn copy_ops(counts: &[RoleCounts]) -> Vec<ClientOps> {
    let mut own = Totals::default();
    counts.iter().for_each(|c| own.add(&c.delta));
    OpKind::ALL
        .into_iter()
        .filter(|k| own.ops[k.index()] > 0)
        .map(|k| ClientOps {
            kind: k,
            ops: own.ops[k.index()],
            bytes: own.bytes[k.index()],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_exactly_and_survive_json() {
        let kinds = [OpKind::Read, OpKind::Create];
        let mut a = ThreadStats::new(Default::default(), &kinds, false);
        let mut b = ThreadStats::new(Default::default(), &kinds, false);
        for ns in 1..=1000u64 {
            a.record(OpKind::Read, 8192, ns * 1000, ns * 1000, true);
            b.record(OpKind::Create, 0, ns * 7, ns * 7, ns % 2 == 0);
        }
        let one = RoleCounts::of_threads(&[a]);
        let two = RoleCounts::of_threads(&[b]);
        let text = serde_json::to_string(&two).unwrap();
        let back: RoleCounts = serde_json::from_str(&text).unwrap();
        let mut sum = one.clone();
        sum.add(&back);
        let create = sum.lat[OpKind::Create.index()].as_ref().unwrap();
        assert_eq!(
            create.to_histogram().len(),
            500,
            "only measured creates count"
        );
        let read = sum.lat[OpKind::Read.index()]
            .as_ref()
            .unwrap()
            .to_histogram();
        assert_eq!(read.len(), 1000);
        assert_eq!(
            read.max(),
            1_000_447,
            "the bucket of 1 ms, as HdrHistogram keeps it"
        );
        let roles = [RoleDesc {
            name: "r".into(),
            threads: 2,
            log_writer: false,
        }];
        let (per_role, ops) = summarize(&roles, &[sum], Duration::from_secs(2));
        assert_eq!(per_role[0].ops.len(), 2);
        assert_eq!(ops[0].kind, OpKind::Read);
        assert_eq!((ops[0].ops, ops[0].iops), (1000, 500.0));
        assert_eq!((ops[1].kind, ops[1].ops), (OpKind::Create, 500));
    }
}
