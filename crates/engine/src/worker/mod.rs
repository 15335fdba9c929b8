//! One worker thread: runs its role's loop of steps against one engine. The per-I/O path
//! (`io.rs`) does no allocation, locking, formatting or logging; `log.rs` is the group-commit
//! log writer.

mod db;
mod files;
mod io;
mod log;
pub mod schedule;
mod sync_path;
mod verify;

pub use files::{FileTree, FileWorker, FileWorkerSpec};

use crate::engines::{Completion, Engine, IoReq};
use crate::shared::{RoleFiles, RunError, Shared, WorkerSpec};
use crate::stats::ThreadStats;
use bakeoff_core::plan::{OpKind, RolePlan, Step, SyncKind};
use schedule::Schedule;
use std::sync::Arc;

#[derive(Clone, Copy, Default)]
struct Slot {
    req: Option<IoReq>,
    sched_ns: u64,
    submit_ns: u64,
    then_write: bool,
}

/// One worker.
pub struct Worker<E: Engine> {
    engine: E,
    role: Arc<RolePlan>,
    role_idx: usize,
    thread: usize,
    files: Arc<RoleFiles>,
    shared: Arc<Shared>,
    rng: fastrand::Rng,
    /// Statistics, returned when the worker ends.
    pub stats: ThreadStats,
    slots: Vec<Slot>,
    free: Vec<u32>,
    batch: Vec<IoReq>,
    done: Vec<Completion>,
    seq_file: usize,
    seq_block: u64,
    /// Block size and the number of such blocks in each file's region (see `blocks_of`).
    blocks: (u64, Vec<u64>),
    writes_since_sync: u64,
    last_write_file: u32,
    /// The role's arrivals under `rate_iops` (open loop), shared with its other threads.
    schedule: Option<Arc<Schedule>>,
    stamp: u64,
    clock_ns: u64,
    /// I/Os submitted and not yet reaped (async io steps leave some for an aiowait step).
    inflight: usize,
    /// The block the last read of this thread read: what a dirty step dirties.
    last_read: Option<(u32, u64, u32)>,
    /// This pass of the loop dirtied a block (its commit step commits).
    dirtied: bool,
    /// The role has a dirty step: commit steps commit only the passes that dirtied a block.
    commits_on_dirty: bool,
    /// `verify=`: the blocks of its fileset, stamped and checked.
    verify: Option<verify::WorkerVerify>,
}

