//! State shared by the workers of one run, and the errors that stop a run.

use crate::coupling::{DirtyQueue, LogQueue, Semaphore};
use crate::layout::Region;
use crate::stats::ThreadStats;
use bakeoff_core::plan::RolePlan;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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
    /// A file operation failed.
    #[error("{op} of {path} failed: {source}")]
    File {
        /// The operation (`create`, `rename to /x/f7`, ...).
        op: String,
        path: String,
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
    /// A database statement failed (not a retryable conflict).
    #[error("{what}: {message}")]
    Database {
        /// What was being done (`TPC-C New-Order on terminal 3`).
        what: String,
        /// The database's message.
        message: String,
    },
    /// A phase of a recipe or `bakeoff exec` failed: a command exited non-zero, was killed or
    /// ran out of time, or an action failed.
    #[error("phase {phase}: {message}")]
    Phase {
        /// The phase's name.
        phase: String,
        /// What happened, with the command's last lines of standard error.
        message: String,
    },
    /// A client process failed, died or could not start.
    #[error("client {index} (pid {pid}): {message}")]
    Client {
        /// Its number.
        index: u32,
        /// Its process id (0 if it never started).
        pid: u32,
        /// What happened.
        message: String,
    },
    /// A verified block was wrong (`verify=`): where, what was expected, what was found.
    #[error("verify: {0}")]
    Verify(Box<crate::verify::Mismatch>),
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
    /// The run's clock; all times are nanoseconds since its start.
    pub clock: crate::clock::RunClock,
    /// Start of the measured window; set once every worker is started.
    pub ramp_ns: AtomicU64,
    /// The harness has taken the window's starting counts (a worker that opens the window
    /// itself waits for this, so that none of its calls is counted as warm-up).
    pub measuring: AtomicBool,
    /// End of the run; lowered to "now" to stop early.
    pub end_ns: AtomicU64,
    /// Semaphores per role, one per thread (filebench semblock/sempost).
    pub semaphores: Vec<Vec<Arc<Semaphore>>>,
    /// Group-commit queue per log-writer role.
    pub logs: Vec<Option<Arc<LogQueue>>>,
    /// Dirty-block queue per db-writer role.
    pub dirty: Vec<Option<Arc<DirtyQueue>>>,
    /// The first error.
    pub error: Mutex<Option<RunError>>,
    /// Holds every worker until all of them finished their setup.
    pub start: StartBarrier,
}

/// The start barrier: workers set up their engines (rings, registered buffers, filled data
/// buffers), report ready and wait; the measured schedule starts only once all are ready, so
/// setup time is never inside the window.
#[derive(Default)]
pub struct StartBarrier {
    state: Mutex<(usize, bool)>,
    changed: Condvar,
}

impl StartBarrier {
    /// A worker is ready: waits until the run opens the barrier.
    pub fn ready_and_wait(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        self.changed.notify_all();
        while !s.1 {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits until `workers` workers are ready.
    pub fn wait_ready(&self, workers: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 < workers {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Lets every worker go.
    pub fn open(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.1 = true;
        self.changed.notify_all();
    }
}

impl Shared {
    /// State for a run whose threads share no semaphores, log or dirty-block queues (database
    /// terminals): the clock starts now; the window and the end are set by the harness.
    pub fn new() -> Shared {
        Shared {
            clock: crate::clock::RunClock::start(),
            ramp_ns: AtomicU64::new(u64::MAX),
            measuring: AtomicBool::new(false),
            end_ns: AtomicU64::new(u64::MAX),
            semaphores: Vec::new(),
            logs: Vec::new(),
            dirty: Vec::new(),
            error: Mutex::new(None),
            start: StartBarrier::default(),
        }
    }

    /// Nanoseconds since the start.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    /// True once the run should end.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.now_ns() >= self.end_ns.load(Ordering::Relaxed)
    }

    /// Sleeps until the run's clock reads `t_ns` (an arrival's scheduled start), in slices of at
    /// most 20 ms so that a stopped run is noticed; returns early when the run stops. It does not
    /// spin: on a machine with fewer CPUs than paced threads, a spinning thread takes the CPU the
    /// I/O completions and the other threads need (16 threads at 20,000 ops/s on 2 CPUs: started
    /// p99 10.5 ms late when spinning the last 100 µs, 73 µs late sleeping), and a wake-up a few
    /// µs late is counted in the latency anyway.
    pub fn sleep_until(&self, t_ns: u64) {
        loop {
            let now = self.now_ns();
            if now >= t_ns || self.stopped() {
                return;
            }
            let left = (t_ns - now).min(20_000_000);
            std::thread::sleep(std::time::Duration::from_nanos(left));
        }
    }

    /// True if an operation finishing at `t_ns` falls in the measured window.
    #[inline]
    pub fn in_window(&self, t_ns: u64) -> bool {
        t_ns >= self.ramp_ns.load(Ordering::Relaxed) && t_ns <= self.end_ns.load(Ordering::Relaxed)
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

impl Default for Shared {
    fn default() -> Shared {
        Shared::new()
    }
}

/// A role's open files and their regions.
pub struct RoleFiles {
    /// Open files, indexed like `regions`.
    pub files: Arc<Vec<File>>,
    /// Region of each file.
    pub regions: Vec<Region>,
}

/// Everything one worker thread is started with.
pub struct WorkerSpec {
    /// Its role.
    pub role: Arc<RolePlan>,
    /// Index of the role in the plan.
    pub role_idx: usize,
    /// Index of the thread within the role.
    pub thread: usize,
    /// The role's open files.
    pub files: Arc<RoleFiles>,
    /// Run-wide state.
    pub shared: Arc<Shared>,
    /// Its statistics.
    pub stats: ThreadStats,
    /// Seed of its offsets and write buffers.
    pub seed: u64,
    /// Share of each write buffer that is zeros.
    pub compress_pct: u8,
    /// Buffer size when the role's own steps do not say (a db writer writes the blocks other
    /// roles read).
    pub buf_len: Option<u64>,
    /// The role's arrivals under `rate_iops`, one schedule for all its threads.
    pub schedule: Option<Arc<crate::worker::schedule::Schedule>>,
    /// `verify=`: the blocks of the role's fileset, if verified.
    pub verify: Option<Arc<crate::verify::FilesetVerify>>,
}
