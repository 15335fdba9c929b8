//! `bakeoff run tpcc|pgbench`: a real database on the stack bakeoff builds (or on a directory,
//! as a `dir=` stack, so its server is managed the same way): the server started, the data
//! loaded (timed and measured), a cold restart, the measured run under the probes, the
//! database's own counters over the window, the consistency checks, and everything stopped and
//! torn down on every path.

use super::measure::{Body, Window};
use super::on_stack::{known_of, loop_only, target_of, StackRun};
use crate::cli::StackOpts;
use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_core::dbplan::{DbPlan, DbWork};
use bakeoff_core::dbrecord::{Condition, DatabaseRun};
use bakeoff_core::plan::{EngineKind, Plan};
use bakeoff_core::record::{RunRecord, RunStatus, Summary};
use bakeoff_db::managed::{ManagedDb, OpenAt, SetupError};
use bakeoff_db::registry::{backend, BACKENDS};
use bakeoff_db::DbError;
use bakeoff_engine::Target;
use bakeoff_probe::Probe;
use bakeoff_stack::{Stack, StackSpec};
use std::sync::atomic::AtomicBool;

mod body;
pub mod capture;
pub mod crash;
mod external;
mod load;
mod tpch;
mod warmup;

/// The database of a run, opened on its stack.
pub type Opened = Box<dyn ManagedDb>;

/// The plan as the run record shows it: the workload, its timing, seed and settings (a
/// database run has no filesets or roles of its own).
pub fn record_plan(plan: &DbPlan) -> Plan {
    Plan {
        workload: plan.workload.clone(),
        engine: EngineKind::Psync,
        runtime: plan.runtime,
        ramp_time: plan.ramp_time,
        ramp_auto: plan.ramp_auto,
        stop: None,
        seed: plan.seed,
        repetition: 1,
        compress_pct: 0,
        filesets: Vec::new(),
        roles: Vec::new(),
        settings: plan.settings.clone(),
        clients: 0,
        replay: None,
        verify: None,
        journal: Default::default(),
    }
}

/// The exit code of a database's set-up error: a refused setting is the user's to fix (2).
pub fn setup_failure(e: SetupError) -> Failure {
    let code = match &e {
        SetupError::Setting(_) => Code::Usage,
        SetupError::Io(_) => Code::Io,
        SetupError::Environment(_) => Code::Environment,
    };
    failure(code, e)
}

/// Checks the database's own settings in `plan` (a server's against its own list, its memory
/// within `mem_limit`) before anything is built.
pub fn check_settings(plan: &DbPlan, mem_limit: Option<u64>) -> Result<(), Failure> {
    (backend(plan.db).check)(plan, mem_limit).map_err(setup_failure)
}

fn db_failure(e: DbError) -> Failure {
    failure(Code::Io, e)
}

/// CPUs this machine runs connections on: what bounds a database's growth during a run
/// ([`DbPlan::room_bytes`]).
pub fn cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// Bytes a database run's stacks are checked and sized for ([`stack_bytes`]).
pub struct StackBytes {
    /// The data stack's.
    pub data: u64,
    /// The log stack's (0 without one).
    pub log: u64,
}

/// What the data stack `spec` (and the log stack `log`) of a run of `plan` are checked and,
/// `--size auto`, sized for: the load, what the run adds, the WAL it keeps (on the log stack
/// when there is one; docs/stacks.md, "Sizes and limits"); with the warnings, for a size the
/// user gave, that it holds less than the run may need. The dry run and the run ask here.
pub fn stack_bytes(
    plan: &DbPlan,
    spec: &StackSpec,
    log: Option<&StackSpec>,
    opts: &StackOpts,
) -> (StackBytes, Vec<String>) {
    let room = plan.room_bytes(log.is_some(), cpus());
    let (data, warned) = super::preflight::db_stack_bytes(spec, opts, plan.dataset_bytes(), room);
    let (log, log_warned) = match log {
        Some(l) => super::preflight::db_stack_bytes(l, &loop_only(opts), 0, plan.wal_room_bytes()),
        None => (0, None),
    };
    let warnings = warned.into_iter().chain(log_warned).collect();
    (StackBytes { data, log }, warnings)
}

