//! The command line as written (clap derive). Validation of values happens in the core plan.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Which storage stack should this database run on, and what does each choice cost?
///
/// Exit codes: 0 ok; 2 usage or workload error (nothing was done); 3 environment refused
/// (target missing or not allowed, missing privilege); 4 I/O error (figures are not results);
/// 130 interrupted (partial figures printed, marked interrupted).
#[derive(Parser, Debug)]
#[command(name = "bakeoff", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one workload on one target and report what it achieved and what every operation cost.
    Run(RunArgs),
    /// List the built-in workloads, or print one as TOML to copy and change.
    Workloads(WorkloadsArgs),
    /// A short demonstration: slob on a directory and on /dev/shm, side by side.
    Demo(DemoArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// A built-in workload: randread, randwrite, randrw, read, write, slob, oltp.
    #[arg(required_unless_present = "job", conflicts_with = "job")]
    pub workload: Option<String>,
    /// A workload file (TOML): flat fio keys, or a personality with [[role]] tables.
    #[arg(long, value_name = "FILE")]
    pub job: Option<PathBuf>,
    /// Where to run: a directory (data files are laid out inside it) or a loop device.
    #[arg(long, value_name = "PATH")]
    pub target: PathBuf,
    /// Set workload keys: --set bs=8k,direct=true (repeatable; later wins).
    #[arg(long = "set", value_name = "KEY=VALUE,...")]
    pub set: Vec<String>,
    /// Write the full run record as JSON ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write per-second samples as CSV ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub timeseries: Option<PathBuf>,
    /// Remove the laid-out data files from a directory target after the run (default: keep
    /// them, so the next run with the same layout reuses them).
    #[arg(long)]
    pub remove_data: bool,
    /// Print the resolved plan and exit without touching the target.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct WorkloadsArgs {
    #[command(subcommand)]
    pub action: Option<WorkloadsAction>,
}

#[derive(Subcommand, Debug)]
pub enum WorkloadsAction {
    /// One line per built-in workload (the default).
    List,
    /// Print a workload's TOML, with every key it accepts.
    Show {
        /// Workload name.
        name: String,
    },
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Directory to compare with /dev/shm (default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Measured time per target.
    #[arg(long, default_value = "5s")]
    pub runtime: String,
    /// Extra workload keys for slob, e.g. --set readers=8.
    #[arg(long = "set", value_name = "KEY=VALUE,...")]
    pub set: Vec<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
