//! The validated, resolved plan of one run: what every worker thread does. Built by the
//! workload readers (`Workload::plan`); executed by the engine crate. Nothing here touches the
//! system.

use crate::steady::rules::{AutoRamp, StopRule, CLIENTS_RAMP};
mod replay;
use crate::units::duration_ns;
pub use crate::verify::{Algorithm, BlockGrid};
pub use replay::{FlagRule, ReplayPlan, ReplayTiming, ReplayWindow, SyncRule, Think};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The I/O engine a worker uses, chosen once per worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// `pread`/`pwrite`, one I/O at a time per thread.
    Psync,
    /// Linux io_uring, up to `iodepth` I/Os in flight per thread.
    IoUring,
    /// Completes every I/O at once without touching the target: measures the tool itself.
    Null,
}

impl EngineKind {
    /// Every engine, in the order `bakeoff` lists them.
    pub const ALL: [EngineKind; 3] = [EngineKind::Psync, EngineKind::IoUring, EngineKind::Null];

    /// Help of the `engine` key: every engine and what it is for.
    pub const HELP: &'static str = "I/O engine: psync, io_uring or null (no I/O; tests the tool)";

    /// The name used in job files and `--set engine=`.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Null => "null",
        }
    }

    /// Parses an engine name.
    pub fn parse(text: &str) -> Result<EngineKind, String> {
        EngineKind::ALL
            .into_iter()
            .find(|e| e.name() == text)
            .ok_or_else(|| format!("unknown engine '{text}' (allowed: {})", EngineKind::names()))
    }

    /// Every engine's name, for messages: `psync, io_uring, null`.
    pub fn names() -> String {
        EngineKind::ALL.map(EngineKind::name).join(", ")
    }
}

pub use crate::op::OpKind;

/// How offsets are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Uniformly random `bs`-aligned offsets over the I/O region of a random file.
    Random,
    /// Consecutive offsets, wrapping at the end of the region, moving to the next file.
    Sequential,
}

/// What an I/O step does per operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum IoMix {
    /// Read only.
    Read,
    /// Write only.
    Write,
    /// Read a block, then write it back at the same offset (a database block update).
    Update,
    /// Each operation reads with probability `read_pct` %, else writes (fio `randrw`).
    Mixed { read_pct: u8 },
}

/// `fsync` or `fdatasync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncKind {
    /// `fsync(2)`.
    Fsync,
    /// `fdatasync(2)`.
    Fdatasync,
}

/// One I/O step: `count` operations (or, if `None`, operations until the run ends).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoStep {
    /// What each operation does.
    pub mix: IoMix,
    /// How offsets are chosen.
    pub pattern: Pattern,
    /// Bytes per operation.
    pub bs: u64,
    /// Operations per iteration of the role's loop; `None` streams until the run ends (a role
    /// whose loop is this one step: its `iodepth` stays in flight across iterations).
    pub count: Option<u64>,
    /// Asynchronous (filebench `aiowrite`): the step ends once its I/Os are submitted; an
    /// [`Step::AioWait`] later in the loop waits for them.
    #[serde(default, rename = "async")]
    pub async_io: bool,
}

/// One step of a role's loop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Issue I/O.
    Io(IoStep),
    /// Burn CPU: this many iterations of a memory-touching loop (filebench `hog`).
    Hog(u64),
    /// A file operation (create, delete, open, ..., whole-file read and write) on a tree fileset.
    File(FileStep),
    /// Post one unit to the gate of every thread of these roles (filebench `sempost ... blocking`).
    Post(Vec<usize>),
    /// Block on this role's gate until enough posts arrived (filebench `semblock`).
    Wait,
    /// Hand `bytes` of redo to the log-writer role and wait until it is durable.
    Commit { bytes: u64, log_role: usize },
    /// Sync the current file.
    Sync(SyncKind),
    /// Wait until every asynchronous I/O of this thread completed (filebench `aiowait`).
    AioWait,
    /// With probability `pct` %, dirty the block the last read step read: queue it for the
    /// `dbwriter` role to write (the session does not write data blocks itself), and let the
    /// iteration's commit step commit. With that role at 0 threads the session writes the block
    /// back in place. In a role with a dirty step, commit steps commit only dirtying iterations.
    Dirty { dbwriter: usize, pct: u8 },
}