impl<E: Engine> Worker<E> {
    /// Prepares a worker from its spec.
    pub fn new(spec: WorkerSpec) -> Result<Self, RunError> {
        let WorkerSpec {
            role,
            role_idx,
            thread,
            files,
            shared,
            stats,
            seed,
            compress_pct,
            buf_len,
            schedule,
            verify,
        } = spec;
        let max_bs = role
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Io(io) => Some(io.bs),
                _ => None,
            })
            .max()
            .or(buf_len)
            .unwrap_or(1 << 20);
        let depth = role.iodepth.max(1);
        let engine = E::open(files.files.clone(), depth, max_bs as usize).map_err(|source| {
            RunError::Setup {
                engine: E::NAME,
                role: role.name.clone(),
                source,
            }
        })?;
        let threads = u64::from(role.threads.max(1));
        let nfiles = files.regions.len().max(1);
        let blocks = files
            .regions
            .first()
            .map_or(1, |r| (r.size - role.offset) / max_bs)
            .max(1);
        let mut w = Worker {
            engine,
            role_idx,
            thread,
            files,
            rng: fastrand::Rng::with_seed(seed),
            stats,
            slots: vec![Slot::default(); depth as usize],
            free: (0..depth).rev().collect(),
            batch: Vec::with_capacity(depth as usize),
            done: Vec::with_capacity(depth as usize),
            seq_file: thread % nfiles,
            seq_block: blocks * thread as u64 / threads,
            blocks: (0, Vec::new()),
            writes_since_sync: 0,
            last_write_file: 0,
            schedule,
            stamp: (thread as u64) << 40,
            clock_ns: 0,
            inflight: 0,
            last_read: None,
            dirtied: false,
            commits_on_dirty: role.steps.iter().any(|s| matches!(s, Step::Dirty { .. })),
            verify: verify.map(|f| {
                let sync_writes = role.sync_mode != bakeoff_core::plan::SyncMode::None;
                verify::WorkerVerify::new(f, depth as usize, sync_writes)
            }),
            role,
            shared,
        };
        let mut fill_rng = fastrand::Rng::with_seed(seed ^ 0xDA7A);
        for slot in 0..depth {
            crate::buffers::fill(w.engine.buf_mut(slot), &mut fill_rng, compress_pct);
        }
        Ok(w)
    }

    fn stopped(&self) -> bool {
        self.shared.stopped()
    }

    /// Reads the clock and remembers the reading for the end-of-run check.
    fn tick(&mut self) -> u64 {
        self.clock_ns = self.shared.now_ns();
        self.clock_ns
    }

    /// Runs until the run ends or an I/O fails.
    pub fn run(mut self) -> ThreadStats {
        if self.schedule.is_some() {
            schedule::tighten_timer_slack();
        }
        let outcome = if self.role.log_writer {
            self.run_log_writer()
        } else if self.role.db_writer {
            self.run_db_writer()
        } else {
            self.run_steps().and_then(|()| self.drain())
        };
        if let Err(e) = outcome {
            self.shared.fail(e);
        }
        if let Some(v) = self.verify.as_mut() {
            v.finish();
        }
        self.stats
    }

    fn run_steps(&mut self) -> Result<(), RunError> {
        let role = self.role.clone();
        while !self.stopped() {
            self.dirtied = false;
            for step in &role.steps {
                match step {
                    Step::Io(io) => self.run_io(io)?,
                    Step::Hog(n) => hog(*n),
                    Step::Post(targets) => {
                        for &t in targets {
                            for semaphore in &self.shared.semaphores[t] {
                                semaphore.post(&|| self.shared.stopped());
                            }
                        }
                    }
                    Step::Wait => self.shared.semaphores[self.role_idx][self.thread]
                        .clone()
                        .wait(&|| self.shared.stopped()),
                    Step::Commit { bytes, log_role } => {
                        if self.dirtied || !self.commits_on_dirty {
                            self.commit(*bytes, *log_role)
                        }
                    }
                    Step::Sync(kind) => self.sync(self.last_write_file, *kind)?,
                    Step::AioWait => self.drain()?,
                    Step::Dirty { dbwriter, pct } => self.dirty(*dbwriter, *pct)?,
                    // The planner gives file steps roles of their own, run by `FileWorker`.
                    Step::File(_) => {}
                }
                if self.stopped() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Hands `bytes` of redo to the log writer and waits until it is durable; the wait is the
    /// commit latency a session feels.
    fn commit(&mut self, bytes: u64, log_role: usize) {
        let Some(q) = self.shared.logs[log_role].clone() else {
            return;
        };
        let t0 = self.shared.now_ns();
        if q.commit(bytes, &|| self.shared.stopped()) {
            let t1 = self.shared.now_ns();
            let measured = self.shared.in_window(t1);
            self.stats
                .record(OpKind::Commit, bytes, t1 - t0, t1 - t0, measured);
        }
    }

    /// Syncs one file and accounts it.
    fn sync(&mut self, file: u32, kind: SyncKind) -> Result<(), RunError> {
        let called = self.verify.as_ref().and_then(|v| v.journal_now());
        let t0 = self.shared.now_ns();
        self.engine
            .sync(file, kind)
            .map_err(|e| self.io_error(sync_name(kind), file, 0, 0, e))?;
        let t1 = self.shared.now_ns();
        if let (Some(v), Some(called)) = (self.verify.as_mut(), called) {
            v.journal_sync(file, called);
        }
        let measured = self.shared.in_window(t1);
        self.stats
            .record(OpKind::Sync, 0, t1 - t0, t1 - t0, measured);
        Ok(())
    }

    fn path_of(&self, file: u32) -> String {
        self.files
            .regions
            .get(file as usize)
            .map_or_else(String::new, |r| r.path.display().to_string())
    }

    fn io_error(
        &self,
        op: &'static str,
        file: u32,
        offset: u64,
        len: u64,
        source: std::io::Error,
    ) -> RunError {
        let path = self.path_of(file);
        RunError::Io {
            op,
            path,
            offset,
            len,
            source,
        }
    }
}

fn sync_name(kind: SyncKind) -> &'static str {
    match kind {
        SyncKind::Fsync => "fsync",
        SyncKind::Fdatasync => "fdatasync",
    }
}

/// Burns `ns` of the calling thread's CPU time: [`hog`] rounds of at most 100 µs (sized by
/// `per_ns`, hog iterations per nanosecond) until the thread's own CPU clock has advanced `ns`.
/// The clock, not the calibration, ends the burn: a calibration taken while other threads
/// held the CPU undercounts the iterations a nanosecond buys (a 200 ms burn once took 172 ms).
pub fn burn_cpu(ns: u64, per_ns: f64) {
    if ns == 0 {
        return;
    }
    let cpu_ns = || {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    };
    let end = cpu_ns() + ns;
    loop {
        let now = cpu_ns();
        if now >= end {
            return;
        }
        let round = (end - now).min(100_000);
        hog(((round as f64 * per_ns) as u64).max(1));
    }
}

/// Burns CPU like filebench's `hog`: `n` iterations of a loop the compiler cannot remove.
pub fn hog(n: u64) {
    let mut acc = 0u64;
    for i in 0..n {
        acc = std::hint::black_box(acc.wrapping_add(i));
    }
    std::hint::black_box(acc);
}
