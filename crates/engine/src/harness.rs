//! The run harness every kind of worker thread runs under (I/O workers, database terminals,
//! file-serving clients): threads set up, report ready at a barrier, and only then does the
//! schedule start; a ramp precedes the measured window; the sampler is ticked at the start,
//! at the window's start, every second and at the end; Ctrl-C or the first error ends the run;
//! the threads' counts and latency histograms are merged per role and per operation kind.

use crate::interval::{LiveCounts, LiveReader, TickLatency};
use crate::kinds::KINDS;
pub use crate::results::RoleDesc;
use crate::results::{summarize, RoleCounts};
use crate::shared::{RunError, Shared, StartBarrier};
use crate::stats::{Counters, ThreadStats, Totals};
pub use crate::warmup::{Costs, Timing};
use crate::warmup::{Decision, Warmup};
use bakeoff_core::plan::OpKind;
use bakeoff_core::record::{ClientResult, OpStats, RoleResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Why the sampler is being called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickKind {
    /// Workers are about to start.
    Start,
    /// The measured window starts (after the ramp).
    MeasureStart,
    /// A whole second passed.
    Second,
    /// The run ended (on time, interrupted or failed).
    End,
}

/// A sampler call: when, why, and the application's cumulative counters across all threads.
#[derive(Clone, Copy, Debug)]
pub struct Tick {
    /// Time since the start.
    pub elapsed: Duration,
    /// Why.
    pub kind: TickKind,
    /// Cumulative operations and bytes per kind.
    pub totals: Totals,
    /// Latency percentiles per kind since the previous tick and in the window so far (none
    /// from client processes, or from work that is not operations of the engine).
    pub latency: TickLatency,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// Per-role results over the measured window.
    pub roles: Vec<RoleResult>,
    /// Per operation kind over all roles (histograms merged): the run's headline latencies.
    pub ops: Vec<OpStats>,
    /// Length of the measured window.
    pub measured: Duration,
    /// Stopped by an interrupt.
    pub interrupted: bool,
    /// The error that stopped it, if any; its figures are not results.
    pub error: Option<RunError>,
    /// What each role recorded, exactly (what `roles` and `ops` summarise): a client process
    /// hands these to the parent, which adds them.
    pub counts: Vec<RoleCounts>,
    /// With client processes: what each client did and the CPU it used.
    pub clients: Vec<ClientResult>,
    /// How the warm-up was decided and how long it took; the stop rule's outcome.
    pub steady: Option<bakeoff_core::steady::SteadyRecord>,
    /// A replay's counts beside its operations.
    pub replay: Option<bakeoff_core::record::replay::ReplayRecord>,
    /// `verify=`: the blocks checked and the mismatches found.
    pub verify: Option<bakeoff_core::record::verify::VerifyRecord>,
}

/// The thread's signal that its setup is done; dropping it says so too, so a thread that fails
/// its setup never holds the others at the barrier.
pub struct Ready<'a> {
    barrier: Option<&'a StartBarrier>,
}

impl Ready<'_> {
    /// Setup is done: waits until every thread is ready and the schedule starts.
    pub fn go(&mut self) {
        if let Some(barrier) = self.barrier.take() {
            barrier.ready_and_wait();
        }
    }
}

impl Drop for Ready<'_> {
    fn drop(&mut self) {
        self.go();
    }
}

/// The body of one thread: set up, call `ready.go()`, work until `shared.stopped()`, and return
/// the statistics it recorded (errors go to `shared.fail`).
pub type Body = Box<dyn FnOnce(&Arc<Shared>, ThreadStats, Ready) -> ThreadStats + Send>;

/// One thread to run.
pub struct ThreadSpec {
    /// Index of its role in the harness's roles.
    pub role: usize,
    /// Thread name (`reader-3`, `terminal-0`).
    pub name: String,
    /// The operation kinds it records.
    pub kinds: Vec<OpKind>,
    /// It keeps service time beside latency (open loop).
    pub open_loop: bool,
    /// What it does.
    pub body: Body,
}

struct Spawned {
    role: usize,
    counters: Arc<Counters>,
    handle: JoinHandle<ThreadStats>,
}

fn spawn(spec: ThreadSpec, shared: &Arc<Shared>) -> std::io::Result<Spawned> {
    let counters = Arc::new(Counters::for_kinds(&spec.kinds));
    let stats = ThreadStats::new(counters.clone(), &spec.kinds, spec.open_loop);
    let shared = shared.clone();
    let body = spec.body;
    let handle = std::thread::Builder::new()
        .name(spec.name)
        .stack_size(512 << 10)
        .spawn(move || {
            let ready = Ready {
                barrier: Some(&shared.start),
            };
            body(&shared, stats, ready)
        })?;
    Ok(Spawned {
        role: spec.role,
        counters,
        handle,
    })
}

