//! The arguments of `bakeoff capture` and `bakeoff trace`.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `bakeoff capture`: record a process tree's file-system calls under some directories.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("whom").required(true).args(["pid", "cgroup", "command"])))]
pub struct CaptureArgs {
    /// A running process to capture, with every process it starts (repeatable).
    #[arg(long, value_name = "PID")]
    pub pid: Vec<u32>,
    /// Capture every process of this cgroup (its cgroup.procs), and what they start.
    #[arg(long, value_name = "DIR")]
    pub cgroup: Option<PathBuf>,
    /// Only calls on files under this directory ([NAME=]DIR, repeatable: `--under
    /// data=/srv/pg --under log=/srv/wal`; the name defaults to the directory's).
    #[arg(long, value_name = "[NAME=]DIR", required = true)]
    pub under: Vec<String>,
    /// How long to capture a running process (default: until it exits or Ctrl-C). With a
    /// command, the longest it may run before it is stopped.
    #[arg(long, value_name = "DUR")]
    pub duration: Option<String>,
    /// The trace file to write (not under --under).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace every path component with d0, f1, ... (the same name everywhere in the trace).
    #[arg(long)]
    pub anonymize: bool,
    /// The kernel-to-bakeoff buffer: a power of two, at least 64k (larger loses nothing in
    /// longer bursts; losses are counted and reported).
    #[arg(long, value_name = "SIZE", default_value = "32m")]
    pub buffer: String,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// A command to start and capture with its children: `-- ./nightly-batch.sh`. A client
    /// (pgbench, sysbench) does no file I/O of its own: capture its server with --pid.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `bakeoff trace`: read a captured trace.
#[derive(Args, Debug)]
pub struct TraceArgs {
    /// What to do with it.
    #[command(subcommand)]
    pub action: TraceAction,
}

/// What `bakeoff trace` does.
#[derive(Subcommand, Debug)]
pub enum TraceAction {
    /// What a trace holds: files and sizes, op mix, size and offset histograms, sync rate,
    /// threads, concurrency over time, working sets, and what the capture lost.
    #[command(after_help = super::examples::TRACE_SHOW_EXAMPLES)]
    Show {
        /// The trace file.
        trace: PathBuf,
        /// JSON instead of text (docs/trace-analysis.md).
        #[arg(long)]
        json: bool,
    },
    /// A personality fitted to the trace (TOML on stdout), to edit, share and run with
    /// `run --job`.
    #[command(after_help = super::examples::TRACE_PERSONALITY_EXAMPLES)]
    Personality {
        /// The trace file.
        trace: PathBuf,
        /// The personality's name (default: the trace file's stem).
        #[arg(long)]
        name: Option<String>,
    },
}
