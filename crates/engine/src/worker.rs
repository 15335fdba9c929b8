//! One worker thread: runs its role's loop of steps against one engine. The per-I/O path does
//! no allocation, locking, formatting or logging.

use crate::engines::{Completion, Engine, IoReq};
use crate::gate::{Gate, LogQueue};
use crate::layout::Region;
use crate::stats::ThreadStats;
use bakeoff_core::plan::{IoMix, IoStep, OpKind, Pattern, RolePlan, Step, SyncKind, SyncMode};
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// An I/O returned an error.
    #[error("{op} of {len} bytes at offset {offset} of {path} failed: {source}")]
    Io {
        op: &'static str,
        path: String,
        offset: u64,
        len: u64,
        source: std::io::Error,
    },
    /// An I/O transferred fewer bytes than asked.
    #[error("short {op} at offset {offset} of {path}: {got} of {len} bytes")]
    Short {
        op: &'static str,
        path: String,
        offset: u64,
        len: u64,
        got: u64,
    },
    /// A worker could not start.
    #[error("starting the {engine} engine for role {role}: {source}")]
    Setup {
        engine: &'static str,
        role: String,
        source: std::io::Error,
    },
}

/// State shared by all workers of a run.
pub struct Shared {
    /// Start of the run; all times are nanoseconds since.
    pub start: Instant,
    /// Start of the measured window.
    pub ramp_ns: u64,
    /// End of the run; lowered to "now" to stop early.
    pub end_ns: AtomicU64,
    /// Gates per role, one per thread.
    pub gates: Vec<Vec<Arc<Gate>>>,
    /// Group-commit queue per log-writer role.
    pub logs: Vec<Option<Arc<LogQueue>>>,
    /// The first error.
    pub error: Mutex<Option<RunError>>,
}

impl Shared {
    /// Nanoseconds since the start.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// True once the run should end.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.now_ns() >= self.end_ns.load(Ordering::Relaxed)
    }

    /// Ends the run now.
    pub fn stop_now(&self) {
        self.end_ns.fetch_min(self.now_ns(), Ordering::Relaxed);
    }

    /// Records an error (the first one wins) and stops the run.
    pub fn fail(&self, err: RunError) {
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(err);
        }
        self.stop_now();
    }
}

/// A role's open files and their regions.
pub struct RoleFiles {
    /// Open files, indexed like `regions`.
    pub files: Arc<Vec<File>>,
    /// Region of each file.
    pub regions: Vec<Region>,
}

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
    writes_since_sync: u64,
    last_write_file: u32,
    interval_ns: u64,
    next_sched_ns: u64,
    stamp: u64,
}