fn totals(spawned: &[Spawned]) -> Totals {
    let mut t = Totals::default();
    for s in spawned {
        t.add(&s.counters.totals());
    }
    t
}

/// Every thread's running latency counts.
fn live(spawned: &[Spawned]) -> impl Iterator<Item = &[Option<LiveCounts>; KINDS]> {
    spawned.iter().map(|s| &s.counters.live)
}

/// The window's start, if it started.
type Window = Option<Duration>;

/// Runs `threads` under `shared` (whose couplings the threads use) and returns the merged
/// results. `specs` is an iterator so that setting up a thread (opening files) may fail: the
/// threads started so far are then stopped and joined before the error returns.
pub fn run(
    shared: &Arc<Shared>,
    timing: Timing<'_>,
    roles: &[RoleDesc],
    specs: &mut dyn Iterator<Item = Result<ThreadSpec, RunError>>,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<RunOutput, RunError> {
    let mut open = || Ok(());
    run_gated(shared, timing, roles, specs, interrupt, on_tick, &mut open)
}

/// [`run`], with `gate` called once every thread is set up and before the schedule starts (a
/// client process reports ready and waits for the parent's go); an error from it stops the
/// threads and returns.
pub fn run_gated(
    shared: &Arc<Shared>,
    mut timing: Timing<'_>,
    roles: &[RoleDesc],
    specs: &mut dyn Iterator<Item = Result<ThreadSpec, RunError>>,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
    gate: &mut dyn FnMut() -> Result<(), RunError>,
) -> Result<RunOutput, RunError> {
    let tick = |kind, totals, latency| Tick {
        elapsed: shared.clock.elapsed(),
        kind,
        totals,
        latency,
    };
    on_tick(&tick(
        TickKind::Start,
        Totals::default(),
        TickLatency::default(),
    ));
    let spawned = spawn_all(shared, roles, specs)?;
    // The schedule starts once every thread has set up: nothing before is measured.
    shared.start.wait_ready(spawned.len());
    if let Err(e) = gate() {
        shared.stop_now();
        shared.start.open();
        spawned.into_iter().for_each(|s| drop(s.handle.join()));
        return Err(e);
    }
    let go = shared.now_ns();
    // An automatic warm-up has no end known yet: the window opens when it is steady (or at
    // the cap), and the run ends `runtime` after.
    let ramp = timing.auto.map_or(timing.ramp, |a| a.max);
    let ramp_ns = go + ramp.as_nanos() as u64;
    let window_at = if timing.auto.is_some() {
        u64::MAX
    } else {
        ramp_ns
    };
    shared.ramp_ns.store(window_at, Ordering::Relaxed);
    let end = ramp_ns.saturating_add(timing.runtime.as_nanos() as u64);
    shared.end_ns.fetch_min(end, Ordering::Relaxed);
    let mut warmup = Warmup::new(&mut timing, Duration::from_nanos(go));
    // Without a ramp the window starts as the threads are let go: nothing done is missed.
    let mut reader = LiveReader::default();
    let window = (window_at == go).then(|| {
        let latency = reader.read(live(&spawned), true);
        let t = tick(TickKind::MeasureStart, Totals::default(), latency);
        on_tick(&t);
        t.elapsed
    });
    shared.start.open();
    let edges = (window, timing.runtime);
    let (window, interrupted) = drive(
        shared,
        (&spawned, &mut reader),
        interrupt,
        on_tick,
        edges,
        &mut warmup,
    );
    // A fixed warm-up cut short (Ctrl-C, an error) lasted until the end.
    let steady = warmup.finish(window.unwrap_or_else(|| shared.clock.elapsed()));
    let latency = reader.read(live(&spawned), false);
    let end_tick = tick(TickKind::End, totals(&spawned), latency);
    on_tick(&end_tick);
    let ended = Ended {
        measured: window_length(shared, window, end_tick.elapsed),
        interrupted,
        steady,
    };
    Ok(gather(shared, roles, spawned, ended))
}

/// The window's length: from its start to its end as the threads saw them (an operation is
/// in the window if it finished between the two), not as the harness woke to notice them.
fn window_length(shared: &Shared, window: Window, end_tick: Duration) -> Duration {
    if window.is_none() {
        return Duration::ZERO;
    }
    let start = shared.ramp_ns.load(Ordering::Relaxed);
    let end = shared.end_ns.load(Ordering::Relaxed);
    let end = end.min(end_tick.as_nanos() as u64);
    Duration::from_nanos(end.saturating_sub(start))
}

/// How a run's window ended: its length; and whether Ctrl-C ended it.
struct Ended {
    measured: Duration,
    interrupted: bool,
    steady: Option<bakeoff_core::steady::SteadyRecord>,
}

/// The output of a run that has `ended`: every thread joined, each role's counts over the
/// measured window, and the first error a thread met.
fn gather(shared: &Shared, roles: &[RoleDesc], spawned: Vec<Spawned>, ended: Ended) -> RunOutput {
    let Ended {
        measured,
        interrupted,
        steady,
    } = ended;
    let mut merged: Vec<Vec<ThreadStats>> = roles.iter().map(|_| Vec::new()).collect();
    for s in spawned {
        let stats = s
            .handle
            .join()
            .unwrap_or_else(|_| ThreadStats::new(Arc::new(Counters::default()), &[], false));
        merged[s.role].push(stats);
    }
    let counts: Vec<RoleCounts> = merged.iter().map(|t| RoleCounts::of_threads(t)).collect();
    let (results, ops) = summarize(roles, &counts, measured);
    let error = shared
        .error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    RunOutput {
        roles: results,
        ops,
        measured,
        interrupted,
        error,
        counts,
        clients: Vec::new(),
        steady,
        replay: None,
        verify: None,
    }
}

/// Starts every thread of `specs`; on the first that cannot start, stops and joins those
/// started and returns the error.
fn spawn_all(
    shared: &Arc<Shared>,
    roles: &[RoleDesc],
    specs: &mut dyn Iterator<Item = Result<ThreadSpec, RunError>>,
) -> Result<Vec<Spawned>, RunError> {
    let mut spawned = Vec::new();
    for spec in specs {
        let spawn_one = spec.and_then(|spec| {
            let (role, name) = (spec.role, spec.name.clone());
            spawn(spec, shared).map_err(|source| RunError::Setup {
                engine: "thread",
                role: format!("{} ({name})", roles.get(role).map_or("?", |r| &r.name)),
                source,
            })
        });
        match spawn_one {
            Ok(s) => spawned.push(s),
            Err(e) => {
                shared.stop_now();
                shared.start.open();
                spawned.into_iter().for_each(|s| drop(s.handle.join()));
                return Err(e);
            }
        }
    }
    Ok(spawned)
}

/// Ticks until the run ends (on time, on interrupt, or on the first error); `window` is the
/// window's start if it already started. Once a second `warmup` decides whether the window
/// starts (automatic warm-up) or ends (stop rule).
fn drive(
    shared: &Shared,
    (spawned, reader): (&[Spawned], &mut LiveReader),
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
    (mut window, runtime): (Window, Duration),
    warmup: &mut Warmup,
) -> (Window, bool) {
    let mut tick = |kind| Tick {
        elapsed: shared.clock.elapsed(),
        kind,
        totals: totals(spawned),
        latency: reader.read(live(spawned), kind == TickKind::MeasureStart),
    };
    let mut interrupted = false;
    let mut next_second = Duration::from_secs(1);
    loop {
        if interrupt.load(Ordering::Relaxed) && !interrupted {
            interrupted = true;
            shared.stop_now();
        }
        let now = shared.now_ns();
        let end = shared.end_ns.load(Ordering::Relaxed);
        let ramp_ns = shared.ramp_ns.load(Ordering::Relaxed);
        if window.is_none() && now >= ramp_ns && now < end {
            let t = tick(TickKind::MeasureStart);
            window = Some(t.elapsed);
            shared.measuring.store(true, Ordering::Release);
            on_tick(&t);
        }
        if now >= end {
            return (window, interrupted);
        }
        if shared.clock.elapsed() >= next_second {
            let t = tick(TickKind::Second);
            on_tick(&t);
            next_second += Duration::from_secs(1);
            match warmup.second(t.elapsed, &t.totals, window.is_some()) {
                Decision::Measure => {
                    let at = shared.now_ns();
                    shared.ramp_ns.store(at, Ordering::Relaxed);
                    let end = at.saturating_add(runtime.as_nanos() as u64);
                    shared.end_ns.fetch_min(end, Ordering::Relaxed);
                    continue;
                }
                Decision::Stop => shared.stop_now(),
                Decision::Wait => {}
            }
        }
        // Wake at the window's start rather than up to 10 ms after it.
        let to_window = match window {
            None => ramp_ns.saturating_sub(shared.now_ns()),
            Some(_) => u64::MAX,
        };
        std::thread::sleep(Duration::from_nanos(to_window.clamp(1, 10_000_000)));
    }
}
