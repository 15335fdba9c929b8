//! What an adaptive study (`compare --until decided`, `--search best|pareto`) decided, round by
//! round: written by `compare` as `DIR/adaptive.json` after every round and read by `report`
//! (docs/schema.md, "Adaptive study"). The decisions themselves are
//! [`crate::verdict::sequential`]'s and [`crate::verdict::race`]'s.

use crate::verdict::race::{Dropped, RaceMethod, RaceResult};
use crate::verdict::sequential::{SequentialComparison, SequentialMethod};
use serde::{Deserialize, Serialize};

/// Version of `adaptive.json`.
pub const ADAPTIVE_SCHEMA_VERSION: u32 = 1;

/// What the study looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// `--until decided`: every cell's verdict against its baseline.
    UntilDecided,
    /// `--search best`: the best cell.
    SearchBest,
    /// `--search pareto`: the cells no other beats on both figures.
    SearchPareto,
}

/// Why the study stopped starting rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every cell decided (or, for a search, one left or the rest shown equivalent).
    Decided,
    /// `--max-repeat` rounds ran.
    MaxRepeat,
    /// The next round would not have ended within `--budget`.
    Budget,
    /// Ctrl-C, or a run failed.
    Interrupted,
    /// Still running (the file is rewritten after every round).
    Running,
}

/// One cell's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveCell {
    /// The cell's label.
    pub label: String,
    /// Its completed runs (results) so far.
    pub runs: usize,
    /// `--until decided`: the last look's comparison with its baseline (absent for a
    /// baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<SequentialComparison>,
    /// `--until decided`: the round after which it was decided (or found futile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_after: Option<usize>,
    /// `--search`: why and when it left the race (`against` is a cell index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<Dropped>,
    /// `--search`: it lost acknowledged writes in crash states, so it cannot win.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub risky: bool,
}

/// Whether a compared cell was left undecided (out of reach, or not reached by the end).
pub fn any_undecided(cells: &[AdaptiveCell]) -> bool {
    (cells.iter())
        .filter_map(|c| c.comparison.as_ref())
        .any(|c| c.decision == crate::verdict::sequential::Decision::Undecided)
}

/// `DIR/adaptive.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveRecord {
    /// [`ADAPTIVE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What the study looked for.
    pub goal: Goal,
    /// The figure(s) decided on (`Summary` keys).
    pub figures: Vec<String>,
    /// `--until decided`'s method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialMethod>,
    /// `--search`'s method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceMethod>,
    /// Rounds run (the last round any cell ran).
    pub rounds: usize,
    /// Why it stopped.
    pub stop: Stop,
    /// Runs made (results; disturbed attempts are not counted).
    pub runs: usize,
    /// Runs the fixed design would have made: every cell `--max-repeat` times.
    pub fixed_runs: usize,
    /// Per cell, in the plan's order.
    pub cells: Vec<AdaptiveCell>,
    /// `--search best`: the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<RaceResult>,
    /// `--search pareto`: the surviving eligible cells (indices).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub front: Vec<usize>,
}
