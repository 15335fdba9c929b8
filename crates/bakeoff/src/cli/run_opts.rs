//! The flags `run`, `exec` and `compare` share, as one clap group: they mean the same in each.

use super::{StackOpts, StatusOpts};
use clap::Args;

/// How a run is made: its stacks' options, the cache rule, the memory limit, the dry run and
/// the status lines.
#[derive(Args, Debug, Clone)]
pub struct RunOpts {
    #[command(flatten)]
    pub stack: StackOpts,
    /// Do not sync and drop caches (or re-import a ZFS pool) before each run.
    #[arg(long)]
    pub warm: bool,
    /// Run in a memory cgroup with this limit (e.g. 1g). A study file's `mem_limit` says the
    /// same for `compare`.
    #[arg(long, value_name = "SIZE")]
    pub mem_limit: Option<String>,
    /// Check everything the run needs (the workload, database or commands, sizes, the target
    /// or each stack and its tools, devices, output files, disk space), print what would run
    /// (`run` and `exec`: the resolved plan, as JSON into --json FILE, stdout for "-";
    /// `compare`: the expanded study, its time and disk), and exit without touching anything;
    /// "dry run: ok" only when it would start, else its exit code.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub status: StatusOpts,
}
