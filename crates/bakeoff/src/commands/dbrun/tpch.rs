//! `bakeoff run tpch`: seed 002's database set-up as phases on the stack. `initdb` (the
//! PostgreSQL cluster made and its server started, or the SQLite file created) is accounted
//! before the measured window opens, so that the window counts the server as one of the
//! stack's daemons; then the library's phases (`tpch.schema` ... `tpch.queries`) run in the
//! window through the phase machinery of `bakeoff exec`, each with its real time, CPU (bakeoff
//! as the client plus the server), device bytes and flushes, its rows and its steps (tables,
//! indexes, keys, the 22 queries). No cache drop between the load and the queries: seed 002
//! ran its queries on what the load left in memory, capped by `--mem-limit`.

use super::super::measure::Window;
use super::super::on_stack::{known_of, StackRun};
use super::super::phases::phase::{measured, Outcome};
use super::super::phases::{self, Context};
use super::load::size_on_disk;
use super::{data_dir, describe, open, record_plan, setup_failure, Opened};
use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_core::dbplan::{Db, DbPlan, DbWork};
use bakeoff_core::dbrecord::LoadPhase;
use bakeoff_core::phaserecord::{CpuSource, PhaseRecord, StepRecord};
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_db::managed::ManagedDb;
use bakeoff_db::tpch::{self, Answers, Phase, PhaseReport, Tpch, TpchError, TpchPlan};
use bakeoff_engine::Tick;
use bakeoff_stack::undo::Undo;
use bakeoff_stack::Stack;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The name of the first phase: the database made and its server started.
pub const INITDB: &str = "initdb";

/// Runs TPC-H as `plan` says on the built `stack` (and `log_stack`); the caller stops the
/// server if this returns early and tears the stacks down.
pub fn run_on(
    stack: &mut Stack,
    log_stack: Option<&Stack>,
    run: &StackRun,
    plan: &DbPlan,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    let (data, tpch_plan, expected) = prepare(stack, run, plan)?;
    let known = known_of(stack, log_stack);
    let devices = known.devices.unwrap_or_default();
    let devices_and_daemons = (devices.clone(), known.daemons);
    let mut ctx = Context::new(
        stack,
        data.clone(),
        &plan.settings,
        devices_and_daemons,
        interrupt,
    );
    let (initdb, opened) = initdb(&mut ctx, plan, log_stack, &data)?;
    let initdb_started = ctx.origin;
    // The postmaster is one of the stack's daemons now.
    let known = known_of(ctx.stack, log_stack);
    ctx.daemons = known.daemons.clone();
    let shown_plan = record_plan(plan);
    let window = Window {
        plan: &shown_plan,
        path: &data,
        devices,
        daemons: known.daemons,
        quiet: run.quiet,
    };
    let mut phases = vec![initdb];
    let tpch = (tpch_plan, expected);
    let (mut record, load) = in_window(&mut ctx, window, opened.as_ref(), tpch, plan, &mut phases)?;
    // initdb ran before the window opened: its start is that long before the window's.
    phases[0].start_offset_s =
        -(ctx.origin.saturating_duration_since(initdb_started)).as_secs_f64();
    let mut database = describe(opened.as_ref(), plan);
    database.load = load.transpose()?;
    record.database = Some(database);
    record.log_stack = log_stack.map(|l| l.info.clone());
    opened.stop(ctx.stack).map_err(setup_failure)?;
    phases::finish_record(&mut record, phases, ctx.stack, run.warm);
    Ok(record)
}

/// What comes before the first phase: the plan checked, the generator made and the answers
/// the queries must give computed outside the memory cap, the cap, the cache rule. Returns the
/// stack's mount, the TPC-H plan and the expected answers.
fn prepare(
    stack: &mut Stack,
    run: &StackRun,
    plan: &DbPlan,
) -> Result<(PathBuf, TpchPlan, Answers), Failure> {
    let data = data_dir(stack)?;
    let DbWork::Tpch { sf, load_threads } = plan.work else {
        return Err(failure(Code::Usage, "not a TPC-H plan"));
    };
    let tpch_plan = TpchPlan { sf, load_threads };
    tpch_plan.validate().map_err(|e| failure(Code::Usage, e))?;
    // The generator's 300 MiB text pool is charged to the cgroup it is first touched in: made
    // now, outside the cap, the cap applies to the server as seed 002's did to Oracle.
    tpch::init_generator();
    let expected = expected_answers(stack, tpch_plan, run.quiet)?;
    if let Some(bytes) = run.mem_limit {
        stack.limit_memory(bytes).map_err(stack_failure)?;
    }
    stack.prepare_run(run.warm).map_err(stack_failure)?;
    Ok((data, tpch_plan, expected))
}

