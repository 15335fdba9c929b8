//! Findings: rules over measured figures that explain results, with evidence and a suggestion.
//!
//! [`run_findings`] applies the rules to one run; [`cell_findings`] judges the repetitions of
//! one cell and merges their run findings. Thresholds are the constants below; every rule is
//! listed in `docs/findings.md`. Figures that are `None` make a rule stay silent, never panic.

use crate::plan::{IoMix, Step, SyncMode};
use crate::record::{RunRecord, RunStatus, Summary};
use crate::units::{format_nanos, format_rate, format_secs};

pub use crate::record::{Finding, Severity};

/// Share of application read bytes that did not reach the devices at which reads count as
/// cache-served, %.
pub const CACHE_HIT_PCT: f64 = 50.0;
/// Device bytes per application read, as a fraction of the read size, below which reads count
/// as cache-served.
pub const CACHE_BYTES_FRACTION: f64 = 0.5;
/// Device bytes per application read, as a multiple of the read size, from which
/// `read_amplification` fires.
pub const READ_AMP: f64 = 1.8;
/// Highest read amplification one extra record per read explains (misaligned I/O).
pub const MISALIGNED_AMP_MAX: f64 = 2.3;
/// Average device read, as a multiple of max(record size, read size), that means prefetch.
pub const PREFETCH_FACTOR: f64 = 1.5;
/// Write amplification from which a journal or intent log writing beside the data is named.
pub const WRITE_DOUBLING_MIN: f64 = 1.7;
/// Write amplification from which `write_amplification` fires (and `write_doubling` stops).
pub const WRITE_AMP_HIGH: f64 = 3.0;
/// Whole-machine busy CPU from which the result measures CPU, %.
pub const CPU_BUSY_PCT: f64 = 90.0;
/// Stack-device utilisation from which the device is saturated, %.
pub const DEVICE_UTIL_PCT: f64 = 95.0;
/// Change of throughput over the measured window (linear fit) that is not steady, %.
pub const TREND_PCT: f64 = 20.0;
/// Measured samples (seconds) needed to judge steady state.
pub const MIN_STEADY_SAMPLES: usize = 5;
/// Runtime suggested when a run was too short to judge, seconds.
pub const SUGGESTED_RUNTIME_S: u64 = 30;
/// Device write bytes per application write byte below which buffered writes were absorbed.
pub const WRITES_ABSORBED_AMP: f64 = 0.5;
/// Share of all CPU time used by other processes plus steal above which the run had company, %.
pub const CPU_CONTENTION_PCT: f64 = 10.0;
/// Coefficient of variation of IOPS between repetitions above which results are unstable, %.
pub const CV_PCT: f64 = 20.0;

use Severity::{Info, Warning};

fn found(
    id: &str,
    sev: Severity,
    title: impl Into<String>,
    ev: String,
    fix: impl Into<String>,
) -> Option<Finding> {
    Some(Finding {
        id: id.into(),
        severity: sev,
        title: title.into(),
        evidence: ev,
        suggestion: fix.into(),
    })
}

mod context;
mod cross_cell;
mod db_rules;
mod durability_rules;
mod io_rules;
mod machine_rules;

use context::Ctx;
pub use cross_cell::{costs_at_different_rates, riskier_than_baseline, RATE_GAP_PCT};
use db_rules::*;
use durability_rules::*;
use io_rules::*;
use machine_rules::*;

/// The per-run rules over one run record. A failed run's figures are not results: no findings.
pub fn run_findings(record: &RunRecord) -> Vec<Finding> {
    // A window too short to measure gives no verdict (see `steady::MIN_WINDOW`).
    if record.status == RunStatus::Failed || record.window_too_short() {
        return Vec::new();
    }
    let c = Ctx::new(record);
    let rules: [fn(&Ctx) -> Option<Finding>; 19] = [
        cache_served,
        mirrored_writes,
        writes_absorbed,
        cpu_contention,
        read_amplification,
        prefetch_inflation,
        write_doubling,
        write_amplification,
        cpu_saturated,
        device_saturated,
        steadiness,
        dataset_fits_in_memory,
        compressible_data,
        warm_run,
        no_checkpoint,
        innodb_writes_deferred,
        acknowledged_commits_lost,
        crash_damage,
        crash_states_clean,
    ];
    rules.iter().filter_map(|rule| rule(&c)).collect()
}

/// Rules over the repetitions of one cell: too few repetitions, results that differ a lot
/// between repetitions, then the run findings merged. A run finding is reported once, with the
/// evidence of the median run (by total IOPS) among those it fired in and how many did; one
/// seen in no more than half of the runs is downgraded to [`Severity::Info`]. Failed runs
/// do not count.
pub fn cell_findings(runs: &[RunRecord], min_repetitions: usize) -> Vec<Finding> {
    let ok: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.status != RunStatus::Failed)
        .collect();
    let mut out = Vec::new();
    if ok.len() < min_repetitions {
        let ev = format!(
            "{} usable of {} runs; need {min_repetitions}",
            ok.len(),
            runs.len()
        );
        let fix = format!("repeat the cell at least {min_repetitions} times");
        let title = "too few repetitions to tell a difference from noise".to_string();
        out.extend(found("too_few_repetitions", Warning, title, ev, fix));
    }
    out.extend(variance(&ok));
    out.extend(merge(&ok));
    out
}

type Metric = fn(&Summary) -> Option<f64>;

fn variance(runs: &[&RunRecord]) -> Option<Finding> {
    let metrics: [(&str, Metric); 2] = [
        ("read IOPS", |s| s.read_iops),
        ("write IOPS", |s| s.write_iops),
    ];
    let mut parts = Vec::new();
    for (name, get) in metrics {
        let v: Vec<f64> = runs
            .iter()
            .filter_map(|r| get(&r.summary))
            .filter(|x| x.is_finite())
            .collect();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let cv = 100.0 * sd / mean;
        if v.len() >= 2 && mean > 0.0 && cv > CV_PCT {
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
            parts.push(format!(
                "{name} {}–{} over {} runs: mean {}, CV {cv:.1}%",
                format_rate(lo),
                format_rate(hi),
                v.len(),
                format_rate(mean)
            ));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let fix = "look for not_steady and warm_run; a longer ramp_time and runtime, a quiet \
               machine and more repetitions";
    let title = "results differ a lot between repetitions";
    found("high_variance", Warning, title, parts.join("; "), fix)
}

fn merge(runs: &[&RunRecord]) -> Vec<Finding> {
    let total =
        |r: &RunRecord| r.summary.read_iops.unwrap_or(0.0) + r.summary.write_iops.unwrap_or(0.0);
    let per_run: Vec<(f64, Vec<Finding>)> =
        runs.iter().map(|r| (total(r), run_findings(r))).collect();
    let mut ids: Vec<&str> = Vec::new();
    for f in per_run.iter().flat_map(|(_, fs)| fs) {
        if !ids.contains(&f.id.as_str()) {
            ids.push(&f.id);
        }
    }
    ids.iter()
        .filter_map(|id| {
            let mut with: Vec<(f64, &Finding)> = (per_run.iter())
                .filter_map(|(t, fs)| fs.iter().find(|f| f.id == *id).map(|f| (*t, f)))
                .collect();
            with.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut f = with.get(with.len() / 2)?.1.clone();
            f.evidence += &format!(" (in {} of {} runs; median run)", with.len(), runs.len());
            if with.len() * 2 <= runs.len() {
                f.severity = Severity::Info;
            }
            Some(f)
        })
        .collect()
}

#[cfg(test)]
mod tests;
