//! What the parent and a client process say to each other, one line each way at a time.
//!
//! Parent to client, on the client's stdin: the [`Job`] as one JSON line; then `go` (start
//! now) or `stop`; `stop` again at any time to end early; then end of file, on which the
//! client exits (also if the parent dies: nothing is left running).
//!
//! Client to parent, on its stdout: [`Report`]s, each one line of JSON after [`PREFIX`] (any
//! other line is passed to stderr): `ready` once its threads are set up, a `tick` with its
//! cumulative counts each second, at the start of its measured window and at its end, and
//! `done` with its exact counts, or `failed`.

use crate::results::RoleCounts;
use crate::stats::Totals;
use bakeoff_core::plan::Plan;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;

/// Starts every line a client writes for the parent.
pub const PREFIX: &str = "bakeoff-client ";

/// The parent's word to start.
pub const GO: &str = "go";

/// The parent's word to stop early.
pub const STOP: &str = "stop";

/// What one client runs.
#[derive(Serialize, Deserialize)]
pub struct Job {
    /// Its number, from 0.
    pub index: u32,
    /// Its plan (`Plan::client_plan`: every role, its own seed, no clients of its own).
    pub plan: Plan,
    /// The directory its filesets were laid out in.
    pub dir: PathBuf,
}

/// What a client reports.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Report {
    /// Its threads are set up; it waits for `go`.
    Ready,
    /// Its cumulative counts.
    Tick {
        /// Time since its start.
        elapsed_ns: u64,
        /// Operations and bytes per kind, all roles.
        totals: Box<Totals>,
    },
    /// Its run ended.
    Done(Box<Outcome>),
    /// It could not run.
    Failed {
        /// Why.
        error: String,
    },
}

/// How a client's run ended.
#[derive(Serialize, Deserialize)]
pub struct Outcome {
    /// Per role, exactly what its threads recorded.
    pub counts: Vec<RoleCounts>,
    /// Its measured window.
    pub measured_ns: u64,
    /// It stopped early (the parent's stop, a signal).
    pub interrupted: bool,
    /// The error that stopped it.
    pub error: Option<String>,
    /// User and system CPU over its window, µs.
    pub cpu_us: (u64, u64),
    /// Its peak resident set.
    pub max_rss_bytes: u64,
}

/// Writes one report line to stdout; a parent that is gone is not an error here (its end of
/// the stdin pipe closes too, which stops the client).
pub fn report(r: &Report) {
    let Ok(json) = serde_json::to_string(r) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{PREFIX}{json}");
    let _ = out.flush();
}

/// Reads a report from a line a client wrote; `None` for a line that is not one.
pub fn parse_report(line: &str) -> Option<Result<Report, String>> {
    let json = line.strip_prefix(PREFIX)?;
    Some(serde_json::from_str(json).map_err(|e| format!("unreadable report ({e})")))
}