impl<E: Engine> Worker<E> {
    /// Prepares worker `thread` of role `role_idx`.
    pub fn new(
        role: Arc<RolePlan>,
        role_idx: usize,
        thread: usize,
        files: Arc<RoleFiles>,
        shared: Arc<Shared>,
        stats: ThreadStats,
        seed: u64,
    ) -> Result<Self, RunError> {
        let max_bs = role
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Io(io) => Some(io.bs),
                _ => None,
            })
            .max()
            .unwrap_or(1 << 20);
        let depth = role.iodepth.max(1);
        let engine = E::open(files.files.clone(), depth, max_bs as usize).map_err(|source| {
            RunError::Setup {
                engine: E::NAME,
                role: role.name.clone(),
                source,
            }
        })?;
        let interval_ns = role.rate_iops.map_or(0, |r| (1e9 / r) as u64);
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
            writes_since_sync: 0,
            last_write_file: 0,
            interval_ns,
            next_sched_ns: shared.now_ns(),
            stamp: (thread as u64) << 40,
            role,
            shared,
        };
        let mut fill_rng = fastrand::Rng::with_seed(seed ^ 0xDA7A);
        for slot in 0..depth {
            crate::buffers::fill(w.engine.buf_mut(slot), &mut fill_rng, 0);
        }
        Ok(w)
    }

    fn stopped(&self) -> bool {
        self.shared.stopped()
    }

    /// Runs until the run ends or an I/O fails.
    pub fn run(mut self) -> ThreadStats {
        let outcome = if self.role.log_writer {
            self.run_log_writer()
        } else {
            self.run_steps()
        };
        if let Err(e) = outcome {
            self.shared.fail(e);
        }
        self.stats
    }

    fn run_steps(&mut self) -> Result<(), RunError> {
        let role = self.role.clone();
        while !self.stopped() {
            for step in &role.steps {
                match step {
                    Step::Io(io) => self.run_io(io)?,
                    Step::Hog(n) => hog(*n),
                    Step::Post(targets) => {
                        for &t in targets {
                            for gate in &self.shared.gates[t] {
                                gate.post(&|| self.shared.stopped());
                            }
                        }
                    }
                    Step::Wait => self.shared.gates[self.role_idx][self.thread]
                        .clone()
                        .wait(&|| self.shared.stopped()),
                    Step::Commit { bytes, log_role } => {
                        if let Some(q) = self.shared.logs[*log_role].clone() {
                            q.commit(*bytes, &|| self.shared.stopped());
                        }
                    }
                    Step::Sync(kind) => self.sync(self.last_write_file, *kind)?,
                }
                if self.stopped() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Issues `io.count` operations (or until the end), keeping up to `iodepth` in flight.
    fn run_io(&mut self, io: &IoStep) -> Result<(), RunError> {
        let mut remaining = io.count.unwrap_or(u64::MAX);
        let mut inflight = 0usize;
        let mut sync_due = false;
        loop {
            if self.stopped() {
                remaining = 0;
            }
            while remaining > 0 && !sync_due && !self.free.is_empty() {
                let Some(sched) = self.pace(inflight == 0) else {
                    break;
                };
                let slot = self.free.pop().expect("checked non-empty");
                self.prepare(slot, io, sched);
                remaining -= 1;
            }
            if !self.batch.is_empty() {
                inflight += self.submit_batch()?;
            }
            if inflight == 0 {
                if sync_due {
                    self.sync(
                        self.last_write_file,
                        self.role.sync_every.map_or(SyncKind::Fsync, |s| s.kind),
                    )?;
                    sync_due = false;
                    continue;
                }
                return Ok(());
            }
            self.engine
                .reap(1, &mut self.done)
                .map_err(|e| self.io_error("reap", 0, 0, 0, e))?;
            let now = self.shared.now_ns();
            while let Some(c) = self.done.pop() {
                inflight -= 1;
                sync_due |= self.complete(c, now)?;
            }
        }
    }

    /// The scheduled start of the next I/O, sleeping until then if nothing is in flight;
    /// `None` if it is not yet due and other I/O is in flight.
    fn pace(&mut self, idle: bool) -> Option<u64> {
        let now = self.shared.now_ns();
        if self.interval_ns == 0 {
            return Some(now);
        }
        let sched = self.next_sched_ns;
        if sched > now {
            if !idle {
                return None;
            }
            self.sleep_until(sched);
        }
        self.next_sched_ns = sched + self.interval_ns;
        Some(sched)
    }

    fn sleep_until(&self, t_ns: u64) {
        loop {
            let now = self.shared.now_ns();
            if now >= t_ns || self.stopped() {
                return;
            }
            let left = t_ns - now;
            if left > 100_000 {
                std::thread::sleep(Duration::from_nanos((left - 50_000).min(20_000_000)));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn prepare(&mut self, slot: u32, io: &IoStep, sched: u64) {
        let write = match io.mix {
            IoMix::Read | IoMix::Update => false,
            IoMix::Write => true,
            IoMix::Mixed { read_pct } => self.rng.u8(0..100) >= read_pct,
        };
        let (file, offset) = self.next_offset(io);
        let req = IoReq {
            slot,
            file,
            offset,
            len: io.bs as u32,
            write,
        };
        if write {
            self.stamp_buffer(slot);
        }
        self.slots[slot as usize] = Slot {
            req: Some(req),
            sched_ns: sched,
            submit_ns: 0,
            then_write: io.mix == IoMix::Update,
        };
        self.batch.push(req);
    }

    /// Makes each written block differ, so no layer can deduplicate writes.
    fn stamp_buffer(&mut self, slot: u32) {
        self.stamp += 1;
        self.engine.buf_mut(slot)[..8].copy_from_slice(&self.stamp.to_le_bytes());
    }

    fn next_offset(&mut self, io: &IoStep) -> (u32, u64) {
        let regions = &self.files.regions;
        let offset0 = self.role.offset;
        match io.pattern {
            Pattern::Random => {
                let f = if regions.len() > 1 {
                    self.rng.usize(0..regions.len())
                } else {
                    0
                };
                let blocks = ((regions[f].size - offset0) / io.bs).max(1);
                (
                    f as u32,
                    regions[f].base + offset0 + self.rng.u64(0..blocks) * io.bs,
                )
            }
            Pattern::Sequential => {
                let mut f = self.seq_file % regions.len();
                let blocks = ((regions[f].size - offset0) / io.bs).max(1);
                if self.seq_block >= blocks {
                    self.seq_block = 0;
                    f = (f + 1) % regions.len();
                    self.seq_file = f;
                }
                let off = regions[f].base + offset0 + self.seq_block * io.bs;
                self.seq_block += 1;
                (f as u32, off)
            }
        }
    }

    fn submit_batch(&mut self) -> Result<usize, RunError> {
        let now = self.shared.now_ns();
        for r in &self.batch {
            self.slots[r.slot as usize].submit_ns = now;
        }
        let n = self.batch.len();
        let first = self.batch[0];
        self.engine.submit(&self.batch).map_err(|e| {
            self.io_error("submit", first.file, first.offset, u64::from(first.len), e)
        })?;
        self.batch.clear();
        Ok(n)
    }

    /// Accounts one completion; returns true when a sync is now due.
    fn complete(&mut self, c: Completion, now: u64) -> Result<bool, RunError> {
        let slot = self.slots[c.slot as usize];
        let req = slot.req.expect("completion for an idle slot");
        let op = if req.write { "write" } else { "read" };
        if c.result < 0 {
            let err = std::io::Error::from_raw_os_error(-c.result as i32);
            return Err(self.io_error(op, req.file, req.offset, u64::from(req.len), err));
        }
        if c.result as u64 != u64::from(req.len) {
            let path = self.path_of(req.file);
            return Err(RunError::Short {
                op,
                path,
                offset: req.offset,
                len: req.len.into(),
                got: c.result as u64,
            });
        }
        let kind = match (req.write, self.role.log) {
            (false, _) => OpKind::Read,
            (true, false) => OpKind::Write,
            (true, true) => OpKind::LogWrite,
        };
        let measured =
            now >= self.shared.ramp_ns && now <= self.shared.end_ns.load(Ordering::Relaxed);
        self.stats.record(
            kind,
            u64::from(req.len),
            now - slot.sched_ns,
            now - slot.submit_ns,
            measured,
        );
        if slot.then_write {
            // The read half of an update is done: write the block back in place.
            let write = IoReq { write: true, ..req };
            self.stamp_buffer(req.slot);
            self.slots[req.slot as usize] = Slot {
                req: Some(write),
                sched_ns: now,
                submit_ns: now,
                then_write: false,
            };
            self.batch.push(write);
            return Ok(false);
        }
        self.slots[req.slot as usize].req = None;
        self.free.push(req.slot);
        if req.write {
            self.last_write_file = req.file;
            if let Some(every) = self.role.sync_every {
                self.writes_since_sync += 1;
                if self.writes_since_sync >= every.writes {
                    self.writes_since_sync = 0;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    fn sync(&mut self, file: u32, kind: SyncKind) -> Result<(), RunError> {
        let t0 = self.shared.now_ns();
        self.engine
            .sync(file, kind)
            .map_err(|e| self.io_error(sync_name(kind), file, 0, 0, e))?;
        let t1 = self.shared.now_ns();
        let measured =
            t1 >= self.shared.ramp_ns && t1 <= self.shared.end_ns.load(Ordering::Relaxed);
        self.stats
            .record(OpKind::Sync, 0, t1 - t0, t1 - t0, measured);
        Ok(())
    }

    /// Group commit: take every queued commit, append its redo, make it durable, release.
    fn run_log_writer(&mut self) -> Result<(), RunError> {
        let Some(queue) = self.shared.logs[self.role_idx].clone() else {
            return Ok(());
        };
        let region = self.files.regions[0].clone();
        let chunk = 1u64 << 20;
        let mut pos = 0u64;
        while let Some(batch) = queue.next_batch(&|| self.shared.stopped()) {
            let mut left = batch.bytes.div_ceil(512) * 512;
            while left > 0 {
                let len = left.min(chunk).min(region.size - pos);
                self.write_at(region.base + pos, len)?;
                pos = (pos + len) % (region.size / 512 * 512);
                left -= len;
            }
            if self.role.sync_mode == SyncMode::None {
                self.sync(0, SyncKind::Fdatasync)?;
            }
            self.stats.commits += batch.commits;
            queue.complete(batch.upto);
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, len: u64) -> Result<(), RunError> {
        let now = self.shared.now_ns();
        self.stamp_buffer(0);
        let req = IoReq {
            slot: 0,
            file: 0,
            offset,
            len: len as u32,
            write: true,
        };
        self.slots[0] = Slot {
            req: Some(req),
            sched_ns: now,
            submit_ns: now,
            then_write: false,
        };
        self.free.retain(|&s| s != 0);
        self.batch.push(req);
        self.submit_batch()?;
        while self.done.is_empty() {
            self.engine
                .reap(1, &mut self.done)
                .map_err(|e| self.io_error("reap", 0, offset, len, e))?;
        }
        let c = self.done.pop().expect("reaped one");
        let done_at = self.shared.now_ns();
        self.complete(c, done_at)?;
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

/// Burns CPU like filebench's `hog`: `n` iterations of a loop the compiler cannot remove.
pub fn hog(n: u64) {
    let mut acc = 0u64;
    for i in 0..n {
        acc = std::hint::black_box(acc.wrapping_add(i));
    }
    std::hint::black_box(acc);
}
