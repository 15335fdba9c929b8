//! The ranks' exchanges, each bounded in time: gather to rank 0, broadcast from rank 0 and a
//! barrier, built on MPI's nonblocking sends and probes polled against a deadline, so a rank
//! that died or hangs is named instead of holding the others forever. Messages are JSON.

use crate::exit::{failure, Code, Failure};
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::StaticScope;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Tag;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Messages from a rank to rank 0.
const UP: Tag = 11;
/// Messages from rank 0 to a rank.
const DOWN: Tag = 12;
/// How long a rank still waits for the others once it was told to stop: mpirun's SIGTERM (when
/// a rank died, on Ctrl-C) is followed by SIGKILL a second later (`odls_base_sigkill_timeout`),
/// and the rank must have removed its files and said why by then.
const STOPPING: Duration = Duration::from_millis(100);

/// This rank's link to the others.
pub struct Wire<'a> {
    world: SimpleCommunicator,
    /// This rank.
    pub rank: usize,
    /// Ranks in the job.
    pub size: usize,
    /// Each rank's host (once [`Wire::meet`] has run).
    pub hosts: Vec<String>,
    /// Each rank's kernel, its boot id (once [`Wire::meet`] has run): hosts that are containers
    /// or network namespaces of one machine share it.
    pub kernels: Vec<Option<String>>,
    /// The longest wait at a step beyond its planned length.
    pub timeout: Duration,
    interrupt: &'a AtomicBool,
}

impl<'a> Wire<'a> {
    /// The link of this rank in `world`.
    pub fn new(world: SimpleCommunicator, timeout: Duration, interrupt: &'a AtomicBool) -> Self {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        Wire {
            world,
            rank,
            size,
            hosts: vec![host; size],
            kernels: vec![boot_id(); size],
            timeout,
            interrupt,
        }
    }

    /// `rank 3 on node7`.
    pub fn name(&self, rank: usize) -> String {
        format!("rank {rank} on {}", self.hosts[rank])
    }

    /// Learns every rank's host and kernel: gathered by rank 0, sent back to all.
    pub fn meet(&mut self) -> Result<(), Failure> {
        let own = (
            self.hosts[self.rank].clone(),
            self.kernels[self.rank].clone(),
        );
        let all = self.gather(&own, "start", Duration::ZERO)?;
        let all: Vec<(String, Option<String>)> =
            self.broadcast(all.as_ref(), "start", self.after_gather(Duration::ZERO))?;
        (self.hosts, self.kernels) = all.into_iter().unzip();
        Ok(())
    }

    /// Every rank's `value` at rank 0 (in rank order); `None` on the others. `planned` is how
    /// long the step before it may take.
    pub fn gather<T: Serialize + DeserializeOwned>(
        &self,
        value: &T,
        step: &str,
        planned: Duration,
    ) -> Result<Option<Vec<T>>, Failure> {
        let bytes = serde_json::to_vec(value).expect("a message serialises");
        let deadline = Deadline::new(self, planned);
        if self.rank != 0 {
            self.send(0, bytes, UP, step, &deadline)?;
            return Ok(None);
        }
        let mut got: Vec<Option<Vec<u8>>> = vec![None; self.size];
        got[0] = Some(bytes);
        loop {
            for (r, slot) in got.iter_mut().enumerate().filter(|(_, s)| s.is_none()) {
                let from = self.world.process_at_rank(r as i32);
                if let Some(probed) = from.immediate_matched_probe_with_tag(UP) {
                    *slot = Some(probed.matched_receive_vec::<u8>().0);
                }
            }
            let missing: Vec<usize> = (0..self.size).filter(|&r| got[r].is_none()).collect();
            if missing.is_empty() {
                break;
            }
            deadline.check(self, &missing, step)?;
        }
        got.into_iter()
            .enumerate()
            .map(|(r, b)| self.decode(r, &b.unwrap_or_default(), step))
            .collect::<Result<Vec<T>, Failure>>()
            .map(Some)
    }

    /// Rank 0's `value` on every rank (rank 0 passes `Some`).
    pub fn broadcast<T: Serialize + DeserializeOwned>(
        &self,
        value: Option<&T>,
        step: &str,
        planned: Duration,
    ) -> Result<T, Failure> {
        let deadline = Deadline::new(self, planned);
        if self.rank == 0 {
            let value = value.expect("rank 0 broadcasts a value");
            let bytes = serde_json::to_vec(value).expect("a message serialises");
            for r in 1..self.size {
                self.send(r, bytes.clone(), DOWN, step, &deadline)?;
            }
            return self.decode(0, &bytes, step);
        }
        let from = self.world.process_at_rank(0);
        loop {
            if let Some(probed) = from.immediate_matched_probe_with_tag(DOWN) {
                return self.decode(0, &probed.matched_receive_vec::<u8>().0, step);
            }
            deadline.check(self, &[0], step)?;
        }
    }

    /// Every rank arrives before any goes on.
    pub fn barrier(&self, step: &str, planned: Duration) -> Result<(), Failure> {
        self.gather(&(), step, planned)?;
        self.broadcast(Some(&()), step, self.after_gather(planned))
    }

    /// How long a rank waits for rank 0's answer to a gather planned to take `planned`: longer
    /// than rank 0 waits for the gather, so that rank 0, which knows who is missing, says it.
    pub fn after_gather(&self, planned: Duration) -> Duration {
        planned + self.timeout
    }

    /// Sends `bytes` to rank `to`, waiting until it is taken (or the deadline).
    fn send(
        &self,
        to: usize,
        bytes: Vec<u8>,
        tag: Tag,
        step: &str,
        deadline: &Deadline,
    ) -> Result<(), Failure> {
        // The buffer must outlive a send abandoned at the deadline (MPI may still read it):
        // it is leaked, a few kilobytes per step.
        let buffer: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let dest = self.world.process_at_rank(to as i32);
        let mut request = dest.immediate_send_with_tag(StaticScope, buffer, tag);
        loop {
            match request.test() {
                Ok(_) => return Ok(()),
                Err(pending) => request = pending,
            }
            if let Err(f) = deadline.check(self, &[to], step) {
                // The process ends after this error: the request is abandoned, not completed.
                std::mem::forget(request);
                return Err(f);
            }
        }
    }

    fn decode<T: DeserializeOwned>(
        &self,
        from: usize,
        bytes: &[u8],
        step: &str,
    ) -> Result<T, Failure> {
        serde_json::from_slice(bytes).map_err(|e| {
            let who = self.name(from);
            failure(
                Code::Environment,
                format!("{}: unreadable message from {who} at {step} ({e}): do all ranks run the same bakeoff?", self.name(self.rank)),
            )
        })
    }
}

