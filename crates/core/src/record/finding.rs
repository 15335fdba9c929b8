//! A diagnosis attached to a result, as the run record and a comparison's cells keep it: the
//! rules that find them are the `findings` module (see `docs/findings.md`).

use serde::{Deserialize, Serialize};

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Context worth knowing; the result stands.
    Info,
    /// The result may not measure what it seems to.
    Warning,
}

/// A diagnosis attached to a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable slug, e.g. `cache_served`.
    pub id: String,
    /// How much it matters.
    pub severity: Severity,
    /// One line.
    pub title: String,
    /// The numbers that triggered it.
    pub evidence: String,
    /// What to change, naming the property or option.
    pub suggestion: String,
}