/// The answers the 22 queries must give at the plan's scale factor: TPC-H's at SF 1, else
/// SQLite's on a copy of the same generated data in a scratch directory beside the system's
/// temporary files (not on the stack, before the window: none of it is measured). The scratch
/// directory is in the stack's ledger, so `bakeoff cleanup` removes it after a kill -9.
fn expected_answers(stack: &mut Stack, plan: TpchPlan, quiet: bool) -> Result<Answers, Failure> {
    let scratch = tempfile::Builder::new().prefix("bakeoff-tpch-answers-").tempdir().map_err(|e| {
        failure(
            Code::Environment,
            format!("a scratch directory for TPC-H's expected answers (set TMPDIR to one with room): {e}"),
        )
    })?;
    stack
        .record_undo(Undo::RemoveDirAndFiles {
            path: scratch.path().to_path_buf(),
        })
        .map_err(stack_failure)?;
    if !quiet && plan.sf != 1.0 {
        eprintln!(
            "computing the 22 expected answers at SF {} with SQLite in {} (outside the window)",
            plan.sf,
            scratch.path().display()
        );
    }
    tpch::expected::for_run(plan.sf, plan.load_threads, scratch.path())
        .map_err(|e| failure(Code::Environment, format!("TPC-H's expected answers: {e}")))
}

/// A test's corruption of the loaded data before the queries: `BAKEOFF_TEST_TPCH_CORRUPT` is
/// SQL run on the database (the tests prove a wrong row fails the run naming the query).
fn corrupt_for_test(opened: &dyn ManagedDb) -> Result<(), String> {
    let Ok(sql) = std::env::var("BAKEOFF_TEST_TPCH_CORRUPT") else {
        return Ok(());
    };
    let mut conn = opened.database().connect().map_err(|e| e.to_string())?;
    conn.batch(&sql)
        .map_err(|e| format!("BAKEOFF_TEST_TPCH_CORRUPT: {e}"))
}

/// The library's phases in the measured window, appended to `phases`; the record of the
/// window, and the load as the database section shows it (if the load completed).
fn in_window(
    ctx: &mut Context,
    window: Window,
    opened: &dyn ManagedDb,
    (tpch_plan, expected): (TpchPlan, Answers),
    plan: &DbPlan,
    phases: &mut Vec<PhaseRecord>,
) -> Result<(RunRecord, Option<Result<LoadPhase, Failure>>), Failure> {
    let db = opened.database();
    let runner = Tpch::new(db.as_ref(), tpch_plan)
        .map_err(|e| failure(Code::Usage, e))?
        .checking(expected);
    let cpu = server_cpu(plan.db);
    let names: Vec<(String, String)> = (Phase::ALL.iter())
        .map(|p| (p.name().to_string(), format!("action {}", p.name())))
        .collect();
    let quiet = window.quiet;
    let mut load = None;
    let record = window.run(&mut |on_tick| {
        ctx.origin = Instant::now();
        ctx.next_tick = Duration::from_secs(1);
        let mut one = |ctx: &mut Context, i: usize, on_tick: &mut dyn FnMut(&Tick)| {
            if Phase::ALL[i] == Phase::Queries {
                if let Err(e) = corrupt_for_test(opened) {
                    eprintln!("bakeoff: warning: {e}");
                }
            }
            let record = run_phase(ctx, &runner, Phase::ALL[i], cpu, on_tick);
            if Phase::ALL[i] == Phase::Load && record.status == RunStatus::Completed {
                load = Some(load_phase(&record, opened));
            }
            record
        };
        let out = phases::run_phases(ctx, &names, phases, on_tick, quiet, &mut one);
        Ok(out)
    })?;
    Ok((record, load))
}

