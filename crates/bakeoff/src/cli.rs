//! The command line as written (clap derive). Validation of values happens in the core plan.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

mod adaptive;
pub mod capture;
mod disturbance;
mod examples;
mod exports;
mod names;
mod reports;
mod run_opts;
mod size;
mod status;
pub use adaptive::{AdaptiveOpts, Search, Until};
pub use disturbance::DisturbanceOpts;
use examples::*;
pub use exports::ExportOpts;
pub use names::WorkloadName;
pub use reports::{CompareArgs, Format, ReportArgs, ReportOpts};
pub use run_opts::RunOpts;
pub use size::{LoopSize, LoopSizeParser};
pub use status::StatusOpts;

/// Which storage stack should this database run on, and what does each choice cost?
///
/// Exit codes: 0 ok; 2 usage or workload error (nothing was done); 3 environment refused
/// (target missing or not allowed, missing tool or privilege, stack too small); 4 I/O error
/// (figures are not results); 5 the safety gate refused a device; 6 a report was printed but
/// some run records were unreadable and left out (named on stderr and in its notes); 7 a
/// command run by `exec` or a recipe failed (its exit status or signal is in the message); 130
/// interrupted (partial figures printed, marked interrupted; everything built was torn down).
#[derive(Parser, Debug)]
#[command(name = "bakeoff", version, about, long_about, after_help = TOP_EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one workload on one target and report what it achieved and what every operation cost.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Run a command on a stack, timed and accounted: real, user and system time of its whole
    /// process tree, device I/O, whole-machine CPU.
    ///
    /// The command's standard output and error pass through as it writes them (--output DIR
    /// also keeps them in files); if it fails (non-zero exit, a signal, --timeout) bakeoff
    /// exits 7 and names its status.
    #[command(after_help = EXEC_EXAMPLES)]
    Exec(ExecArgs),
    /// List the built-in workloads, or print one as TOML to copy and change.
    #[command(after_help = WORKLOADS_EXAMPLES)]
    Workloads(WorkloadsArgs),
    /// A short demonstration: slob on raw, ext4, xfs, btrfs and zfs loop stacks, side by side.
    #[command(after_help = DEMO_EXAMPLES)]
    Demo(DemoArgs),
    /// Run a study: the same workload on several stacks and settings, repeated, compared.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// The comparison table of one or more `compare` results directories.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Build, list and destroy storage stacks.
    #[command(after_help = STACK_EXAMPLES)]
    Stack(StackArgs),
    /// Undo whatever killed bakeoff runs left behind (mounts, pools, daemons, loop devices, images).
    #[command(after_help = CLEANUP_EXAMPLES)]
    Cleanup(CleanupArgs),
    /// Record what a database does to its files: the file-system calls of a process tree
    /// (running, a cgroup's, or a command it starts) on files under a directory, with eBPF,
    /// into a trace to show, fit a personality to, or replay on any stack (docs/replay.md).
    #[command(after_help = CAPTURE_EXAMPLES)]
    Capture(capture::CaptureArgs),
    /// What a captured trace holds, or a personality fitted to it.
    #[command(after_help = TRACE_EXAMPLES)]
    Trace(capture::TraceArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell) to stdout.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff) to stdout: bakeoff(1), or a command's (`man run` is
    /// bakeoff-run(1)); or write every page into a directory.
    #[command(after_help = MAN_EXAMPLES)]
    Man {
        /// The command whose page to print (`run`, `stack create`); none: bakeoff(1).
        #[arg(value_name = "COMMAND", conflicts_with = "out_dir")]
        command: Vec<String>,
        /// Write bakeoff.1 and one page per subcommand (bakeoff-run.1, ...) into DIR.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// One client process of a `clients=N` run: its job on stdin, its results on stdout
    /// (started by bakeoff itself).
    #[command(name = "__client", hide = true)]
    Client,
}

