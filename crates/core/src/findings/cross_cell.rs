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

/// Crash states over a cell's runs: (states checked, states that lost acknowledged commits,
/// states damaged); `None` when no run checked any.
fn crash_tally(runs: &[RunRecord]) -> Option<(u64, u64, u64)> {
    let tallies: Vec<(u64, u64, u64)> = (runs.iter())
        .filter_map(|r| r.durability.as_ref())
        .map(|d| {
            (
                d.states_checked,
                d.states_losing_commits(),
                d.states_damaged(),
            )
        })
        .collect();
    (!tallies.is_empty())
        .then(|| (tallies.iter()).fold((0, 0, 0), |(a, b, c), t| (a + t.0, b + t.1, c + t.2)))
}

/// `riskier_than_baseline`: a cell whose crash states lost acknowledged commits or were
/// damaged where the baseline's were not. Whatever its verdicts on speed, a reader must not
/// take it for the better choice without knowing what it risks.
pub fn riskier_than_baseline(cell: &[RunRecord], baseline: &[RunRecord]) -> Option<Finding> {
    let (states, lost, damaged) = crash_tally(cell)?;
    let (base_states, base_lost, base_damaged) = crash_tally(baseline)?;
    let lost_more = lost > 0 && base_lost == 0;
    let damaged_more = damaged > 0 && base_damaged == 0;
    if !(lost_more || damaged_more) {
        return None;
    }
    let speed = match (median_tps(cell), median_tps(baseline)) {
        (Some(c), Some(b)) if b > 0.0 => format!("; transactions per second ×{:.2}", c / b),
        _ => String::new(),
    };
    let ev = format!(
        "of {states} crash states, {lost} lost acknowledged commits and {damaged} were damaged; \
         the baseline's: {base_lost} and {base_damaged} of {base_states}{speed}"
    );
    let title = "this cell risks what the baseline does not: a power cut loses its acknowledged \
                 commits or damages it";
    let fix = "weigh its verdicts on speed against its risk: the setting or stack that makes it \
               faster acknowledges before the data is durable or leaves torn pages (the runs' \
               durability.states say what each state found)";
    found("riskier_than_baseline", Severity::Warning, title, ev, fix)
}
