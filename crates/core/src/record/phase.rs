//! What a run of phases (`bakeoff exec`, a recipe) adds to its run record: one entry per phase
//! with its timings, CPU and device accounting and its instances; and the stack's space use
//! and compression read back after the last phase. See `docs/phases.md` and `docs/schema.md`.

use super::machine::CpuStats;
use super::results::RunStatus;
use serde::{Deserialize, Serialize};

/// How a command's user and system CPU were measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuSource {
    /// The `cpu.stat` of a cgroup v2 holding the command: every descendant, daemonised
    /// grandchildren too.
    Cgroup,
    /// `getrusage(RUSAGE_CHILDREN)` around the wait for the command (no cgroup v2 here):
    /// the command and the descendants it waited for; a daemon it left running is not counted.
    Rusage,
    /// A built-in action inside bakeoff: bakeoff's own CPU and that of the children it waited
    /// for.
    Bakeoff,
    /// A database phase (`bakeoff run tpch` on PostgreSQL): bakeoff's own CPU (the client)
    /// plus that of the server's processes (`/proc/PID/stat` of the postmaster's family, with
    /// the connections that ended counted through its waited-for children's time).
    BakeoffAndServer,
}

/// One step of a phase: a table loaded, an index or key built, a query run (`Q1` ... `Q22`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// What it was: the table, index, constraint or query.
    pub name: String,
    /// Rows loaded or returned; `None` for DDL.
    pub rows: Option<u64>,
    /// Its wall-clock time.
    pub real_s: f64,
}

/// One instance of a phase (a phase with `parallel = N` has N).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceRecord {
    /// 1 to N.
    pub index: u32,
    /// Its working directory.
    pub dir: String,
    /// When it started, seconds after the first phase started.
    pub start_offset_s: f64,
    /// Wall time from its start to its exit.
    pub real_s: f64,
    /// User CPU of the command and its descendants; `None` if it could not be measured.
    pub user_s: Option<f64>,
    /// System CPU of the command and its descendants.
    pub sys_s: Option<f64>,
    /// Exit code; `None` if a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did (a timeout, Ctrl-C, a crash).
    pub signal: Option<i32>,
    /// The last lines of its standard error (at most 20), when it failed.
    #[serde(default)]
    pub stderr_tail: Vec<String>,
    /// The file holding all of its standard output, when it was kept (`--output DIR`, or a
    /// `compare` run's directory).
    #[serde(default)]
    pub stdout_file: Option<String>,
    /// The file holding all of its standard error, when it was kept.
    #[serde(default)]
    pub stderr_file: Option<String>,
}

/// One phase: what it ran, how long it took, what it cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// The phase's name (`bringover`, `build-1`; `exec` for `bakeoff exec`).
    pub name: String,
    /// What it ran: the shell command, the argv, or `action NAME`.
    pub command: String,
    /// Completed, failed (an instance exited non-zero, was killed or timed out) or interrupted.
    pub status: RunStatus,
    /// Why it failed: which instance, its exit, its standard error's last lines.
    pub error: Option<String>,
    /// The exit code of the first instance that failed, else 0; `None` for an action, or when a
    /// signal ended the instance that failed.
    pub exit_code: Option<i32>,
    /// When it started, seconds after the first phase started.
    pub start_offset_s: f64,
    /// Wall time from its first instance's start to its last instance's exit.
    pub real_s: f64,
    /// User CPU of every instance and its descendants, summed.
    pub user_s: Option<f64>,
    /// System CPU of every instance and its descendants, summed.
    pub sys_s: Option<f64>,
    /// How `user_s` and `sys_s` were measured.
    pub cpu_source: CpuSource,
    /// Its instances, in start order.
    pub instances: Vec<InstanceRecord>,
    /// Bytes read from the stack's devices over the phase.
    pub device_read_bytes: Option<u64>,
    /// Bytes written to the stack's devices over the phase.
    pub device_write_bytes: Option<u64>,
    /// Flush requests the stack's devices completed over the phase, where the kernel counts them.
    pub device_flushes: Option<u64>,
    /// Whole-machine CPU over the phase, with who used it (the command tree counts as the tool).
    pub cpu: Option<CpuStats>,
    /// Rows the phase loaded or returned (a database phase); `None` where rows do not apply.
    #[serde(default)]
    pub rows: Option<u64>,
    /// Its steps, in order, where it reports them (a database phase: each table, index, key
    /// or query); empty for a command.
    #[serde(default)]
    pub steps: Vec<StepRecord>,
}

impl PhaseRecord {
    /// User plus system CPU of the phase's commands, if measured.
    pub fn command_cpu_s(&self) -> Option<f64> {
        Some(self.user_s? + self.sys_s?)
    }
}

/// The stack's space use after the last phase: what the data takes on the devices, and before
/// compression where the file system knows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpaceRecord {
    /// Where the figures come from: `zfs get`, `compsize`, `btrfs filesystem df` or `df`.
    pub source: String,
    /// Bytes used on the devices (after compression): ZFS `used`, compsize's disk usage,
    /// `df`'s used.
    pub used_bytes: Option<u64>,
    /// Bytes the data holds before compression: ZFS `logicalused`, compsize's uncompressed.
    pub logical_bytes: Option<u64>,
    /// Compression ratio: ZFS `compressratio`, or logical over used; `None` where the file
    /// system does not compress or cannot say.
    pub compress_ratio: Option<f64>,
    /// Size of the file system or pool.
    pub size_bytes: Option<u64>,
    /// Bytes still available.
    pub available_bytes: Option<u64>,
}