const RUN_EXAMPLES: &str = "\
Examples:
  bakeoff run randread --target /mnt/x --set bs=8k,direct=true,jobs=4,runtime=30s
  bakeoff run oltp --target /dev/loop3 --export-json r.json --export-html r.html
  bakeoff run slob --stack xfs --size 4g --dry-run    # check everything, touch nothing
  bakeoff run randread --stack ext4 --set bs=8k,direct=true,jobs=16 --ramp 'until=p99>5ms'";

const EXEC_EXAMPLES: &str = "\
Examples:
  bakeoff exec --stack 'zfs:compression=on' -- make -j2
  bakeoff exec --stack xfs --parallel 2 --stagger 10s -- ./build.sh
  bakeoff exec --stack ext4 --json r.json -- dd if=/dev/zero of=f bs=1M count=256
  bakeoff exec --target /srv/work --cwd src --timeout 30m -- make";

const COMPARE_EXAMPLES: &str = "\
Examples:
  bakeoff compare --stack raw --stack ext4 --stack xfs --workload slob --export-html cmp.html
  bakeoff compare --stack zfs --sweep zfs.recordsize=8k,128k --workload slob --out results/rs
  bakeoff compare --study studies/seed000-asm-zfs-ufs.toml --out results/seed000 --dry-run
  bakeoff compare --study studies/seed000-asm-zfs-ufs.toml --out results/seed000 --resume";

const REPORT_EXAMPLES: &str = "\
Examples:
  bakeoff report results/seed000 --columns read_iops,write_iops,cpu_busy_pct
  bakeoff report results/seed000 --format html --out seed000.html
  bakeoff report results/seed004-fs --format svg --out charts/    # one SVG per chart
  bakeoff report results/last-month results/today --against raw --format markdown --out cmp.md";

const STACK_CREATE_EXAMPLES: &str = "\
Examples:
  bakeoff stack create xfs:mount=noatime --keep      # then: bakeoff run ... --target MOUNT
  bakeoff stack create 'zfs:recordsize=8k,arc=100m' --size 4g
  bakeoff stack create 'btrfs:devices=4,profile=raid10' --keep --name r10
  bakeoff stack create ext4 --device /dev/sdb --destroy-data-on /dev/sdb";

const MAN_EXAMPLES: &str = "\
Examples:
  bakeoff man | man -l -
  bakeoff man run | man -l -                     # bakeoff-run(1)
  bakeoff man stack create | man -l -
  bakeoff man --out-dir /usr/local/share/man/man1";

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  bakeoff completions bash > /usr/share/bash-completion/completions/bakeoff
  bakeoff completions zsh > /usr/local/share/zsh/site-functions/_bakeoff
  bakeoff completions fish > ~/.config/fish/completions/bakeoff.fish";

/// How stacks are built (shared by `run --stack`, `stack create` and `demo`).
#[derive(Args, Debug, Clone)]
pub struct StackOpts {
    /// Size of each loop image: auto holds the dataset with room for the file system, at
    /// least 1 GiB (a stack's own size= wins).
    #[arg(long, value_name = "SIZE", default_value = "auto", value_parser = LoopSizeParser)]
    pub size: LoopSize,
    /// Directory for loop images and mount points.
    #[arg(long, value_name = "DIR", default_value = "/var/tmp/bakeoff")]
    pub images: PathBuf,
    /// Build on this device instead of loop devices (repeatable; needs --destroy-data-on).
    #[arg(long = "device", value_name = "DEV")]
    pub devices: Vec<PathBuf>,
    /// Confirm that these devices' contents may be destroyed (repeat each --device).
    #[arg(long = "destroy-data-on", value_name = "DEV")]
    pub destroy_data_on: Vec<PathBuf>,
    /// If another bakeoff run uses zfs-fuse (one per machine) with other daemon settings
    /// (arc, vdev_cache, prefetch; runs with the same ones share it), wait for it to finish
    /// instead of refusing; a line on stderr says whom it waits for.
    #[arg(long)]
    pub wait: bool,
}

#[derive(Args, Debug)]
pub struct StackArgs {
    #[command(subcommand)]
    pub action: StackAction,
}