/// This machine's running kernel: a random id drawn at each boot, the same in every container
/// and network namespace on it; `None` where it cannot be read (not Linux).
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|id| !id.is_empty())
}

/// When a wait gives up.
struct Deadline {
    at: Instant,
    limit: Duration,
}

impl Deadline {
    fn new(wire: &Wire, planned: Duration) -> Deadline {
        let limit = planned + wire.timeout;
        Deadline {
            at: Instant::now() + limit,
            limit,
        }
    }

    /// Sleeps a moment; an error naming `missing` once the deadline passed, or soon after this
    /// rank was told to stop.
    fn check(&self, wire: &Wire, missing: &[usize], step: &str) -> Result<(), Failure> {
        std::thread::sleep(Duration::from_millis(1));
        let now = Instant::now();
        let stopping = wire.interrupt.load(Ordering::Relaxed);
        if now < self.at && !stopping {
            return Ok(());
        }
        // Rank 0 gives up first: the others wait for its word (the end of an interrupted run).
        let grace = if wire.rank == 0 {
            STOPPING
        } else {
            4 * STOPPING
        };
        if stopping && now < self.at.min(stopped_at(now) + grace) {
            return Ok(());
        }
        let names: Vec<String> = missing.iter().map(|&r| wire.name(r)).collect();
        let me = wire.name(wire.rank);
        let (code, why) = if stopping {
            (
                Code::Interrupted,
                "stopped by a signal (mpirun stops every rank when one dies; its message names it)"
                    .to_string(),
            )
        } else {
            (
                Code::Environment,
                format!("not there within {} s", self.limit.as_secs()),
            )
        };
        Err(failure(
            code,
            format!("{me}: waiting at {step} for {}: {why}", names.join(", ")),
        ))
    }
}

/// The moment this process first saw its stop signal.
fn stopped_at(now: Instant) -> Instant {
    static FIRST: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *FIRST.get_or_init(|| now)
}
