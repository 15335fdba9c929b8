//! The run record: everything one run measured, as written to `--json`. Field names carry their
//! unit; a figure that does not apply is `None` (JSON `null`), never 0. See `docs/schema.md`.
//!
//! This file holds the record itself; each of its parts is a file of `record/`: types that
//! name the plan and the rules it carries, never a module that reads a record. What computes
//! them lives with its concept (`summary`, `findings`, `steady`, `ramp`).

use crate::plan::Plan;
use crate::steady::rules::MIN_WINDOW;
use serde::{Deserialize, Serialize};

/// Version of the run-record format. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// Run-record versions this build reads (version 1 records lack the fields marked
/// `#[serde(default)]`, which read as `null`).
pub const READABLE_SCHEMA_VERSIONS: &[u32] = &[1, 2];

pub mod capture;
mod machine;
pub mod replay;
pub use machine::{CpuSplit, CpuStats, DeviceStats, MemoryStats, ToolUsage};
mod stack;
pub use stack::{BackingInfo, CommandRecord, DaemonInfo, StackInfo};
pub mod database;
pub mod durability;
mod finding;
pub use finding::{Finding, Severity};
pub mod mpi;
pub mod phase;
mod results;
pub use results::{
    ClientOps, ClientResult, Latency, OpStats, Percentile, RoleResult, RunStatus, Sample,
    SampleLatency,
};
mod steady;
pub use steady::{Check, SteadyRecord, StopRecord, WarmupKind};
mod summary;
pub use summary::Summary;
pub mod verify;

/// Where the run happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The path given.
    pub path: String,
    /// `directory` or `block_device`.
    pub kind: String,
    /// File system type (from the mount table), for a directory.
    pub filesystem: Option<String>,
    /// Mount options.
    pub mount_options: Option<String>,
    /// Mount source (device), for a directory.
    pub mount_source: Option<String>,
}

/// File systems whose files live only in memory: their pages never leave the page cache.
const IN_MEMORY_FILESYSTEMS: [&str; 2] = ["tmpfs", "ramfs"];

impl TargetInfo {
    /// The file system's name if it keeps its files in memory (`tmpfs`, `ramfs`): there is no
    /// cache to drop and no page-cache miss to count there.
    pub fn in_memory_filesystem(&self) -> Option<&str> {
        (self.filesystem.as_deref()).filter(|fs| IN_MEMORY_FILESYSTEMS.contains(fs))
    }
}

/// The machine and tool.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// bakeoff version.
    pub tool_version: String,
    /// Git commit of the build, if known.
    pub git_hash: Option<String>,
    /// Kernel release.
    pub kernel: String,
    /// Host name.
    pub hostname: String,
    /// CPU model.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: u32,
    /// Memory.
    pub memory_bytes: u64,
    /// Clock source.
    pub clocksource: String,
    /// Measured cost of one clock read.
    pub timer_overhead_ns: f64,
}

