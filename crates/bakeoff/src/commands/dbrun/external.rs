//! The window of a benchmark program that times itself, pgbench against PostgreSQL or sysbench
//! against MariaDB: an automatic warm-up run of its own until the server's costs are steady
//! ([`super::warmup`]), then the measured run on a thread while the sampler ticks; the window
//! opens once every client of the program is connected and closes when it exits. Its printed
//! report is kept beside bakeoff's statistics.

use super::warmup::{warm_up, WarmupRun};
use bakeoff_core::dbplan::DbPlan;
use bakeoff_core::dbrecord::{PgbenchReport, SysbenchReport};
use bakeoff_core::record::{OpStats, RoleResult};
use bakeoff_core::steady::SteadyRecord;
use bakeoff_db::managed::ManagedDb;
use bakeoff_db::mariadb::{MyConn, MyServer};
use bakeoff_db::pgbench::{Pgbench, RunOptions};
use bakeoff_db::postgres::{PgConn, PgServer};
use bakeoff_db::sysbench::{RunOptions as SysbenchOptions, Sysbench};
use bakeoff_db::{Conn, Value};
use bakeoff_engine::{RunError, RunOutput, Tick, TickKind, Totals};
use std::fmt::Display;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A window's output and what the program printed (`None` when it was interrupted).
type Printed<R> = (RunOutput, Option<R>);

/// pgbench's window: its start-up vacuum done beforehand, so that the window opens on its
/// clients' transactions only.
pub fn pgbench_window(
    plan: &DbPlan,
    opened: &dyn ManagedDb,
    on_tick: &mut dyn FnMut(&Tick),
    interrupt: &AtomicBool,
) -> Result<Printed<PgbenchReport>, RunError> {
    let error = |m: String| program_error("pgbench", m);
    let server = (opened.as_any().downcast_ref::<PgServer>())
        .ok_or_else(|| error("pgbench drives PostgreSQL only".into()))?;
    let mut opts = RunOptions::from_plan(&plan.work, plan.runtime).expect("a pgbench plan");
    let connect = || server.database().connect_pg().map_err(|e| error(e.message));
    let steady = match plan.ramp_auto {
        Some(auto) => {
            let warm = RunOptions {
                runtime: auto.max + Duration::from_secs(1),
                no_vacuum: false,
                ..opts.clone()
            };
            let pgbench = Pgbench::for_server(server);
            let mut conn = connect()?;
            let run = WarmupRun {
                program: "pgbench",
                run: move |stop: &AtomicBool| pgbench.run_until(&warm, stop),
                connections: move || pgbench_backends(&mut conn),
            };
            let costs = opened
                .warmup_costs()
                .ok_or_else(|| error("no counters".into()))?;
            Some(warm_up(run, costs, auto, interrupt)?)
        }
        None => None,
    };
    // pgbench's start-up vacuum and its connections are not in the span its rate is taken
    // over: the window opens once they are done (its clients all connected).
    let mut conn = connect()?;
    for sql in bakeoff_db::pgbench::VACUUM {
        (conn.batch(sql)).map_err(|e| error(format!("{sql}: {}", e.message)))?;
    }
    opts.no_vacuum = true;
    let clients = i64::from(opts.clients);
    let mut connected = move || pgbench_backends(&mut conn) >= clients;
    let pgbench = Pgbench::for_server(server);
    let (report, elapsed) = ticking("pgbench", on_tick, &mut connected, || {
        pgbench.run_until(&opts, interrupt)
    })?;
    let Some(report) = report else {
        // Ctrl-C stopped pgbench: no summary, no result.
        return Ok((interrupted(elapsed, steady), None));
    };
    let measured =
        Duration::from_micros((report.log.last_end_us).saturating_sub(report.log.first_start_us));
    let measured = if measured.is_zero() {
        elapsed
    } else {
        measured
    };
    let out = output("pgbench", opts.clients, report.op_stats(), measured, steady);
    Ok((out, Some(report.printed())))
}

