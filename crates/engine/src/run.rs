//! Runs a plan on a laid-out dataset: opens files, starts one thread per worker, ticks once a
//! second for the sampler, ends on time, on Ctrl-C or on the first error, and merges results.

use crate::coupling::{DirtyQueue, LogQueue, Semaphore};
use crate::engines::{with_engine, Engine, WithEngine};
use crate::fdtable::PrivateTable;
use crate::harness::{self, Body, ThreadSpec, Timing};
use crate::layout::{plan_trees, Dataset, Region};
use crate::results::role_descs;
use crate::shared::{RoleFiles, RunError, Shared, WorkerSpec};
use crate::stats::{Counters, ThreadStats};
use crate::verify::{FilesetVerify, Verifier};
use crate::worker::schedule::Schedule;
use crate::worker::{FileTree, FileWorker, FileWorkerSpec, Worker};
use bakeoff_core::plan::{IoMix, OpKind, Plan, RolePlan, Step, SyncMode};
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use crate::harness::{RunOutput, Tick, TickKind};

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
            Step::File(f) => kinds.push(f.op.kind()),
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

/// The body of a worker thread, on whichever engine its role uses.
struct WorkerBody(WorkerSpec);

impl WithEngine for WorkerBody {
    type Output = Body;

    fn run<E: Engine + 'static>(self) -> Body {
        worker_body::<E>(self.0)
    }
}

/// The body of a worker thread on engine `E`. A synchronous engine's thread works in its own
/// descriptor table (see [`crate::fdtable`]): its role's files stay open in [`RolesFiles`]
/// until the thread is joined, the worker opens no file, and it is dropped before the table.
fn worker_body<E: Engine + 'static>(spec: WorkerSpec) -> Body {
    Box::new(move |shared, stats, mut ready| {
        let table = if E::SYNCHRONOUS {
            PrivateTable::enter()
        } else {
            None
        };
        let worker = Worker::<E>::new(WorkerSpec { stats, ..spec });
        ready.go();
        let stats = match worker {
            Ok(w) => w.run(),
            Err(e) => {
                shared.fail(e);
                ThreadStats::new(Arc::new(Counters::default()), &[], false)
            }
        };
        drop(table);
        stats
    })
}

/// Every role's open files, kept by the thread that runs the workers until they are joined:
/// the last reference to a file is then dropped, and the file closed, in the process's own
/// descriptor table, not in a worker's private one.
type RolesFiles = Vec<Arc<RoleFiles>>;

/// The worker threads of `plan`, role by role, every role's files opened first.
fn worker_specs(
    plan: &Plan,
    dataset: &Dataset,
    shared: &Arc<Shared>,
    verifier: Option<&Verifier>,
) -> Result<(Vec<ThreadSpec>, RolesFiles), RunError> {
    let trees = file_trees(plan, dataset);
    let mut kept = RolesFiles::new();
    // How many threads use each tree, and how many were given their share so far.
    let users: Vec<u32> = (0..plan.filesets.len())
        .map(|i| file_roles(plan, i).map(|r| r.threads).sum())
        .collect();
    let mut dealt = vec![0u32; plan.filesets.len()];
    let mut specs = Vec::new();
    for (ri, role) in plan.roles.iter().enumerate() {
        if role.threads == 0 {
            continue;
        }
        if role.does_file_ops() {
            let mine: Vec<usize> = (0..plan.filesets.len())
                .filter(|&i| file_roles(plan, i).any(|r| std::ptr::eq(r, role)))
                .collect();
            let role = Arc::new(role.clone());
            let schedule = role_schedule(&role);
            for t in 0..role.threads as usize {
                let share = mine.iter().filter_map(|&i| {
                    let k = dealt[i];
                    dealt[i] += 1;
                    Some((i, trees[i].clone()?, k, users[i]))
                });
                let spec = FileWorkerSpec {
                    role: role.clone(),
                    shared: shared.clone(),
                    stats: ThreadStats::new(Arc::new(Counters::default()), &[], false),
                    seed: worker_seed(plan, ri, t),
                    compress_pct: plan.compress_pct,
                    trees: share.collect(),
                    schedule: schedule.clone(),
                };
                specs.push(ThreadSpec {
                    role: ri,
                    name: format!("{}-{t}", role.name),
                    open_loop: role.rate_iops.is_some(),
                    kinds: role_kinds(&role),
                    body: file_body(spec),
                });
            }
            continue;
        }
        let files = Arc::new(open_role_files(role, &dataset.filesets[role.fileset])?);
        kept.push(files.clone());
        let role = Arc::new(role.clone());
        let schedule = role_schedule(&role);
        // A log writer's redo is not written in blocks: the planner leaves its fileset
        // unverified.
        let verify = verifier
            .filter(|_| !role.log_writer)
            .and_then(|v| v.fileset(role.fileset));
        for t in 0..role.threads as usize {
            let spec = worker_spec(
                plan,
                shared,
                &role,
                (ri, t),
                files.clone(),
                (schedule.clone(), verify.clone()),
            );
            specs.push(spec);
        }
    }
    Ok((specs, kept))
}

