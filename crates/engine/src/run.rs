//! Runs a plan on a laid-out dataset: opens files, starts one thread per worker, ticks once a
//! second for the sampler, ends on time, on Ctrl-C or on the first error, and merges results.

use crate::coupling::{DirtyQueue, LogQueue, Semaphore};
use crate::engines::{with_engine, Engine, WithEngine};
use crate::layout::{Dataset, Region};
use crate::results::{merge_kinds, role_result};
use crate::shared::StartBarrier;
use crate::shared::{RoleFiles, RunError, Shared, WorkerSpec};
use crate::stats::{Counters, ThreadStats, Totals};
use crate::worker::Worker;
use bakeoff_core::plan::{IoMix, OpKind, Plan, RolePlan, Step, SyncMode};
use bakeoff_core::record::{OpStats, RoleResult};
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Why the sampler is being called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickKind {
    /// Workers are about to start.
    Start,
    /// The measured window starts (after `ramp_time`).
    MeasureStart,
    /// A whole second passed.
    Second,
    /// The run ended (on time, interrupted or failed).
    End,
}

/// A sampler call: when, why, and the application's cumulative counters across all workers.
#[derive(Clone, Copy, Debug)]
pub struct Tick {
    /// Time since the start.
    pub elapsed: Duration,
    /// Why.
    pub kind: TickKind,
    /// Cumulative operations and bytes per kind.
    pub totals: Totals,
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
}

/// Opens the files a role uses, with its O_DIRECT / O_DSYNC / O_SYNC flags.
pub fn open_role_files(role: &RolePlan, regions: &[Region]) -> Result<RoleFiles, RunError> {
    let writes = role.log_writer
        || role.db_writer
        || role.steps.iter().any(|s| match s {
            Step::Io(io) => io.mix != IoMix::Read,
            Step::Dirty { .. } => true,
            _ => false,
        });
    let mut flags = 0;
    if role.direct {
        flags |= libc::O_DIRECT;
    }
    flags |= match role.sync_mode {
        SyncMode::None => 0,
        SyncMode::Dsync => libc::O_DSYNC,
        SyncMode::Sync => libc::O_SYNC,
    };
    let mut files = Vec::with_capacity(regions.len());
    for r in regions {
        let f = OpenOptions::new()
            .read(true)
            .write(writes)
            .custom_flags(flags)
            .open(&r.path)
            .map_err(|source| {
                let hint = if role.direct && source.raw_os_error() == Some(libc::EINVAL) {
                    " (this file system does not support O_DIRECT: use direct=false)"
                } else {
                    ""
                };
                RunError::Setup {
                    engine: "open",
                    role: format!("{}: opening {}{hint}", role.name, r.path.display()),
                    source,
                }
            })?;
        files.push(f);
    }
    Ok(RoleFiles {
        files: Arc::new(files),
        regions: regions.to_vec(),
    })
}

/// The operation kinds a role can produce.
fn role_kinds(role: &RolePlan) -> Vec<OpKind> {
    let write = if role.log {
        OpKind::LogWrite
    } else {
        OpKind::Write
    };
    let mut kinds = Vec::new();
    for s in &role.steps {
        match s {
            Step::Io(io) => match io.mix {
                IoMix::Read => kinds.push(OpKind::Read),
                IoMix::Write => kinds.push(write),
                IoMix::Update | IoMix::Mixed { .. } => kinds.extend([OpKind::Read, write]),
            },
            Step::Sync(_) => kinds.push(OpKind::Sync),
            Step::Commit { .. } => kinds.push(OpKind::Commit),
            // With no db writer threads the session writes its dirty block itself.
            Step::Dirty { .. } => kinds.push(write),
            _ => {}
        }
    }
    if role.log_writer {
        kinds.extend([OpKind::LogWrite, OpKind::Sync]);
    }
    if role.db_writer {
        kinds.push(OpKind::Write);
    }
    if role.sync_every.is_some() {
        kinds.push(OpKind::Sync);
    }
    kinds.sort();
    kinds.dedup();
    kinds
}

struct Spawned {
    role: usize,
    counters: Arc<Counters>,
    handle: JoinHandle<ThreadStats>,
}