#[derive(Subcommand, Debug)]
pub enum StackAction {
    /// Every stack type: whether it can be built here, or what to install.
    #[command(after_help = STACK_LIST_EXAMPLES)]
    List {
        /// Print the keys a type's specs take instead, with defaults and meaning.
        #[arg(long, value_name = "TYPE")]
        keys: Option<String>,
    },
    /// Build a stack and print what was built; with --keep it stays until `stack destroy`.
    #[command(after_help = STACK_CREATE_EXAMPLES)]
    Create {
        /// The spec, e.g. 'zfs:recordsize=8k,primarycache=metadata'.
        spec: String,
        #[command(flatten)]
        opts: StackOpts,
        /// Keep the stack after bakeoff exits.
        #[arg(long)]
        keep: bool,
        /// Name for the stack (default: TYPE-PID-N).
        #[arg(long)]
        name: Option<String>,
    },
    /// Tear down a kept stack.
    #[command(after_help = STACK_DESTROY_EXAMPLES)]
    Destroy {
        /// The name `stack create --keep` printed.
        name: String,
    },
}

#[derive(Args, Debug)]
pub struct CleanupArgs {
    /// Also destroy stacks kept with `stack create --keep`.
    #[arg(long)]
    pub all: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[arg(
        required_unless_present_any = ["job", "recipe", "replay"],
        conflicts_with_all = ["job", "recipe", "replay"],
        value_parser = WorkloadName,
        hide_possible_values = true,
        help = names::help("A built-in workload, database or recipe"),
    )]
    pub workload: Option<String>,
    /// A workload file (TOML): flat fio keys, or a personality with [[role]] tables.
    #[arg(long, value_name = "FILE", conflicts_with = "recipe")]
    pub job: Option<PathBuf>,
    /// A recipe file (TOML): [[phase]] tables, each a command or a built-in action, timed one
    /// by one on the stack (docs/phases.md).
    #[arg(long, value_name = "FILE")]
    pub recipe: Option<PathBuf>,
    /// Replay a trace of `bakeoff capture`: the captured calls on files laid out at their
    /// captured sizes, each captured thread by a thread of its own (--set timing=original|fast,
    /// speed=2x, flags=no_direct, window=marked, syncs=merge; docs/replay.md).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["job", "recipe"])]
    pub replay: Option<PathBuf>,
    /// A database run: also trace the server's file-system calls on its files, from the
    /// warm-up to the window's end, into FILE (marked window_start and window_end), to show,
    /// fit or replay (docs/replay.md). Needs root.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["replay", "mpi"])]
    pub capture: Option<PathBuf>,
    /// A TPC-C run (PostgreSQL, MariaDB or SQLite), or an I/O workload with verify=, on a
    /// loop-backed ext4, xfs, btrfs or zfs stack: record every write and flush that reaches
    /// the stack's devices in the measured run, then check N states a power cut could have
    /// left (the file system's check, the database's recovery and integrity checks and the
    /// commits it acknowledged, or every verified block against the writes a sync
    /// acknowledged) and report what each outcome cost (docs/durability.md). Needs root and
    /// /dev/fuse; recording slows the run.
    #[arg(long, value_name = "N", conflicts_with_all = ["capture", "mpi"])]
    pub crash_states: Option<u32>,
    /// Where to run: a directory (data files are laid out inside it) or a loop device.
    #[arg(
        long,
        value_name = "PATH",
        required_unless_present = "stack",
        conflicts_with = "stack"
    )]
    pub target: Option<PathBuf>,
    /// Build this stack, run on it, and tear it down: 'ext4:mount=noatime', 'zfs:recordsize=8k', raw.
    #[arg(long, value_name = "SPEC")]
    pub stack: Option<String>,
    /// A second stack for the log: the redo of slob and oltp, a database's write-ahead log.
    #[arg(long, value_name = "SPEC", requires = "stack")]
    pub log_stack: Option<String>,
    #[command(flatten)]
    pub run_opts: RunOpts,
    /// Set workload keys: --set bs=8k,direct=true (repeatable; later wins).
    #[arg(long = "set", value_name = "KEY=VALUE,...")]
    pub set: Vec<String>,
    /// A load ramp instead of one run: open-loop points at rising offered rates until the
    /// latency limit is crossed or the stack saturates, then a bisection for the highest rate
    /// within it: 'start=500,step=x1.4,until=mean>15ms,point=30s,max_points=20,bisect=3'
    /// (only until is required; step=+D adds). See docs/ramp.md.
    #[arg(long, value_name = "SPEC")]
    pub ramp: Option<String>,
    #[command(flatten)]
    pub export: ExportOpts<true>,
    /// A recipe: also keep its commands' standard output and error, whole, in files in this
    /// directory (N-PHASE.stdout, N-PHASE.stderr; named in the record).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Remove the laid-out data files from a directory target after the run (default: keep
    /// them, so the next run with the same layout reuses them).
    #[arg(long)]
    pub remove_data: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run as one rank of an MPI job (under mpirun or srun): every rank is a client with its
    /// own files in rank-N/ under the shared --target directory, and rank 0 writes the one
    /// record (docs/mpi.md). Needs bakeoff built with `--features mpi`.
    #[arg(long)]
    pub mpi: bool,
    /// With --mpi: how long a rank waits for the others at a step (beyond the step's planned
    /// length) before it gives up and names the ranks that did not arrive.
    #[arg(long, value_name = "DUR", default_value = "120s", requires = "mpi")]
    pub mpi_timeout: String,
}

