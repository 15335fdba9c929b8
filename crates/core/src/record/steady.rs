//! What the run record says of a run's warm-up (fixed, or until steady) and of its stop rule
//! (`ss=`); the `steady` module decides them.

use crate::steady::rules::StopRule;
use serde::{Deserialize, Serialize};

/// How the warm-up was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarmupKind {
    /// A fixed `ramp_time`.
    Fixed,
    /// `ramp_time=auto`: until steady or the cap.
    Auto,
}

/// What the record says of a run's warm-up and of its stop rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyRecord {
    /// Fixed or automatic.
    pub warmup: WarmupKind,
    /// How long the warm-up took, seconds.
    pub warmup_s: f64,
    /// The automatic warm-up reached its cap (`ramp_max`) unsteady.
    #[serde(default)]
    pub capped: bool,
    /// The series at the decision (automatic warm-up; the last state seen when capped).
    #[serde(default)]
    pub checks: Vec<Check>,
    /// The stop rule (`ss=`) and, if it ended the window early, its series at that second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopRecord>,
}

/// A stop rule in the record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopRecord {
    /// The rule.
    pub rule: StopRule,
    /// Its series when it ended the window; `None`: the window ran its full runtime.
    pub attained: Option<Check>,
}

/// A series' state at a decision: its window's mean, spread and slope, and whether they held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The series (`ops_s`, `wal_bytes_per_txn`, `fpi_per_txn`).
    pub name: String,
    /// Mean of the window's samples.
    pub mean: f64,
    /// Largest distance of a sample from the mean, percent of the mean.
    pub spread_pct: f64,
    /// Least-squares slope, percent of the mean per second (signed).
    pub slope_pct: f64,
    /// Within its limits.
    pub steady: bool,
}
