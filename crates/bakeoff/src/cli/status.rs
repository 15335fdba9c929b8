//! `--status-interval`, shared by every command that measures (run, exec, compare, demo).

use clap::Args;
use std::time::Duration;

/// How often progress is printed when stderr is not a terminal.
#[derive(Args, Debug, Clone)]
pub struct StatusOpts {
    /// When stderr is not a terminal (CI, nohup, a pipe): print a status line this often
    /// (elapsed and left, operations/s, MB/s, p99 so far, the stack's devices), as fio's
    /// --status-interval.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = interval)]
    pub status_interval: Duration,
}

/// A duration above zero (`10s`, `500ms`).
fn interval(text: &str) -> Result<Duration, String> {
    above_zero(text, "10s, 500ms")
}

/// `text` as a duration above zero, or an error giving `examples`.
pub(super) fn above_zero(text: &str, examples: &str) -> Result<Duration, String> {
    bakeoff_core::units::parse_duration(text)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("'{text}' is not a duration above 0 (e.g. {examples})"))
}

impl StatusOpts {
    /// Makes this the period of every status line the command prints.
    pub fn apply(&self) {
        crate::progress::set_status_interval(self.status_interval);
    }
}
