//! What a replay's threads share: the trace and its program, where its files are, each
//! thread's progress, and the run's replay counts.

use super::cache::Loaded;
use super::deps::Progress;
use super::group::SyncGroups;
use bakeoff_core::plan::{FlagRule, ReplayPlan, ReplayTiming, ReplayWindow, SyncRule, Think};
use bakeoff_core::trace::plan::{marked_window, trace_duration_ns};
use bakeoff_core::trace::{FileId, FileKind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a replay counted beside the run's operations (the run record's `replay` part).
pub use bakeoff_core::record::replay::ReplayRecord as ReplayCounts;

/// Counters the threads add to.
#[derive(Default)]
pub struct Counters {
    pub calls: AtomicU64,
    pub dependency_waits: AtomicU64,
    pub wait_ns: AtomicU64,
    pub untimed: AtomicU64,
    pub async_calls: AtomicU64,
    pub allocate_emulated: AtomicU64,
    pub syncs_merged: AtomicU64,
    pub probes_found: AtomicU64,
}

/// The replay's shared state.
pub struct Replay {
    /// The trace and its program.
    pub loaded: Arc<Loaded>,
    /// Every path id under the replay directory.
    pub paths: Vec<PathBuf>,
    /// The replay directory.
    dir: PathBuf,
    /// Each file's path now (renames move it), by file id.
    current: Mutex<Vec<u32>>,
    /// Each thread's progress.
    pub progress: Vec<Progress>,
    /// Threads still replaying: the last one to finish ends the run.
    pub running: AtomicU32,
    /// When calls are issued.
    pub timing: ReplayTiming,
    /// Schedule speed-up.
    pub speed: f64,
    /// CPU burnt between calls: hog iterations per nanosecond of captured CPU time, if any.
    pub hog_per_ns: Option<f64>,
    /// Open flags.
    pub flags: FlagRule,
    /// With window=marked: the marks' times.
    pub window: Option<(u64, u64)>,
    /// With window=marked and timing=fast: when the last thread reached the start mark and
    /// opened the window (`u64::MAX`: not yet).
    pub window_opened_ns: AtomicU64,
    /// With window=marked and timing=fast: how many threads have reached the start mark (made
    /// every call before it); the window opens when all have.
    pub at_start_mark: Progress,
    /// With syncs=merge: each regular file's writes and syncs.
    pub sync_groups: Option<SyncGroups>,
    /// The counts.
    pub counts: Counters,
}

impl Replay {
    /// The state of replaying `loaded` as `plan` says, with its paths under the replay
    /// directory.
    pub fn new(
        loaded: Arc<Loaded>,
        plan: &ReplayPlan,
        dir: PathBuf,
        paths: Vec<PathBuf>,
    ) -> Replay {
        let trace = &loaded.trace;
        let threads = loaded.program.threads.len();
        let hog_per_ns = (plan.think == Think::Cpu).then(calibrate_hog);
        let window = match plan.window {
            ReplayWindow::Marked => marked_window(trace),
            ReplayWindow::All => None,
        };
        Replay {
            current: Mutex::new(trace.files.iter().map(|f| f.path).collect()),
            paths,
            dir,
            progress: (0..threads).map(|_| Progress::default()).collect(),
            running: AtomicU32::new(threads as u32),
            timing: plan.timing,
            speed: plan.speed,
            hog_per_ns,
            flags: plan.flags,
            window,
            window_opened_ns: AtomicU64::new(u64::MAX),
            at_start_mark: Progress::default(),
            sync_groups: (plan.syncs == SyncRule::Merge)
                .then(|| SyncGroups::new(trace.files.iter().map(|f| f.kind == FileKind::File))),
            counts: Counters::default(),
            loaded,
        }
    }

    /// Where file `file` is now.
    pub fn current_path(&self, file: FileId) -> PathBuf {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let path = current.get(file as usize).copied().unwrap_or(u32::MAX);
        self.path(path)
    }

    /// Records that `file` was renamed to path `to`; a file that was at `to` is gone (a rename
    /// over a file unlinks it), so a later open of it does not find the renamed one.
    pub fn moved(&self, file: FileId, to: u32) {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        for p in current.iter_mut().filter(|p| **p == to) {
            *p = u32::MAX;
        }
        if let Some(p) = current.get_mut(file as usize) {
            *p = to;
        }
    }

    /// The path of path id `id` (for an id the trace does not define, a name in the replay
    /// directory that does not exist).
    pub fn path(&self, id: u32) -> PathBuf {
        (self.paths.get(id as usize).cloned())
            .unwrap_or_else(|| super::paths::unknown(&self.dir, id))
    }

    /// The calls of `thread` this replay issues: all, or those that start before the window's
    /// end mark.
    pub fn end_of(&self, thread: usize) -> usize {
        let ops = &self.loaded.trace.ops[thread];
        match self.window {
            Some((_, end)) => ops.partition_point(|r| r.start_ns < end),
            None => ops.len(),
        }
    }

    /// The first call of `thread` at or after the window's start mark (with timing=fast the
    /// thread waits there for the others), if the window is marked; at most
    /// [`end_of`](Self::end_of).
    pub fn window_start_of(&self, thread: usize) -> Option<usize> {
        let ops = &self.loaded.trace.ops[thread];
        let (start, _) = self.window?;
        Some(
            ops.partition_point(|r| r.start_ns < start)
                .min(self.end_of(thread)),
        )
    }

    /// With timing=original: when, after the schedule's origin, the replay ends (the end mark
    /// or the trace's end, divided by the speed).
    pub fn original_end_ns(&self) -> Option<u64> {
        if self.timing != ReplayTiming::Original {
            return None;
        }
        let end = match self.window {
            Some((_, end)) => end,
            None => trace_duration_ns(&self.loaded.trace),
        };
        Some((end as f64 / self.speed) as u64)
    }

    /// What the run counted.
    pub fn counts(&self) -> ReplayCounts {
        let c = &self.counts;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ReplayCounts {
            trace_calls: self.loaded.trace.record_count(),
            calls: get(&c.calls),
            edges: self.loaded.program.edge_count() as u64,
            dependency_waits: get(&c.dependency_waits),
            wait_ns: get(&c.wait_ns),
            untimed: get(&c.untimed),
            async_calls: get(&c.async_calls),
            allocate_emulated: get(&c.allocate_emulated),
            syncs_merged: get(&c.syncs_merged),
            probes_found: get(&c.probes_found),
            ..ReplayCounts::default()
        }
    }

    /// After a whole replay: how many regular files the trace knows the end size of, and how
    /// many of them are not that size now. A file the capture saw end but the replay did not
    /// leave where it should is a difference too.
    pub fn end_sizes(&self) -> (u64, u64) {
        let (mut checked, mut differ) = (0, 0);
        for (id, f) in self.loaded.trace.files.iter().enumerate() {
            let Some(want) = f.end_size.filter(|_| f.kind == FileKind::File) else {
                continue;
            };
            checked += 1;
            let now = std::fs::metadata(self.current_path(id as FileId)).map(|m| m.len());
            if now.ok() != Some(want) {
                differ += 1;
            }
        }
        (checked, differ)
    }
}

/// Hog iterations per nanosecond on this machine, measured once per run: the fastest of a
/// few short rounds, since a round another thread preempted took longer than its CPU time.
fn calibrate_hog() -> f64 {
    let n = 200_000u64;
    let fastest = (0..10)
        .map(|_| {
            let start = std::time::Instant::now();
            crate::worker::hog(n);
            start.elapsed().as_nanos().max(1)
        })
        .min()
        .unwrap_or(1);
    n as f64 / fastest as f64
}