/// Runs `plan` on the stack (and log stack) `run` names; returns the record. A `--target DIR`
/// is run as the stack `dir=DIR`.
pub fn run_db(run: &StackRun, plan: &DbPlan, interrupt: &AtomicBool) -> Result<RunRecord, Failure> {
    let (bytes, _) = stack_bytes(plan, run.spec, run.log_spec, run.opts);
    let mut options = super::stack::options(run.spec, run.opts, None, bytes.data)?;
    let log_opts = loop_only(run.opts);
    let mut log_options = match run.log_spec {
        Some(log) => Some(super::stack::options(log, &log_opts, None, bytes.log)?),
        None => None,
    };
    let mut crash = crash::serve_images(
        run.spec,
        &mut options,
        run.log_spec.zip(log_options.as_mut()),
        plan.seed,
        (run.crash_states, run.quiet),
    )?;
    let mut stack = super::stack::build_from(run.spec, options, run.quiet)?;
    let mut log_stack = match run.log_spec.zip(log_options) {
        Some((log, options)) => Some(super::stack::build_from(log, options, run.quiet)?),
        None => None,
    };
    let outcome = match plan.work {
        DbWork::Tpch { .. } => tpch::run_on(&mut stack, log_stack.as_ref(), run, plan, interrupt),
        _ => run_on(
            &mut stack,
            log_stack.as_ref(),
            run,
            plan,
            crash.as_mut(),
            interrupt,
        ),
    };
    if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
        // Whoever pressed Ctrl-C waits for the teardown: say so.
        stack.announce_teardown(true);
        log_stack.iter_mut().for_each(|l| l.announce_teardown(true));
    }
    // The server lives on the data stack and may hold its WAL on the log stack: it stops
    // first; then the log stack goes before the data stack (a zfs log pool shares the data
    // stack's zfs-fuse, which stops with the data stack).
    let origin = stack.target.clone();
    let log_origin = log_stack.as_ref().map(|l| l.target.clone());
    let mut stopped = stack.stop_started_daemons().map_err(stack_failure);
    if let Some(crash) = crash.as_mut() {
        // The file system's writeback is in the states' window; the teardown is not.
        if stopped.is_ok() {
            stopped = stack.write_back().map_err(stack_failure);
        }
        if let (true, Some(log)) = (stopped.is_ok(), log_stack.as_mut()) {
            stopped = log.write_back().map_err(stack_failure);
        }
        crash.end_window();
    }
    let log_torn = log_stack.map_or(Ok(()), |l| l.destroy().map_err(stack_failure));
    let torn = stack.destroy().map_err(stack_failure);
    let mut record = outcome?;
    stopped?;
    log_torn?;
    torn?;
    if let Some(crash) = crash {
        if record.status == RunStatus::Completed {
            let stacks = (run.spec, run.log_spec.zip(log_origin));
            let checker = crash::checker(plan, stacks, &origin, &crash);
            record.durability = Some(crash.finish(&checker, interrupt)?);
        }
    }
    if record.phases.is_empty() {
        // A run of phases has its findings already, without the steady-state ones.
        record.findings = bakeoff_core::findings::run_findings(&record);
    }
    Ok(record)
}

