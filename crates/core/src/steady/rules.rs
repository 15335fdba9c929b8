//! The steadiness rules a plan carries, and the windows they are judged over: the automatic
//! warm-up (`ramp_time=auto`) and its cap, the stop rule (`ss=`), and the shortest measured
//! window that reports figures. Plain values: the plan and the run record hold them; the
//! judging is in the parent module.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Samples (seconds) the warm-up's steadiness is judged over.
pub const WINDOW_S: usize = 5;
/// The warm-up's default cap (`ramp_max`).
pub const DEFAULT_RAMP_MAX: Duration = Duration::from_secs(120);
/// The warm-up of a `clients=N` run under `ramp_time=auto`: two steadiness windows, fixed
/// (client processes open their windows together, at a time the parent fixes at the go).
pub const CLIENTS_RAMP: Duration = Duration::from_secs(2 * WINDOW_S as u64);
/// Shortest measured window that reports CPU, device and steadiness figures and verdicts.
pub const MIN_WINDOW: Duration = Duration::from_secs(1);

/// The automatic warm-up of a plan (`ramp_time=auto`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoRamp {
    /// The cap: measuring starts then, steady or not.
    #[serde(with = "crate::units::duration_ns", rename = "max_ns")]
    pub max: Duration,
}

/// The warm-up to expect of a plan, for estimates and progress: the fixed `ramp_time`, or for
/// `auto` two steadiness windows (what a run steady from its start takes at most), capped.
pub fn expected_warmup(ramp_time: Duration, auto: Option<AutoRamp>) -> Duration {
    auto.map_or(ramp_time, |a| CLIENTS_RAMP.min(a.max))
}

/// What a stop rule (`ss=`) watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopMetric {
    /// Operations per second.
    Iops,
    /// Bytes per second.
    Bw,
}

/// fio's `ss=`: the measured window ends early once its throughput is steady.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Operations or bytes.
    pub metric: StopMetric,
    /// The slope criterion (`iops_slope:`), else the spread (`iops:`).
    pub slope: bool,
    /// Its limit, percent of the mean (per second for a slope).
    pub limit_pct: f64,
    /// Seconds of samples it is judged over (`ss_dur`).
    pub dur_s: u32,
}

impl StopRule {
    /// Reads `iops:2%`, `iops_slope:0.1%`, `bw:5%` or `bw_slope:1%`.
    pub fn parse(text: &str, dur_s: u32) -> Result<StopRule, String> {
        let (what, limit) = text.trim().split_once(':').ok_or_else(|| {
            format!(
                "'{text}' is not a rule (write iops:2%, iops_slope:0.1%, bw:2% or bw_slope:0.1%)"
            )
        })?;
        let (metric, slope) = match what {
            "iops" => (StopMetric::Iops, false),
            "iops_slope" => (StopMetric::Iops, true),
            "bw" => (StopMetric::Bw, false),
            "bw_slope" => (StopMetric::Bw, true),
            _ => return Err(format!("'{what}' is not iops, iops_slope, bw or bw_slope")),
        };
        let pct = limit
            .trim()
            .strip_suffix('%')
            .ok_or_else(|| format!("'{limit}': the limit is a percentage of the mean (e.g. 2%)"))?;
        let limit_pct: f64 = pct
            .parse()
            .ok()
            .filter(|v: &f64| *v > 0.0 && *v <= 100.0)
            .ok_or_else(|| format!("'{limit}' is not a percentage above 0 and up to 100"))?;
        Ok(StopRule {
            metric,
            slope,
            limit_pct,
            dur_s,
        })
    }
}