/// The largest block the roles that dirty blocks for role `ri` read (its write buffers' size).
fn dirtied_block_size(plan: &Plan, ri: usize) -> Option<u64> {
    let dirties = |r: &&RolePlan| {
        r.steps
            .iter()
            .any(|s| matches!(s, Step::Dirty { dbwriter, .. } if *dbwriter == ri))
    };
    let sizes = plan.roles.iter().filter(dirties).flat_map(|r| &r.steps);
    sizes
        .filter_map(|s| match s {
            Step::Io(io) => Some(io.bs),
            _ => None,
        })
        .max()
}

/// The seed of one worker's offsets and write buffers: different per role, thread and
/// repetition; the same for every stack of a study within one repetition.
pub fn worker_seed(plan: &Plan, role: usize, thread: usize) -> u64 {
    plan.seed
        ^ ((role as u64 + 1) << 32)
        ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from(plan.repetition.saturating_sub(1)).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// Starting a worker thread, on whichever engine its role uses.
struct SpawnWorker(WorkerSpec);

impl WithEngine for SpawnWorker {
    type Output = std::io::Result<JoinHandle<ThreadStats>>;

    fn run<E: Engine + 'static>(self) -> Self::Output {
        spawn_worker::<E>(self.0)
    }
}

fn spawn_worker<E: Engine + 'static>(spec: WorkerSpec) -> std::io::Result<JoinHandle<ThreadStats>> {
    let shared = spec.shared.clone();
    std::thread::Builder::new()
        .name(format!("{}-{}", spec.role.name, spec.thread))
        .stack_size(512 << 10)
        .spawn(move || {
            let worker = Worker::<E>::new(spec);
            // Ready even when setup failed, so the others are not held forever.
            shared.start.ready_and_wait();
            match worker {
                Ok(w) => w.run(),
                Err(e) => {
                    shared.fail(e);
                    ThreadStats::new(Arc::new(Counters::default()), &[], false)
                }
            }
        })
}

fn start_workers(
    plan: &Plan,
    dataset: &Dataset,
    shared: &Arc<Shared>,
    spawned: &mut Vec<Spawned>,
) -> Result<(), RunError> {
    for (ri, role) in plan.roles.iter().enumerate() {
        if role.threads == 0 {
            continue;
        }
        let files = Arc::new(open_role_files(role, &dataset.filesets[role.fileset])?);
        let role = Arc::new(role.clone());
        let kinds = role_kinds(&role);
        for t in 0..role.threads as usize {
            let counters = Arc::new(Counters::default());
            let stats = ThreadStats::new(counters.clone(), &kinds, role.rate_iops.is_some());
            let seed = worker_seed(plan, ri, t);
            let spec = WorkerSpec {
                role: role.clone(),
                role_idx: ri,
                thread: t,
                files: files.clone(),
                shared: shared.clone(),
                stats,
                seed,
                compress_pct: plan.compress_pct,
                buf_len: dirtied_block_size(plan, ri),
            };
            let engine = role.engine.unwrap_or(plan.engine);
            let handle =
                with_engine(engine, SpawnWorker(spec)).map_err(|source| RunError::Setup {
                    engine: engine.name(),
                    role: role.name.clone(),
                    source,
                })?;
            spawned.push(Spawned {
                role: ri,
                counters,
                handle,
            });
        }
    }
    Ok(())
}

fn totals(spawned: &[Spawned], role: Option<usize>) -> Totals {
    let mut t = Totals::default();
    for s in spawned.iter().filter(|s| role.is_none_or(|r| r == s.role)) {
        t.add(&s.counters.totals());
    }
    t
}

fn shared_state(plan: &Plan) -> Arc<Shared> {
    Arc::new(Shared {
        clock: crate::clock::RunClock::start(),
        ramp_ns: AtomicU64::new(u64::MAX),
        end_ns: AtomicU64::new(u64::MAX),
        semaphores: plan
            .roles
            .iter()
            .map(|r| match r.gate {
                Some(g) => (0..r.threads)
                    .map(|_| Arc::new(Semaphore::new(g)))
                    .collect(),
                None => Vec::new(),
            })
            .collect(),
        logs: plan
            .roles
            .iter()
            .map(|r| r.log_writer.then(|| Arc::new(LogQueue::default())))
            .collect(),
        dirty: plan
            .roles
            .iter()
            // No queue for a db writer without threads: sessions write their blocks themselves.
            .map(|r| {
                (r.db_writer && r.threads > 0).then(|| Arc::new(DirtyQueue::new(r.dirty_limit)))
            })
            .collect(),
        error: Mutex::new(None),
        start: StartBarrier::default(),
    })
}