fn run_on(
    stack: &mut Stack,
    log_stack: Option<&Stack>,
    run: &StackRun,
    plan: &DbPlan,
    crash: Option<&mut crash::CrashRun>,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    let data = data_dir(stack)?;
    if let Some(bytes) = run.mem_limit {
        stack.limit_memory(bytes).map_err(stack_failure)?;
    }
    let mut opened = open(plan, stack, log_stack, &data, crash.is_some())?;
    let devices = known_of(stack, log_stack).devices.unwrap_or_default();
    let probe = Probe::new(devices.clone()).with_kernel_work();
    let load = load::phase(plan, opened.as_ref(), &data, &probe, interrupt, run.quiet)?;
    if let Some(crash) = crash.as_deref() {
        // The states start from the loaded database, stopped cleanly and flushed.
        let mut checkpoint = |s: &mut Stack| {
            let stacks: Vec<&Stack> = std::iter::once(&*s).chain(log_stack).collect();
            crash.checkpoint(&stacks)
        };
        (opened.quiesce(stack, &mut checkpoint)).map_err(setup_failure)?;
    }
    if !run.warm {
        opened.make_cold(stack).map_err(setup_failure)?;
    }
    if !run.quiet {
        announce_window(plan, run.warm);
    }
    // After a restart the postmaster has a new pid: ask the stack now.
    let known = known_of(stack, log_stack);
    let record_plan = record_plan(plan);
    let window = Window {
        plan: &record_plan,
        path: &data,
        devices,
        daemons: known.daemons,
        quiet: run.quiet,
    };
    let mut counters = body::Counters::new(opened.as_ref());
    let mut extras = body::Extras::default();
    extras.journal = crash.is_some();
    let mut work: Box<Body> =
        body::body(plan, opened.as_ref(), &mut counters, &mut extras, interrupt);
    let traced = match run.capture {
        Some(path) => Some(start_capture(
            path,
            opened.as_ref(),
            stack,
            log_stack,
            plan,
            run,
        )?),
        None => None,
    };
    let mut record = match &traced {
        Some(traced) => window.run(&mut capture::marked(&mut work, traced)),
        None => window.run(&mut work),
    };
    drop(work);
    if let Some(traced) = traced {
        let captured = traced.finish();
        if let Ok(record) = &mut record {
            record.capture = Some(captured?);
        }
    }
    let mut record = record?;
    if let Some(crash) = crash {
        crash.acknowledged = std::mem::take(&mut extras.acknowledged);
    }
    let mut database = describe(opened.as_ref(), plan);
    database.load = Some(load);
    database.window = counters.window();
    extras.apply(&mut database);
    // A window too short to measure gives no verdict, the consistency checks' included.
    let judged = record.status != RunStatus::Failed && !record.window_too_short();
    if judged && matches!(plan.work, DbWork::Tpcc { .. }) {
        check_consistency(opened.as_ref(), &mut database, &mut record)?;
    }
    record.database = Some(database);
    record.stack = Some(stack.info.clone());
    record.log_stack = log_stack.map(|l| l.info.clone());
    record.cold = Some(!run.warm);
    if record.status != RunStatus::Failed {
        record.summary = Summary::compute(&record);
    }
    opened.stop(stack).map_err(setup_failure)?;
    Ok(record)
}

/// Says how the window runs: cold or warm, its warm-up and its measured time.
fn announce_window(plan: &DbPlan, warm: bool) {
    let (ramp, runtime) = (plan.ramp_time.as_secs_f64(), plan.runtime.as_secs_f64());
    let cold = if warm { "warm" } else { "cold" };
    let warmup = match plan.ramp_auto {
        Some(a) => format!(
            "warm-up until steady (at most {:.0} s)",
            a.max.as_secs_f64()
        ),
        None => format!("{ramp:.0} s warm-up"),
    };
    eprintln!("bakeoff: running {cold}: {warmup}, then {runtime:.0} s measured");
}

/// Starts `run --capture`: the server's processes on the data stack's files and the log
/// stack's.
fn start_capture(
    path: &std::path::Path,
    opened: &dyn ManagedDb,
    stack: &Stack,
    log_stack: Option<&Stack>,
    plan: &DbPlan,
    run: &StackRun,
) -> Result<capture::RunCapture, Failure> {
    let mut roots = vec![("data".to_string(), data_dir(stack)?)];
    if let Some(Target::Directory(log)) = log_stack.map(target_of) {
        roots.push(("log".to_string(), log));
    }
    capture::start(path, opened.processes(), roots, plan, &run.spec.text)
}

