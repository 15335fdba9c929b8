//! `run --crash-states N`: what the run risks, beside what it cost (docs/durability.md). The
//! window's writes and flushes were recorded under the stack's loop devices; states a power
//! cut could have left were drawn from the record and each checked as a DBA would after the
//! outage.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The outcomes, from the worst, as the record and the tables name them.
pub const OUTCOMES: [&str; 5] = [
    "fs_damaged",
    "db_failed_to_start",
    "corrupt",
    "lost_commits",
    "clean",
];

/// What a run's states were checked for: what its client saw acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Acknowledged {
    /// TPC-C's New-Order commits (`run tpcc`).
    #[default]
    NewOrders,
    /// A verified I/O run's blocks whose write a sync (or `O_DSYNC`) made durable.
    Blocks,
}

impl Acknowledged {
    /// What was counted, as a table or a line says it: `New-Orders`, `blocks`.
    pub fn noun(self) -> &'static str {
        match self {
            Acknowledged::NewOrders => "New-Orders",
            Acknowledged::Blocks => "blocks",
        }
    }
}

/// The crash states of one run and what checking them found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DurabilityRecord {
    /// States asked for (`--crash-states N`).
    pub states_asked: u64,
    /// States drawn and checked: fewer than asked when the window had fewer distinct ones.
    pub states_checked: u64,
    /// The seed the states were drawn with (the same seed and log draw the same states).
    pub seed: u64,
    /// The sector size torn writes are cut at.
    pub sector_bytes: u64,
    /// Whether torn writes were drawn.
    pub torn: bool,
    /// States per outcome (every name of [`OUTCOMES`], zeros included).
    pub outcomes: BTreeMap<String, u64>,
    /// New-Order commits the client saw acknowledged in the window (a verified I/O run: its
    /// blocks with a write made durable; `acknowledged_unit` says which).
    pub acknowledged: u64,
    /// What `acknowledged`, a state's `lost` and `expected` count.
    #[serde(default)]
    pub acknowledged_unit: Acknowledged,
    /// The most acknowledged commits one state lost.
    pub worst_loss: u64,
    /// The database's page checksums were on (PostgreSQL's `data_checksums`).
    pub checksums: bool,
    /// What recording the window cost.
    pub recording: RecordingCost,
    /// Each state checked, in the order drawn.
    pub states: Vec<StateRecord>,
}

impl DurabilityRecord {
    /// States with outcome `name`.
    pub fn count(&self, name: &str) -> u64 {
        self.outcomes.get(name).copied().unwrap_or(0)
    }

    /// States that lost acknowledged commits (whatever else was wrong with them).
    pub fn states_losing_commits(&self) -> u64 {
        self.states.iter().filter(|s| s.lost > 0).count() as u64
    }

    /// States whose file system, database start or integrity failed.
    pub fn states_damaged(&self) -> u64 {
        ["fs_damaged", "db_failed_to_start", "corrupt"]
            .iter()
            .map(|o| self.count(o))
            .sum()
    }
}

/// One crash state and what its check found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateRecord {
    /// Its number among the states drawn.
    pub number: u64,
    /// How it was drawn: `flushed` (only what the last flush made durable), `issued`
    /// (everything issued before the crash point, none torn), `subset` (a random subset of
    /// the writes in flight since the last flush, some maybe torn).
    pub kind: String,
    /// The log record the crash came before.
    pub crash_point: u64,
    /// Writes in flight at the crash that persisted, and those persisted in part.
    pub persisted: u64,
    pub torn: u64,
    /// The worst finding (one of [`OUTCOMES`]).
    pub outcome: String,
    /// Acknowledged commits missing, of those acknowledged before the crash.
    pub lost: u64,
    pub expected: u64,
    /// What was wrong, first thing first (a mount's refusal, the check's complaint, the
    /// database's start error, a failed integrity check); empty when clean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// What recording the window's writes cost (the run's figures include it: this mode is for
/// risk, not speed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordingCost {
    /// Writes recorded and their bytes, ranges zeroed, flushes.
    pub writes: u64,
    pub write_bytes: u64,
    pub zeroes: u64,
    pub flushes: u64,
    /// The log's size.
    pub log_bytes: u64,
    /// Time the recorder spent logging, applying writes to the images and syncing them.
    pub logging_ns: u64,
    pub applying_ns: u64,
    pub syncing_ns: u64,
    /// Time spent checking the states, after the run.
    pub checking_ns: u64,
}