pub use crate::fileop::{FileOp, FileStep, SizeDist, TreeSpec};

/// The semaphore that couples roles (a role's `gate` key): a waiter needs `value` posts per
/// pass; posters may run at most `highwater` posts ahead of what the waiter has asked for
/// (filebench semblock semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SemaphoreSpec {
    /// Posts consumed per pass of the waiter.
    pub value: u64,
    /// How far posters may run ahead before they block.
    pub highwater: u64,
}

/// Sync every N writes (fio `fsync=N` / `fdatasync=N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncEvery {
    /// Which call.
    pub kind: SyncKind,
    /// After this many writes.
    pub writes: u64,
}

/// Open-flag durability mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    /// Plain writes.
    #[default]
    None,
    /// `O_DSYNC`.
    Dsync,
    /// `O_SYNC`.
    Sync,
}

/// A group of identical threads with one loop of steps (a filebench thread, a SLOB session).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RolePlan {
    /// Role name, e.g. `reader`, `dbwr`, `lgwr`.
    pub name: String,
    /// Number of threads.
    pub threads: u32,
    /// Index into [`Plan::filesets`].
    pub fileset: usize,
    /// Open with `O_DIRECT`.
    pub direct: bool,
    /// `O_DSYNC` / `O_SYNC`.
    pub sync_mode: SyncMode,
    /// I/Os in flight per thread.
    pub iodepth: u32,
    /// Byte offset where the I/O region starts in each file (fio `offset`).
    pub offset: u64,
    /// Target operations per second of each thread (open loop), if any.
    pub rate_iops: Option<f64>,
    /// The loop each thread runs.
    pub steps: Vec<Step>,
    /// This role's gate, if another role posts to it.
    pub gate: Option<SemaphoreSpec>,
    /// Sync every N writes.
    pub sync_every: Option<SyncEvery>,
    /// Writes of this role are log writes.
    pub log: bool,
    /// This role is a group-commit log writer serving `Commit` steps.
    pub log_writer: bool,
    /// This role writes the blocks `Dirty` steps queue, in asynchronous batches of up to
    /// `iodepth` (Oracle's DBWR).
    #[serde(default)]
    pub db_writer: bool,
    /// For a db writer: how many dirty blocks may wait; sessions block when that many do
    /// (Oracle's "free buffer waits").
    #[serde(default)]
    pub dirty_limit: u64,
    /// The engine of this role, where it differs from the run's.
    #[serde(default)]
    pub engine: Option<EngineKind>,
    /// A mix (`mix = true`): each pass of the loop runs one step, drawn with probability
    /// weight / sum of weights (SPECsfs's operation mix); empty: every step in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<u32>,
}

impl RolePlan {
    /// The role does file operations (its steps are file steps), not block I/O.
    pub fn does_file_ops(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::File(_)))
    }
}

/// A set of data files (or device regions) that roles do I/O on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FilesetPlan {
    /// Name, used in file names (`bakeoff-<name>.<i>`).
    pub name: String,
    /// Number of files.
    pub nrfiles: u32,
    /// Bytes per file (the mean size of a tree's files).
    pub file_size: u64,
    /// A directory tree that file operations change (`entries`, `dirwidth`, `prealloc`);
    /// `None`: `nrfiles` flat files (or device regions) that block I/O reads and writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeSpec>,
    /// With `verify=`: where the verified blocks of its files lie; `None`: not verified (no
    /// `verify=`, or a log writer's redo, which is not written in blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<BlockGrid>,
}