#[derive(Args, Debug)]
pub struct ExecArgs {
    /// Build this stack, run the command in its mount, and tear it down: ext4, 'zfs:compression=on'.
    #[arg(
        long,
        value_name = "SPEC",
        required_unless_present = "target",
        conflicts_with = "target"
    )]
    pub stack: Option<String>,
    /// Run in this existing directory instead (nothing is built or removed).
    #[arg(long, value_name = "DIR")]
    pub target: Option<PathBuf>,
    /// Run in this directory under the mount (relative; made if missing).
    #[arg(long, value_name = "SUBDIR")]
    pub cwd: Option<String>,
    /// Run N instances at once, each in its own inst-K/ directory.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub parallel: u32,
    /// Time between the starts of the instances (with --parallel).
    #[arg(long, value_name = "DUR")]
    pub stagger: Option<String>,
    /// Stop the command (and fail the run) after this long.
    #[arg(long, value_name = "DUR")]
    pub timeout: Option<String>,
    /// Also keep the command's standard output and error, whole, in files in this directory
    /// (1-exec.stdout, 1-exec.stderr; named in the record); they pass through either way.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub run_opts: RunOpts,
    #[command(flatten)]
    pub export: ExportOpts<true>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// The command and its arguments, after --.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct WorkloadsArgs {
    #[command(subcommand)]
    pub action: Option<WorkloadsAction>,
}

#[derive(Subcommand, Debug)]
pub enum WorkloadsAction {
    /// One line per built-in workload (the default).
    #[command(after_help = WORKLOADS_LIST_EXAMPLES)]
    List,
    /// Print a workload's TOML, with every key it accepts.
    #[command(after_help = WORKLOADS_SHOW_EXAMPLES)]
    Show {
        #[arg(
            value_parser = WorkloadName,
            hide_possible_values = true,
            help = names::help("The workload"),
        )]
        name: String,
    },
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Stacks to compare (repeatable).
    #[arg(long = "stack", value_name = "SPEC", default_values = ["raw", "ext4", "xfs", "btrfs", "zfs"])]
    pub stacks: Vec<String>,
    #[command(flatten)]
    pub stack_opts: StackOpts,
    /// Measured time per target.
    #[arg(long, default_value = "5s")]
    pub runtime: String,
    /// Extra workload keys for slob, e.g. --set readers=8.
    #[arg(long = "set", value_name = "KEY=VALUE,...")]
    pub set: Vec<String>,
    #[command(flatten)]
    pub status: StatusOpts,
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