/// The full run record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Format version.
    pub schema_version: u32,
    /// How it ended.
    pub status: RunStatus,
    /// Why it failed, naming the operation, file and offset.
    pub error: Option<String>,
    /// Unix time the run started.
    pub started_unix_s: u64,
    /// Length of the measured window.
    pub measured_ns: u64,
    /// The resolved plan.
    pub plan: Plan,
    /// The target.
    pub target: TargetInfo,
    /// The stack bakeoff built for this run, if it built one.
    #[serde(default)]
    pub stack: Option<StackInfo>,
    /// The separate log stack (redo, write-ahead log), if the run had one.
    #[serde(default)]
    pub log_stack: Option<StackInfo>,
    /// True if the run started cold (sync, page cache dropped, ZFS pool re-imported); false if
    /// warm (`--warm`, or caches could not be dropped).
    #[serde(default)]
    pub cold: Option<bool>,
    /// Machine and tool.
    pub environment: Environment,
    /// Flat headline figures.
    pub summary: Summary,
    /// Per role.
    pub roles: Vec<RoleResult>,
    /// Per operation kind over all roles, histograms merged (absent in version 1 records).
    #[serde(default)]
    pub ops: Vec<OpStats>,
    /// Whole-machine CPU.
    pub cpu: Option<CpuStats>,
    /// bakeoff's own CPU.
    pub tool: ToolUsage,
    /// Devices under the target.
    pub devices: Vec<DeviceStats>,
    /// Memory.
    pub memory: Option<MemoryStats>,
    /// Per-second samples.
    pub samples: Vec<Sample>,
    /// Diagnoses of this run with their evidence (see `docs/findings.md`).
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The database of a database run (tpcc, pgbench).
    #[serde(default)]
    pub database: Option<database::DatabaseRun>,
    /// The phases of a recipe run or `bakeoff exec`, in order (empty for other runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<phase::PhaseRecord>,
    /// The stack's space use and compression after the last phase of a recipe run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<phase::SpaceRecord>,
    /// The dataset the run used: laid out now or reused (I/O and file-serving runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<DatasetInfo>,
    /// With `clients=N`: each client process, whose counts add up to `ops` exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientResult>,
    /// A load ramp's points, headline and why it stopped (`run --ramp`); the figures above
    /// are then those of the headline point (see `docs/ramp.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<crate::ramp::RampRecord>,
    /// `run --mpi`: the ranks and hosts, each host's accounting and their sums; `clients`
    /// then lists the ranks (see `docs/mpi.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<mpi::MpiRecord>,
    /// How the warm-up was decided (fixed, or until steady), how long it took and what was
    /// steady; the stop rule's outcome (see `docs/methodology.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyRecord>,
    /// `run --capture FILE`: the trace written of the database's file-system calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<capture::CaptureRecord>,
    /// `run --replay FILE`: what the replay counted beside its operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<replay::ReplayRecord>,
    /// `verify=crc32c|sha256`: the blocks checked and the mismatches found (docs/verify.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<verify::VerifyRecord>,
    /// `run --crash-states N`: the crash states checked and their outcomes
    /// (docs/durability.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<durability::DurabilityRecord>,
    /// `compare`: other work competed with the run beyond the limit, so its figures are left
    /// out of verdicts (docs/verdicts.md, "Runs disturbed by other work").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<crate::disturbance::Disturbance>,
    /// `compare`: the run's wall-clock time, for the study's cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<RunTiming>,
}

/// Wall-clock time of one run of a study: from building its stacks to tearing them down, and
/// the sample (or `--quiet-wait`) before it. The parts are in the record: `measured_ns`,
/// `steady.warmup_s`, `dataset.layout_ms` or `database.load.seconds`, the stack's
/// `commands[].ms` and `durability.recording.checking_ns`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunTiming {
    /// From the start of building to the end of tearing down, ms.
    pub wall_ms: u64,
    /// The machine's sample before the run (or the wait for it to be quiet), ms.
    pub before_ms: u64,
}

impl RunRecord {
    /// Fills the summary's figures the record lacks (added to bakeoff after it was written)
    /// from the record itself.
    pub fn fill_summary(&mut self) {
        let fresh = crate::summary::Summary::compute(self);
        self.summary.fill_missing(&fresh);
    }

    /// The run measured less than [`MIN_WINDOW`] (and did not fail): too short a window for
    /// CPU, device or steadiness figures, or for any verdict on them.
    pub fn window_too_short(&self) -> bool {
        self.status != RunStatus::Failed && self.measured_ns < MIN_WINDOW.as_nanos() as u64
    }

    /// Drops the figures a window shorter than [`MIN_WINDOW`] cannot give: machine CPU,
    /// devices, memory, and the window's samples (the warm-up's stay).
    pub fn drop_short_window(&mut self) {
        if !self.window_too_short() {
            return;
        }
        self.cpu = None;
        self.devices.clear();
        self.memory = None;
        self.tool.share_of_busy_pct = None;
        self.samples.retain(|s| !s.measured);
    }
}

/// The dataset of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    /// Bytes the plan's filesets hold (every client's copy; a tree at its mean file size with
    /// every file present).
    pub planned_bytes: u64,
    /// Bytes written before this run: all of it for a new layout; for a reused one, what had to
    /// be rewritten (tree files a previous run deleted, appended to or created).
    pub written_bytes: u64,
    /// An identical layout was already there and was reused.
    pub reused: bool,
    /// Time laying out (or checking and repairing) took.
    pub layout_ms: u64,
}

#[cfg(test)]
pub(crate) mod fixture;
