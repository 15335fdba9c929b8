//! A worker of file operations: runs a role's file steps (create, delete, open, ..., whole-file
//! reads and writes) on tree filesets with system calls of its own, timing each operation. In
//! a role whose steps run in order, each tree has one open file per thread (filebench's `fd`):
//! create and open replace it, close closes it, and an operation on the open file with none
//! open opens a random existing one first (inside its time) and leaves it open. In a mix, each
//! operation stands alone: it opens and closes what it uses, inside its time. Paths, lists and
//! buffers are prepared before the run: the per-operation path allocates nothing.

mod ops;
mod owned;

pub use owned::FileTree;

use super::schedule::{self, Schedule};
use crate::buffers::{fill, AlignedBuf};
use crate::shared::{RunError, Shared};
use crate::stats::ThreadStats;
use bakeoff_core::plan::{RolePlan, Step, SyncMode};
use owned::Owned;
use rustix::fd::OwnedFd;
use rustix::fs::OFlags;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Bytes of the buffer a readdir reads directory entries into.
const DIR_BUF: usize = 32 << 10;

/// Everything a file worker thread starts with.
pub struct FileWorkerSpec {
    /// Its role.
    pub role: Arc<RolePlan>,
    /// Run-wide state.
    pub shared: Arc<Shared>,
    /// Its statistics.
    pub stats: ThreadStats,
    /// Seed of its picks and write buffers.
    pub seed: u64,
    /// Share of each write buffer that is zeros.
    pub compress_pct: u8,
    /// The trees its steps use: fileset index, the tree, and this thread's share of it
    /// (thread `k` of the `n` that use it).
    pub trees: Vec<(usize, Arc<FileTree>, u32, u32)>,
    /// The role's arrivals under `rate_iops`, one schedule for all its threads.
    pub schedule: Option<Arc<Schedule>>,
}

/// One tree as this thread works on it.
struct Place {
    fileset: usize,
    tree: Arc<FileTree>,
    owned: Owned,
    /// The open file (its descriptor and local index).
    open: Option<(OwnedFd, u32)>,
    /// Open with write access (some step writes to this tree).
    writable: bool,
}

/// One file-operation thread.
pub struct FileWorker {
    role: Arc<RolePlan>,
    shared: Arc<Shared>,
    stats: ThreadStats,
    rng: fastrand::Rng,
    places: Vec<Place>,
    /// The place of each step (`usize::MAX` for a hog step).
    step_place: Vec<usize>,
    /// Running sums of a mix's weights; empty: steps run in order.
    cumulative: Vec<u64>,
    rbuf: AlignedBuf,
    wbuf: AlignedBuf,
    dirbuf: Vec<MaybeUninit<u8>>,
    /// `O_DSYNC` / `O_SYNC` from the role.
    sync_flags: OFlags,
    /// The role's arrivals under `rate_iops` (open loop), shared with its other threads.
    schedule: Option<Arc<Schedule>>,
    stamp: u64,
}

impl FileWorker {
    /// Prepares a worker: its share of every tree, its buffers.
    pub fn new(spec: FileWorkerSpec) -> FileWorker {
        let role = spec.role;
        let steps = || {
            role.steps.iter().filter_map(|s| match s {
                Step::File(f) => Some(f),
                _ => None,
            })
        };
        let places: Vec<Place> = (spec.trees.into_iter())
            .map(|(fileset, tree, k, n)| Place {
                writable: steps().any(|f| f.fileset == fileset && f.op.writes()),
                owned: Owned::new(&tree, k, n),
                open: None,
                fileset,
                tree,
            })
            .collect();
        let step_place = (role.steps.iter())
            .map(|s| match s {
                Step::File(f) => places.iter().position(|p| p.fileset == f.fileset),
                _ => None,
            })
            .map(|p| p.unwrap_or(usize::MAX))
            .collect();
        let bs = steps().map(|f| f.bs).max().unwrap_or(4096) as usize;
        let mut wbuf = AlignedBuf::new(bs);
        let mut rng = fastrand::Rng::with_seed(spec.seed);
        fill(wbuf.as_mut_slice(), &mut rng, spec.compress_pct);
        let cumulative = role
            .weights
            .iter()
            .scan(0u64, |sum, &w| {
                *sum += u64::from(w);
                Some(*sum)
            })
            .collect();
        let sync_flags = match role.sync_mode {
            SyncMode::None => OFlags::empty(),
            SyncMode::Dsync => OFlags::DSYNC,
            SyncMode::Sync => OFlags::SYNC,
        };
        FileWorker {
            schedule: spec.schedule,
            stamp: spec.seed << 20,
            rbuf: AlignedBuf::new(bs),
            dirbuf: vec![MaybeUninit::uninit(); DIR_BUF],
            shared: spec.shared,
            stats: spec.stats,
            places,
            step_place,
            cumulative,
            wbuf,
            rng,
            sync_flags,
            role,
        }
    }

    /// Runs until the run ends or an operation fails.
    pub fn run(mut self) -> ThreadStats {
        if self.schedule.is_some() {
            schedule::tighten_timer_slack();
        }
        if let Err(e) = self.run_steps() {
            self.shared.fail(e);
        }
        self.stats
    }

    fn run_steps(&mut self) -> Result<(), RunError> {
        let role = self.role.clone();
        while !self.shared.stopped() {
            if self.cumulative.is_empty() {
                for (i, step) in role.steps.iter().enumerate() {
                    self.step(i, step)?;
                    if self.shared.stopped() {
                        break;
                    }
                }
            } else {
                let total = self.cumulative.last().copied().unwrap_or(1);
                let draw = self.rng.u64(0..total.max(1));
                let i = self.cumulative.partition_point(|&c| c <= draw);
                self.step(i, &role.steps[i])?;
            }
        }
        Ok(())
    }

    fn step(&mut self, i: usize, step: &Step) -> Result<(), RunError> {
        match step {
            Step::File(f) => self.file_op(self.step_place[i], f),
            Step::Hog(n) => {
                super::hog(*n);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The scheduled start of the next operation (now, in a closed loop): the role's oldest
    /// arrival not yet taken, slept for.
    fn next_start(&mut self) -> u64 {
        let now = self.shared.now_ns();
        let Some(schedule) = &self.schedule else {
            return now;
        };
        let sched = schedule.take(now);
        self.shared.sleep_until(sched);
        sched
    }

    /// Each operation of a mix stands alone (see the module doc).
    fn in_mix(&self) -> bool {
        !self.cumulative.is_empty()
    }
}