/// How a phase's user and system CPU are counted: a server's processes beside bakeoff's; an
/// embedded database works inside bakeoff.
fn server_cpu(db: Db) -> CpuSource {
    match db.is_server() {
        true => CpuSource::BakeoffAndServer,
        false => CpuSource::Bakeoff,
    }
}

/// The `initdb` phase: the cluster made and the server started (or the SQLite file made),
/// accounted like every phase. A failure to start is the run's error, with its exit code.
fn initdb(
    ctx: &mut Context,
    plan: &DbPlan,
    log_stack: Option<&Stack>,
    data: &std::path::Path,
) -> Result<(PhaseRecord, Opened), Failure> {
    let command = bakeoff_db::registry::backend(plan.db).started_by;
    let mut opened = None;
    let record = measured(ctx, INITDB, command.into(), true, |ctx| {
        let started = open(plan, ctx.stack, log_stack, data, false).inspect(|o| {
            // Counted from the end of this phase on (it did not exist at its start): in the
            // split as a daemon, in the phases' CPU beside bakeoff.
            if let Some(&server) = o.processes().first() {
                ctx.daemons.push(server);
                ctx.server = Some(server);
            }
        });
        let message = started.as_ref().err().map(|f| f.error.to_string());
        opened = Some(started);
        Outcome::inside(message.map_or(Ok(()), Err), server_cpu(plan.db))
    });
    let opened = opened.expect("the phase ran")?;
    Ok((record, opened))
}

/// Runs one TPC-H phase on a thread while the sampler ticks, and records its rows and steps.
fn run_phase(
    ctx: &mut Context,
    runner: &Tpch,
    phase: Phase,
    cpu: CpuSource,
    on_tick: &mut dyn FnMut(&Tick),
) -> PhaseRecord {
    let mut report: Option<PhaseReport> = None;
    let command = format!("action {}", phase.name());
    let stop = ctx.interrupt;
    let mut record = measured(ctx, phase.name(), command, true, |ctx| {
        let result = std::thread::scope(|s| {
            let handle = s.spawn(|| runner.run(phase, stop));
            while !handle.is_finished() {
                ctx.tick(on_tick);
                std::thread::sleep(Duration::from_millis(20));
            }
            handle.join()
        });
        match result {
            Ok(Ok(r)) => {
                report = Some(r);
                Outcome::inside(Ok(()), cpu)
            }
            Ok(Err(TpchError::Interrupted { .. })) => Outcome {
                status: RunStatus::Interrupted,
                ..Outcome::inside(Ok(()), cpu)
            },
            Ok(Err(e)) => Outcome::inside(Err(e.to_string()), cpu),
            Err(_) => Outcome::inside(Err(format!("{}: its thread panicked", phase.name())), cpu),
        }
    });
    if let Some(r) = report {
        let counts_rows = matches!(phase, Phase::Load | Phase::Queries);
        record.rows = counts_rows.then_some(r.rows);
        record.steps = (r.steps.iter())
            .map(|s| StepRecord {
                name: s.name.clone(),
                rows: counts_rows.then_some(s.rows),
                real_s: s.elapsed.as_secs_f64(),
            })
            .collect();
    }
    record
}

/// The load as the database section shows it (as a TPC-C run's): rows per table, time,
/// device bytes, the database's size right after it.
fn load_phase(p: &PhaseRecord, opened: &dyn ManagedDb) -> Result<LoadPhase, Failure> {
    let rows = (p.steps.iter())
        .map(|s| (s.name.clone(), s.rows.unwrap_or(0)))
        .collect();
    let total = p.rows.unwrap_or(0) as f64;
    Ok(LoadPhase {
        seconds: p.real_s,
        rows_per_s: if p.real_s > 0.0 {
            total / p.real_s
        } else {
            0.0
        },
        rows,
        device_read_bytes: p.device_read_bytes,
        device_write_bytes: p.device_write_bytes,
        log_device_write_bytes: None,
        size_bytes: size_on_disk(opened)?,
    })
}
