//! How a trace is replayed ([`ReplayPlan`]): the plan's part that `trace::plan` fills from a
//! trace and the replay keys, and the engine follows.

use crate::units::duration_ns;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// When each call is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayTiming {
    /// At its captured time (divided by the speed); latency counts from that time.
    Original,
    /// As soon as its thread's previous call and the calls it depends on are done.
    Fast,
}

/// What a thread does between its calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Think {
    /// Nothing.
    None,
    /// Burns the CPU time the captured thread used since its previous call.
    Cpu,
}

/// Which part of the trace is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayWindow {
    /// All of it.
    All,
    /// Between its `window_start` and `window_end` marks.
    Marked,
}

/// The open flags a replay uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagRule {
    /// The captured ones (`O_APPEND` always dropped: the replay is positional).
    Captured,
    /// The captured ones without `O_DIRECT`.
    NoDirect,
}

/// How the syncs (fsync, fdatasync) of one file by several threads are made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncRule {
    /// Every captured sync is made, one at a time where the capture made them one at a time.
    #[default]
    Each,
    /// Group commit: a thread's sync of a file waits for any sync of it under way, and is not
    /// made when a sync that started after every write done before it has made them durable.
    Merge,
}

/// How to replay a trace, and what it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayPlan {
    /// The trace's capture id (32 hex digits): the engine finds the trace by it.
    pub capture_id: String,
    /// When each call is issued.
    pub timing: ReplayTiming,
    /// Schedule speed-up under [`ReplayTiming::Original`] (1 with `fast`).
    pub speed: f64,
    /// What a thread does between calls.
    pub think: Think,
    /// What is measured.
    pub window: ReplayWindow,
    /// Open flags.
    pub flags: FlagRule,
    /// How the syncs of one file by several threads are made.
    #[serde(default)]
    pub syncs: SyncRule,
    /// Captured threads: one replay thread each.
    pub threads: u32,
    /// Calls in the trace.
    pub ops: u64,
    /// The trace's length.
    #[serde(with = "duration_ns", rename = "duration_ns")]
    pub duration: Duration,
    /// Bytes of the files that exist at the start (laid out at their start sizes).
    pub layout_bytes: u64,
    /// Most bytes the trace's files can hold together: each file at the largest size it
    /// reaches (its start and end sizes, its writes', allocations' and truncations' ends),
    /// plus room for a copy-on-write stack (btrfs, ZFS) to hold a second copy of what the trace
    /// rewrites (at most as much again) until it frees the first.
    pub peak_bytes: u64,
    /// Anonymous memory held during the replay (0: none).
    #[serde(default)]
    pub balloon_bytes: u64,
}