/// sysbench's window. Its TPS is its transactions over its own total time, so that time is
/// the window's measured span.
pub fn sysbench_window(
    plan: &DbPlan,
    opened: &dyn ManagedDb,
    on_tick: &mut dyn FnMut(&Tick),
    interrupt: &AtomicBool,
) -> Result<Printed<SysbenchReport>, RunError> {
    let error = |m: String| program_error("sysbench", m);
    let server = (opened.as_any().downcast_ref::<MyServer>())
        .ok_or_else(|| error("sysbench drives MariaDB only".into()))?;
    let opts = SysbenchOptions::from_plan(&plan.work, plan.runtime).expect("a sysbench plan");
    let connect = || server.connect().map_err(|e| error(e.to_string()));
    let steady = match plan.ramp_auto {
        Some(auto) => {
            let warm = SysbenchOptions {
                runtime: auto.max + Duration::from_secs(1),
                ..opts.clone()
            };
            let sysbench = Sysbench::for_server(server);
            let mut conn = connect()?;
            let run = WarmupRun {
                program: "sysbench",
                run: move |stop: &AtomicBool| sysbench.run_until(&warm, stop),
                connections: move || sysbench_connections(&mut conn),
            };
            let costs = opened
                .warmup_costs()
                .ok_or_else(|| error("no counters".into()))?;
            Some(warm_up(run, costs, auto, interrupt)?)
        }
        None => None,
    };
    let mut conn = connect()?;
    let threads = i64::from(opts.threads);
    let mut connected = move || sysbench_connections(&mut conn) >= threads;
    let sysbench = Sysbench::for_server(server);
    let (report, elapsed) = ticking("sysbench", on_tick, &mut connected, || {
        sysbench.run_until(&opts, interrupt)
    })?;
    let Some(report) = report else {
        return Ok((interrupted(elapsed, steady), None));
    };
    let measured = Duration::from_secs_f64(report.summary.total_time_s.max(0.0));
    let measured = if measured.is_zero() {
        elapsed
    } else {
        measured
    };
    let out = output(
        "sysbench",
        opts.threads,
        report.op_stats(),
        measured,
        steady,
    );
    Ok((out, Some(report.printed())))
}

/// pgbench's connections to the server (pgbench names itself by default).
pub const PGBENCH_CONNECTED: &str =
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'";

/// How many pgbench connections the server has (0 if it cannot say).
pub fn pgbench_backends(conn: &mut PgConn) -> i64 {
    let rows = conn.query(PGBENCH_CONNECTED, &[]).unwrap_or_default();
    match rows.first().and_then(|r| r.first()) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    }
}

/// How many other connections the server has to the benchmark database: sysbench's (0 if it
/// cannot say).
pub fn sysbench_connections(conn: &mut MyConn) -> i64 {
    let sql = "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
               WHERE DB = DATABASE() AND ID <> CONNECTION_ID()";
    let rows = conn.text_rows(sql).unwrap_or_default();
    let first = rows.first().and_then(|r| r.first()).cloned().flatten();
    first.and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn output(
    role: &str,
    clients: u32,
    op: OpStats,
    measured: Duration,
    steady: Option<SteadyRecord>,
) -> RunOutput {
    RunOutput {
        roles: vec![RoleResult {
            name: role.into(),
            threads: clients,
            ops: vec![op.clone()],
            commits_per_write: None,
        }],
        ops: vec![op],
        measured,
        interrupted: false,
        error: None,
        counts: Vec::new(),
        clients: Vec::new(),
        steady,
        replay: None,
        verify: None,
    }
}

fn interrupted(elapsed: Duration, steady: Option<SteadyRecord>) -> RunOutput {
    RunOutput {
        roles: Vec::new(),
        ops: Vec::new(),
        measured: elapsed,
        interrupted: true,
        error: None,
        counts: Vec::new(),
        clients: Vec::new(),
        steady,
        replay: None,
        verify: None,
    }
}

fn program_error(program: &str, message: String) -> RunError {
    RunError::Database {
        what: program.into(),
        message,
    }
}

/// Runs `work` (a program that times itself) on a thread while the sampler ticks every
/// second: the window opens once `started` says the program's own clock runs (polled every
/// 5 ms), and closes at its end.
fn ticking<T: Send, E: Display + Send>(
    program: &str,
    on_tick: &mut dyn FnMut(&Tick),
    started: &mut dyn FnMut() -> bool,
    work: impl FnOnce() -> Result<T, E> + Send,
) -> Result<(T, Duration), RunError> {
    let start = Instant::now();
    let tick = |kind| Tick {
        elapsed: start.elapsed(),
        kind,
        totals: Totals::default(),
        latency: Default::default(),
    };
    on_tick(&tick(TickKind::Start));
    let result = std::thread::scope(|s| {
        let handle = s.spawn(work);
        let (mut next, mut open) = (Duration::from_secs(1), false);
        while !handle.is_finished() {
            if !open && started() {
                on_tick(&tick(TickKind::MeasureStart));
                open = true;
            }
            if start.elapsed() >= next {
                on_tick(&tick(TickKind::Second));
                next += Duration::from_secs(1);
            }
            std::thread::sleep(Duration::from_millis(if open { 20 } else { 5 }));
        }
        handle.join()
    });
    let elapsed = start.elapsed();
    on_tick(&tick(TickKind::End));
    let out = result
        .map_err(|_| program_error(program, format!("the {program} thread panicked")))?
        .map_err(|e| program_error(program, e.to_string()))?;
    Ok((out, elapsed))
}