/// The one schedule of a paced role's arrivals, shared by all its threads (see
/// [`crate::worker::schedule`]).
fn role_schedule(role: &RolePlan) -> Option<Arc<Schedule>> {
    role.rate_iops
        .map(|rate| Arc::new(Schedule::new(rate, role.threads)))
}

/// The roles with threads whose file steps use fileset `i`.
fn file_roles(plan: &Plan, i: usize) -> impl Iterator<Item = &RolePlan> {
    plan.roles.iter().filter(move |r| {
        r.threads > 0
            && r.steps
                .iter()
                .any(|s| matches!(s, Step::File(f) if f.fileset == i))
    })
}

/// The trees file steps use, with their paths, per fileset (`None` where no file step works).
fn file_trees(plan: &Plan, dataset: &Dataset) -> Vec<Option<Arc<FileTree>>> {
    plan_trees(plan)
        .into_iter()
        .enumerate()
        .map(|(i, tree)| {
            let tree = tree?;
            let mut users = file_roles(plan, i).peekable();
            users.peek()?;
            let partitioned = users.any(|r| {
                r.steps
                    .iter()
                    .any(|s| matches!(s, Step::File(f) if f.fileset == i && f.op.changes_names()))
            });
            let root = dataset.filesets[i].first()?.path.clone();
            Some(Arc::new(FileTree::new(root, tree, partitioned)))
        })
        .collect()
}

/// The body of a file-operation thread.
fn file_body(spec: FileWorkerSpec) -> Body {
    Box::new(move |_, stats, mut ready| {
        let worker = FileWorker::new(FileWorkerSpec { stats, ..spec });
        ready.go();
        worker.run()
    })
}

fn worker_spec(
    plan: &Plan,
    shared: &Arc<Shared>,
    role: &Arc<RolePlan>,
    (ri, t): (usize, usize),
    files: Arc<RoleFiles>,
    (schedule, verify): (Option<Arc<Schedule>>, Option<Arc<FilesetVerify>>),
) -> ThreadSpec {
    let kinds = role_kinds(role);
    let spec = WorkerSpec {
        role: role.clone(),
        role_idx: ri,
        thread: t,
        files,
        shared: shared.clone(),
        stats: ThreadStats::new(Arc::new(Counters::default()), &[], false),
        seed: worker_seed(plan, ri, t),
        compress_pct: plan.compress_pct,
        buf_len: dirtied_block_size(plan, ri),
        schedule,
        verify,
    };
    let body = with_engine(role.engine.unwrap_or(plan.engine), WorkerBody(spec));
    ThreadSpec {
        role: ri,
        name: format!("{}-{t}", role.name),
        open_loop: role.rate_iops.is_some(),
        kinds,
        body,
    }
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

fn shared_state(plan: &Plan) -> Arc<Shared> {
    Arc::new(Shared {
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
        ..Shared::new()
    })
}

/// [`execute`](crate::execute) in this process, with `gate` called once every thread is set
/// up and before the schedule starts (a client reports ready and waits for the parent's go).
pub fn execute_gated(
    plan: &Plan,
    dataset: &Dataset,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
    gate: &mut dyn FnMut() -> Result<(), RunError>,
) -> Result<RunOutput, RunError> {
    let shared = shared_state(plan);
    let timing = Timing {
        auto: plan.ramp_auto,
        stop: plan.stop,
        ..Timing::fixed(plan.ramp_time, plan.runtime)
    };
    let verifier = Verifier::new(plan, dataset);
    let (specs, files) = worker_specs(plan, dataset, &shared, verifier.as_ref())?;
    let mut specs = specs.into_iter().map(Ok);
    let roles = role_descs(plan, 1);
    let output = harness::run_gated(
        &shared, timing, &roles, &mut specs, interrupt, on_tick, gate,
    );
    // Every worker has been joined (on every path of `run_gated`): close the files here.
    drop(files);
    match verifier {
        Some(v) => {
            let output = output.map(|o| verified(o, &v, interrupt));
            if plan.journal.is_on() {
                plan.journal.put(v.journal());
            }
            output
        }
        None => output,
    }
}

/// The run's output with its `verify` section: after a run that ended on time, the final pass
/// reads every block back (outside the measured window); any mismatch, during the run or in
/// the pass, fails the run with the first one found.
fn verified(mut output: RunOutput, v: &Verifier, interrupt: &AtomicBool) -> RunOutput {
    let mut final_pass = None;
    if output.error.is_none() && !output.interrupted {
        match v.final_pass(interrupt) {
            Ok(pass) => {
                output.interrupted |= !pass.complete;
                final_pass = Some(pass);
            }
            Err(e) => output.error = Some(e),
        }
    }
    if output.error.is_none() {
        if let Some(m) = v.first_mismatch() {
            output.error = Some(RunError::Verify(Box::new(m)));
        }
    }
    output.verify = Some(v.record(final_pass));
    output
}