/// The directory a database lives in: the stack's mount (a raw stack has none).
fn data_dir(stack: &Stack) -> Result<std::path::PathBuf, Failure> {
    match target_of(stack) {
        Target::Directory(data) => Ok(data),
        _ => Err(failure(
            Code::Usage,
            "a database needs a file system: raw stacks hold no files",
        )),
    }
}

/// Refuses SQLite's WAL (its default here) on a stack that cannot map the database's `-shm`
/// file shared and writable, zfs-fuse: the first connection would fail once the stack is built.
pub fn check_stack(plan: &DbPlan, data: &StackSpec) -> Result<(), Failure> {
    use bakeoff_core::dbplan::{sqlite::JournalMode, Db};
    let wal = plan.db == Db::Sqlite && plan.sqlite.journal_mode == Some(JournalMode::Wal);
    if wal && data.kind.name() == "zfs" && !bakeoff_stack::fs::zfs::openzfs_loaded() {
        return Err(failure(
            Code::Usage,
            "sqlite.journal_mode=wal (the default) maps the database's -shm file shared and \
             writable, which zfs-fuse does not allow: set sqlite.journal_mode=delete (or \
             truncate or persist), or use another stack",
        ));
    }
    Ok(())
}

/// Refuses a log stack the database cannot use, saying which databases take one and what
/// they put there.
pub fn check_log_stack(plan: &DbPlan, has_log_stack: bool) -> Result<(), Failure> {
    match backend(plan.db).log_stack {
        Err(why) if has_log_stack => {
            let takers: Vec<String> = (BACKENDS.iter())
                .filter_map(|b| {
                    Some(format!(
                        "db={} puts {} there",
                        b.db.name(),
                        b.log_stack.ok()?
                    ))
                })
                .collect();
            Err(failure(
                Code::Usage,
                format!("--log-stack: {why} ({})", takers.join("; ")),
            ))
        }
        _ => Ok(()),
    }
}

/// Starts the server (or opens the SQLite file) on the stack.
fn open(
    plan: &DbPlan,
    stack: &mut Stack,
    log_stack: Option<&Stack>,
    data: &std::path::Path,
    checksums: bool,
) -> Result<Opened, Failure> {
    check_log_stack(plan, log_stack.is_some())?;
    let at = OpenAt {
        plan,
        data,
        log_stack: log_stack.map(|l| l.target.clone()),
        checksums,
    };
    (backend(plan.db).open)(stack, at).map_err(setup_failure)
}

/// What the record says about the database itself.
fn describe(opened: &dyn ManagedDb, plan: &DbPlan) -> DatabaseRun {
    opened.describe().with_plan_note(plan)
}

trait PlanNote {
    fn with_plan_note(self, plan: &DbPlan) -> Self;
}

impl PlanNote for DatabaseRun {
    /// Keeps the workload's name with the database's description.
    fn with_plan_note(mut self, plan: &DbPlan) -> Self {
        self.paths
            .entry("workload".into())
            .or_insert_with(|| plan.workload.clone());
        self
    }
}

/// TPC-C's consistency conditions 1–4: a run that fails them is failed, not a result.
fn check_consistency(
    opened: &dyn ManagedDb,
    database: &mut DatabaseRun,
    record: &mut RunRecord,
) -> Result<(), Failure> {
    let db = opened.database();
    let mut conn = db.connect().map_err(db_failure)?;
    let results = bakeoff_db::tpcc::check_consistency(conn.as_mut()).map_err(db_failure)?;
    database.consistency = results
        .iter()
        .map(|c| Condition {
            name: c.name.to_string(),
            passed: c.passed,
            detail: c.offender.clone(),
        })
        .collect();
    if let Some(bad) = database.consistency.iter().find(|c| !c.passed) {
        record.status = RunStatus::Failed;
        record.error = Some(format!(
            "TPC-C consistency condition {} does not hold ({}): the transactions did not do \
             what they should",
            bad.name,
            bad.detail.clone().unwrap_or_default()
        ));
        record.roles.clear();
        record.ops.clear();
        record.summary = Summary::default();
    }
    Ok(())
}
