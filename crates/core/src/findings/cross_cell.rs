//! Findings across the cells of a comparison: database cells whose throughputs differ, so that
//! their costs per transaction are not costs of the same load.

use super::{found, Finding, Severity};
use crate::record::{RunRecord, RunStatus};

/// Throughputs of database cells further apart than this (percent of the lower) make their
/// costs per transaction incomparable.
pub const RATE_GAP_PCT: f64 = 10.0;

fn median_tps(runs: &[RunRecord]) -> Option<f64> {
    let mut v: Vec<f64> = (runs.iter())
        .filter(|r| r.status != RunStatus::Failed && r.database.is_some())
        .filter_map(|r| r.summary.tps)
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// `costs_at_different_rates`: over `cells` (label, runs), the database cells' median
/// transactions per second differ by more than [`RATE_GAP_PCT`]. At one checkpoint interval a
/// stack that completes more transactions spreads each cycle's writes (PostgreSQL's full-page
/// images, the pages a checkpoint or InnoDB's flushing writes back) over more of them: its costs
/// per transaction are lower because it is faster, not because it is cheaper.
pub fn costs_at_different_rates(cells: &[(&str, &[RunRecord])]) -> Option<Finding> {
    let tps: Vec<(&str, f64)> = (cells.iter())
        .filter_map(|(label, runs)| median_tps(runs).map(|t| (*label, t)))
        .collect();
    let lo = tps.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
    let hi = tps.iter().map(|t| t.1).fold(0.0, f64::max);
    if tps.len() < 2 || 100.0 * (hi / lo - 1.0) <= RATE_GAP_PCT {
        return None;
    }
    let each: Vec<String> = tps.iter().map(|(l, t)| format!("{l} {t:.0}")).collect();
    let ev = format!(
        "transactions per second (median): {}; {:.0}% apart",
        each.join(", "),
        100.0 * (hi / lo - 1.0)
    );
    let fix = format!(
        "compare the log and device bytes per transaction at a common offered rate every \
         stack carries (e.g. rate_tps={:.0}); at each stack's own maximum the faster one spreads \
         each checkpoint cycle's writes (PostgreSQL's full-page images, the pages InnoDB writes \
         back) over more transactions",
        (0.8 * lo).floor().max(1.0)
    );
    let title = "the database cells ran at different throughputs: their costs per transaction \
                 are not those of the same load";
    found("costs_at_different_rates", Severity::Info, title, ev, fix)
}