/// The validated plan of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Workload name (`randread`, `slob`, a file name).
    pub workload: String,
    /// Engine every worker uses.
    pub engine: EngineKind,
    /// Measured duration.
    #[serde(with = "duration_ns", rename = "runtime_ns")]
    pub runtime: Duration,
    /// Warm-up before measuring (in addition to `runtime`).
    #[serde(with = "duration_ns", rename = "ramp_time_ns")]
    pub ramp_time: Duration,
    /// `ramp_time=auto`: warm up until steady or the cap (`ramp_time` is then zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_auto: Option<AutoRamp>,
    /// `ss=`: the measured window ends once its throughput is steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopRule>,
    /// Seed of the data and offset generators.
    pub seed: u64,
    /// Repetition of a study cell (1 for a single run): mixed into the offset generators only,
    /// so repetitions replay different offsets over the same data.
    #[serde(default = "first_repetition")]
    pub repetition: u32,
    /// Share of each buffer that compresses (fio `buffer_compress_percentage`).
    pub compress_pct: u8,
    /// Files laid out before the run.
    pub filesets: Vec<FilesetPlan>,
    /// Thread groups.
    pub roles: Vec<RolePlan>,
    /// Every resolved setting as text, for the run record.
    pub settings: std::collections::BTreeMap<String, String>,
    /// Client processes (`clients=N`): each runs every role on its own copy of the filesets;
    /// 0 runs the threads in bakeoff itself.
    #[serde(default)]
    pub clients: u32,
    /// A captured trace to replay in place of roles (`run --replay`): the engine runs one
    /// thread per captured thread on the trace's own files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayPlan>,
    /// `verify=crc32c|sha256`: every block written carries a header checked on every read and
    /// in a final pass (see [`crate::verify`]); the filesets' `verify` say where the blocks are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Algorithm>,
    /// Under `--crash-states`: the run keeps a journal of its verified writes and syncs and
    /// hands it back here (a crash state's check needs it); off otherwise.
    #[serde(skip)]
    pub journal: crate::verify::journal::JournalSink,
}

fn first_repetition() -> u32 {
    1
}

impl Plan {
    /// Total bytes of all filesets, every client's copy (saturating: a planned dataset is far
    /// smaller). A tree counts every entry at its mean size: what it holds when every file
    /// exists.
    pub fn dataset_bytes(&self) -> u64 {
        let replay = self.replay.as_ref().map_or(0, |r| r.peak_bytes);
        self.filesets
            .iter()
            .map(|f| f.file_size.saturating_mul(u64::from(f.nrfiles)))
            .fold(0, u64::saturating_add)
            .saturating_mul(u64::from(self.clients.max(1)))
            .saturating_add(replay)
    }

    /// The plan client `index` of a `clients=N` run executes: every role on its own files, with
    /// its own seed (so no two clients hold the same bytes), in the client's own process.
    pub fn client_plan(&self, index: u32) -> Plan {
        Plan {
            seed: self.seed ^ u64::from(index + 1).wrapping_mul(0xA24B_AED4_963E_E407),
            clients: 0,
            ..self.clone()
        }
    }

    /// This plan with an automatic warm-up (and a stop rule) replaced by a fixed warm-up of
    /// [`CLIENTS_RAMP`]: client processes each measure their own window from
    /// the parent's go, so their windows can only open together at a time known in advance.
    pub fn with_fixed_ramp(&self) -> Plan {
        match self.ramp_auto {
            Some(auto) => Plan {
                ramp_time: CLIENTS_RAMP.min(auto.max),
                ramp_auto: None,
                stop: None,
                ..self.clone()
            },
            None => Plan {
                stop: None,
                ..self.clone()
            },
        }
    }

    /// Offered operations per second of the roles that use fileset `fileset` (threads x
    /// `rate_iops`), if every one of them has a rate.
    pub fn offered_ops_per_s(&self, fileset: usize) -> Option<f64> {
        let users = self.roles.iter().filter(|r| {
            r.threads > 0
                && (r.fileset == fileset
                    || r.steps
                        .iter()
                        .any(|s| matches!(s, Step::File(f) if f.fileset == fileset)))
        });
        users
            .map(|r| r.rate_iops.map(|rate| rate * f64::from(r.threads)))
            .sum::<Option<f64>>()
    }

    /// Re-sizes the trees sized by offered load (`data_per_ops`) to the roles' current rates:
    /// call it after changing `rate_iops` (a load ramp's point). Returns true if a size changed.
    pub fn fit_datasets_to_rate(&mut self) -> bool {
        let mut changed = false;
        for i in 0..self.filesets.len() {
            let offered = self.offered_ops_per_s(i);
            let f = &mut self.filesets[i];
            if let Some(entries) = f
                .tree
                .as_ref()
                .and_then(|t| t.entries_for(f.file_size, offered))
            {
                changed |= f.nrfiles != entries;
                f.nrfiles = entries;
            }
        }
        changed
    }

    /// Total worker threads (a replay's: one per captured thread).
    pub fn threads(&self) -> u32 {
        if let Some(replay) = &self.replay {
            return replay.threads;
        }
        self.roles
            .iter()
            .fold(0, |n, r| n.saturating_add(r.threads))
    }
}
