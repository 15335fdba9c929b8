//! Asynchronous calls (Linux AIO, io_uring) of a replay thread: each is handed to one of a few
//! helper threads, which issue it as the synchronous call and report its result, so the calls
//! a database had in flight at once are in flight at once in the replay too. The replay thread
//! goes on with its next calls, and waits for an asynchronous call's completion only where the
//! database had seen it complete (before its next call started), or for a free helper.
//!
//! The helpers work on the thread's own descriptors (shared through `Arc`) with buffers of
//! their own; a helper's stamps start from its own seed, so no two writes hold the same bytes.

use crate::buffers::{fill, AlignedBuf};
use crate::shared::Shared;
use bakeoff_core::trace::{OpCode, Record};
use std::os::fd::OwnedFd;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Most helpers one replay thread starts: the calls it keeps in flight at once.
pub const MAX_HELPERS: usize = 8;

/// Whether a call goes to the pool: an asynchronous read, write or flush.
pub fn pooled(r: &Record) -> bool {
    r.is_async
        && matches!(
            r.op,
            Some(OpCode::Read | OpCode::Write | OpCode::Fsync | OpCode::Fdatasync)
        )
}

/// A call handed to a helper.
struct Job {
    seq: u32,
    op: OpCode,
    fd: Arc<OwnedFd>,
    offset: u64,
    len: u64,
}

/// A helper's report: which call, its result, when it ended.
#[derive(Clone, Copy, Debug)]
pub struct Done {
    /// The call's index in its thread.
    pub seq: u32,
    /// Its result (bytes, 0, or `-errno`).
    pub result: i64,
    /// When it ended (the run's clock).
    pub done_ns: u64,
    helper: usize,
}

/// A call in flight: its index, its captured completion, when it was scheduled and submitted.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    /// The call's index in its thread.
    pub seq: u32,
    /// When the capture saw it complete.
    pub captured_end_ns: u64,
    /// Its scheduled start (timing=original) and its submission.
    pub sched_ns: u64,
    /// When the replay thread handed it over.
    pub submit_ns: u64,
}

/// One replay thread's helpers.
pub struct Pool {
    jobs: Vec<SyncSender<Job>>,
    idle: Vec<bool>,
    done: Receiver<Done>,
    helpers: Vec<JoinHandle<()>>,
    /// The calls in flight.
    pub in_flight: Vec<InFlight>,
}

impl Pool {
    /// `helpers` helpers with buffers of `buf_len` bytes, their data from `seed`.
    pub fn start(
        helpers: usize,
        buf_len: u64,
        seed: u64,
        shared: &Arc<Shared>,
    ) -> std::io::Result<Pool> {
        let (done_tx, done) = sync_channel(helpers);
        let mut pool = Pool {
            jobs: Vec::with_capacity(helpers),
            idle: vec![true; helpers],
            done,
            helpers: Vec::with_capacity(helpers),
            in_flight: Vec::with_capacity(helpers),
        };
        for h in 0..helpers {
            let (tx, rx) = sync_channel::<Job>(1);
            let (done_tx, shared) = (done_tx.clone(), shared.clone());
            let helper_seed = seed ^ ((h as u64 + 1) << 56);
            let handle = std::thread::Builder::new()
                .name(format!("replay-aio-{h}"))
                .stack_size(256 << 10)
                .spawn(move || helper(h, buf_len, helper_seed, &rx, &done_tx, &shared))?;
            pool.jobs.push(tx);
            pool.helpers.push(handle);
        }
        Ok(pool)
    }

    /// Hands call `seq` of `r` on `fd` to an idle helper; false if none is idle (reap first).
    pub fn submit(&mut self, seq: u32, r: &Record, fd: Arc<OwnedFd>, flight: InFlight) -> bool {
        let Some(h) = self.idle.iter().position(|i| *i) else {
            return false;
        };
        let job = Job {
            seq,
            op: r.op.unwrap_or(OpCode::Read),
            fd,
            offset: r.offset,
            len: r.len,
        };
        if self.jobs[h].send(job).is_err() {
            return false;
        }
        self.idle[h] = false;
        self.in_flight.push(flight);
        true
    }

    /// The next completion, waiting for it; `None` if nothing is in flight.
    pub fn reap(&mut self) -> Option<(InFlight, Done)> {
        if self.in_flight.is_empty() {
            return None;
        }
        let done = self.done.recv().ok()?;
        Some(self.finished(done))
    }

    /// The next completion within `ns`, if one comes.
    pub fn reap_within(&mut self, ns: u64) -> Option<(InFlight, Done)> {
        if self.in_flight.is_empty() {
            return None;
        }
        let done = self.done.recv_timeout(Duration::from_nanos(ns)).ok()?;
        Some(self.finished(done))
    }

    /// A completion already reported, if any.
    pub fn try_reap(&mut self) -> Option<(InFlight, Done)> {
        let done = self.done.try_recv().ok()?;
        Some(self.finished(done))
    }

    fn finished(&mut self, done: Done) -> (InFlight, Done) {
        self.idle[done.helper] = true;
        let at = (self.in_flight.iter())
            .position(|f| f.seq == done.seq)
            .expect("a completion of a call in flight");
        (self.in_flight.swap_remove(at), done)
    }

    /// The in-flight call the capture saw complete by `t_ns`, if any.
    pub fn due(&self, t_ns: u64) -> bool {
        self.in_flight.iter().any(|f| f.captured_end_ns <= t_ns)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs.clear();
        for h in self.helpers.drain(..) {
            let _ = h.join();
        }
    }
}

fn helper(
    index: usize,
    buf_len: u64,
    seed: u64,
    jobs: &Receiver<Job>,
    done: &SyncSender<Done>,
    shared: &Shared,
) {
    let mut buf = AlignedBuf::new(buf_len as usize);
    fill(buf.as_mut_slice(), &mut fastrand::Rng::with_seed(seed), 0);
    let mut stamp = seed;
    while let Ok(job) = jobs.recv() {
        let result = issue(&job, &mut buf, &mut stamp);
        let report = Done {
            seq: job.seq,
            result,
            done_ns: shared.now_ns(),
            helper: index,
        };
        drop(job);
        if done.send(report).is_err() {
            return;
        }
    }
}

fn issue(job: &Job, buf: &mut AlignedBuf, stamp: &mut u64) -> i64 {
    let fd = &*job.fd;
    let done = match job.op {
        OpCode::Read => super::io::read(fd, buf, job.offset, job.len),
        OpCode::Write => super::io::write(fd, buf, stamp, job.offset, job.len),
        OpCode::Fsync => rustix::fs::fsync(fd).map(|()| 0),
        _ => rustix::fs::fdatasync(fd).map(|()| 0),
    };
    done.unwrap_or_else(|e| -i64::from(e.raw_os_error()))
}