/// Runs `plan` on `dataset`. `interrupt` is polled every 10 ms; `on_tick` is called at the start,
/// at the start of the measured window, every second and at the end.
pub fn execute(
    plan: &Plan,
    dataset: &Dataset,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<RunOutput, RunError> {
    let shared = shared_state(plan);
    let tick = |kind, totals| Tick {
        elapsed: shared.clock.elapsed(),
        kind,
        totals,
    };
    on_tick(&tick(TickKind::Start, Totals::default()));
    let mut spawned = Vec::new();
    if let Err(e) = start_workers(plan, dataset, &shared, &mut spawned) {
        shared.stop_now();
        shared.start.open();
        spawned.into_iter().for_each(|s| drop(s.handle.join()));
        return Err(e);
    }
    // The schedule starts once every worker has set up its engine: nothing before is measured.
    shared.start.wait_ready(spawned.len());
    let ramp_ns = shared.now_ns() + plan.ramp_time.as_nanos() as u64;
    shared.ramp_ns.store(ramp_ns, Ordering::Relaxed);
    shared
        .end_ns
        .fetch_min(ramp_ns + plan.runtime.as_nanos() as u64, Ordering::Relaxed);
    shared.start.open();
    let (window, interrupted) = drive(plan, &shared, &spawned, interrupt, on_tick, ramp_ns);
    let end_tick = tick(TickKind::End, totals(&spawned, None));
    let end_roles = per_role(plan, &spawned);
    on_tick(&end_tick);
    let mut merged: Vec<Vec<ThreadStats>> = (0..plan.roles.len()).map(|_| Vec::new()).collect();
    for s in spawned {
        let stats = s
            .handle
            .join()
            .unwrap_or_else(|_| ThreadStats::new(Arc::new(Counters::default()), &[], false));
        merged[s.role].push(stats);
    }
    let measured = window
        .as_ref()
        .map_or(Duration::ZERO, |(t, _)| end_tick.elapsed.saturating_sub(*t));
    let deltas: Vec<Totals> = (0..plan.roles.len())
        .map(|ri| {
            window.as_ref().map_or(Totals::default(), |(_, start)| {
                end_roles[ri].since(&start[ri])
            })
        })
        .collect();
    let roles = plan
        .roles
        .iter()
        .enumerate()
        .map(|(ri, role)| role_result(role, &merged[ri], &deltas[ri], measured))
        .collect();
    let all: Vec<&ThreadStats> = merged.iter().flatten().collect();
    let mut delta = Totals::default();
    deltas.iter().for_each(|d| delta.add(d));
    let error = shared
        .error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    Ok(RunOutput {
        roles,
        ops: merge_kinds(&all, &delta, measured),
        measured,
        interrupted,
        error,
    })
}

fn per_role(plan: &Plan, spawned: &[Spawned]) -> Vec<Totals> {
    (0..plan.roles.len())
        .map(|r| totals(spawned, Some(r)))
        .collect()
}

/// The window's start (time and per-role totals), if it started.
type Window = Option<(Duration, Vec<Totals>)>;

/// Ticks until the run ends (on time, on interrupt, or on the first error).
fn drive(
    plan: &Plan,
    shared: &Shared,
    spawned: &[Spawned],
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
    ramp_ns: u64,
) -> (Window, bool) {
    let tick = |kind, totals| Tick {
        elapsed: shared.clock.elapsed(),
        kind,
        totals,
    };
    let mut window: Window = None;
    let mut interrupted = false;
    let mut next_second = Duration::from_secs(1);
    loop {
        if interrupt.load(Ordering::Relaxed) && !interrupted {
            interrupted = true;
            shared.stop_now();
        }
        let now = shared.now_ns();
        let end = shared.end_ns.load(Ordering::Relaxed);
        if window.is_none() && now >= ramp_ns && now < end {
            let t = tick(TickKind::MeasureStart, totals(spawned, None));
            window = Some((t.elapsed, per_role(plan, spawned)));
            on_tick(&t);
        }
        if now >= end {
            return (window, interrupted);
        }
        if shared.clock.elapsed() >= next_second {
            on_tick(&tick(TickKind::Second, totals(spawned, None)));
            next_second += Duration::from_secs(1);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
