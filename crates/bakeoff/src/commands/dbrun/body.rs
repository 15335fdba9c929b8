//! What runs in a database run's measured window: TPC-C's terminals under the harness, or the
//! real pgbench with the sampler ticking beside it; and the database's counters at the window's
//! edges.

use super::load::tpcc_plan;
use super::Opened;
use bakeoff_core::dbplan::{DbPlan, DbWork};
use bakeoff_core::dbrecord::{DatabaseRun, DbCounters, PgbenchReport};
use bakeoff_core::record::RoleResult;
use bakeoff_db::pgbench::{Pgbench, RunOptions};
use bakeoff_db::postgres::{PgServer, PgStats};
use bakeoff_db::sqlite::CacheCounters;
use bakeoff_db::Conn;
use bakeoff_engine::harness::Costs;
use bakeoff_engine::{RunError, RunOutput, Tick, TickKind, Totals};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::super::measure::Body;

/// The database's own counters at the window's start and end.
pub struct Counters<'a> {
    opened: &'a Opened,
    start: Option<Snapshot>,
    end: Option<Snapshot>,
}

enum Snapshot {
    Pg(PgStats),
    Sqlite(CacheCounters),
}

impl<'a> Counters<'a> {
    /// Counters of `opened`'s database.
    pub fn new(opened: &'a Opened) -> Counters<'a> {
        Counters {
            opened,
            start: None,
            end: None,
        }
    }

    fn take(&self) -> Option<Snapshot> {
        match self.opened {
            Opened::Postgres(server) => server.stats().ok().map(Snapshot::Pg),
            Opened::Sqlite(db) => Some(Snapshot::Sqlite(db.cache_counters())),
        }
    }

    /// Notes the counters at the window's start. A PostgreSQL window is made of whole
    /// checkpoint cycles (docs/methodology.md): a checkpoint as it opens, after the opening
    /// counters, writes what the warm-up dirtied before the devices are first read; one at the
    /// End tick, which reaches this before the sampler reads the devices, writes what the
    /// window dirtied inside the devices' window.
    pub fn on_tick(&mut self, tick: &Tick) {
        match tick.kind {
            TickKind::MeasureStart => {
                self.start = self.take();
                self.checkpoint("opens");
                self.leave_out_the_opening_checkpoint();
            }
            TickKind::End => self.checkpoint("closes"),
            _ => {}
        }
    }

    /// Notes the counters at the window's end, once the workload's connections are closed
    /// (every backend has published its statistics); the closing checkpoint's buffers, which
    /// the checkpointer publishes itself, are in them.
    pub fn close(&mut self) {
        self.end = self.take();
    }

    /// The window's transactions and WAL count from the tick, but its devices are first read
    /// after the opening checkpoint: the buffers that checkpoint wrote (the warm-up's) and the
    /// checkpoint itself are left out of the window's counters as they are out of its devices.
    fn leave_out_the_opening_checkpoint(&mut self) {
        let after = self.take();
        if let (Some(Snapshot::Pg(start)), Some(Snapshot::Pg(after))) = (self.start.as_mut(), after)
        {
            start.buffers_checkpoint = after.buffers_checkpoint;
            start.checkpoints_req = after.checkpoints_req;
            start.checkpoints_timed = after.checkpoints_timed;
        }
    }

    fn checkpoint(&self, edge: &str) {
        if let Opened::Postgres(server) = self.opened {
            if let Err(e) = server.checkpoint() {
                eprintln!("bakeoff: warning: the checkpoint as the window {edge} failed: {e}");
            }
        }
    }

    /// The window's deltas.
    pub fn window(&self) -> Option<DbCounters> {
        match (self.start.as_ref()?, self.end.as_ref()?) {
            (Snapshot::Pg(a), Snapshot::Pg(b)) => Some(b.since(a).counters()),
            (Snapshot::Sqlite(a), Snapshot::Sqlite(b)) => {
                let d = b.since(a);
                Some(DbCounters {
                    cache_hits: Some(d.hits),
                    cache_misses: Some(d.misses),
                    engine_cpu_us: Some(d.cpu_ns / 1000),
                    ..DbCounters::default()
                })
            }
            _ => None,
        }
    }
}

/// The costs per transaction an automatic warm-up also waits for on PostgreSQL: WAL bytes and
/// full-page images per committed transaction, from `pg_stat_wal` and `pg_stat_database` read
/// once a second over one connection of bakeoff's own.
fn pg_costs(opened: &Opened) -> Option<Costs<'_>> {
    let Opened::Postgres(server) = opened else {
        return None;
    };
    let mut conn = server.database().connect_pg().ok()?;
    let server: &PgServer = server;
    Some(Costs {
        names: vec!["wal_bytes_per_txn", "fpi_per_txn"],
        read: Box::new(move || {
            let s = server.stats_on(&mut conn).ok()?;
            Some((s.xact_commit, vec![s.wal_bytes as f64, s.wal_fpi as f64]))
        }),
    })
}

/// What the run adds to the database section besides counters.
#[derive(Default)]
pub struct Extras {
    retries: BTreeMap<String, u64>,
    rollbacks: u64,
    skipped_districts: u64,
    pgbench: Option<PgbenchReport>,
}

impl Extras {
    /// Writes them into the record's database section.
    pub fn apply(self, db: &mut DatabaseRun) {
        db.retries = self.retries;
        db.rollbacks = self.rollbacks;
        db.delivery_skipped_districts = self.skipped_districts;
        db.pgbench = self.pgbench;
    }
}

/// The body of the window for `plan`.
pub fn body<'b, 'o: 'b>(
    plan: &'b DbPlan,
    opened: &'b Opened,
    counters: &'b mut Counters<'o>,
    extras: &'b mut Extras,
    interrupt: &'b AtomicBool,
) -> Box<Body<'b>> {
    match &plan.work {
        DbWork::Tpcc { .. } => Box::new(move |on_tick| {
            let tp = tpcc_plan(plan).expect("a TPC-C plan");
            let on_tick = &mut |t: &Tick| {
                counters.on_tick(t);
                on_tick(t);
            };
            let db = opened.database();
            let costs = pg_costs(opened);
            let run =
                bakeoff_db::tpcc::run_warming(db, &tp, plan.ramp_auto, costs, interrupt, on_tick);
            // Every terminal has closed its connection: the server's counters are complete.
            counters.close();
            let run = run?;
            extras.retries = run
                .retries
                .iter()
                .map(|(k, n)| (k.name().to_string(), *n))
                .collect();
            extras.rollbacks = run.rollbacks;
            extras.skipped_districts = run.delivery_skipped_districts;
            Ok(run.output)
        }),
        DbWork::Tpch { .. } => Box::new(|_| {
            Err(database_error(
                "TPC-H runs as phases (dbrun/tpch.rs), not in a window",
            ))
        }),
        DbWork::Pgbench { .. } => Box::new(move |on_tick| {
            let Opened::Postgres(server) = opened else {
                return Err(database_error("pgbench drives PostgreSQL only"));
            };
            let mut opts = RunOptions::from_plan(&plan.work, plan.runtime).expect("a pgbench plan");
            let steady = match plan.ramp_auto {
                Some(auto) => Some(super::pgbench_warmup::warm_up(
                    server, &opts, auto, interrupt,
                )?),
                None => None,
            };
            // pgbench's start-up vacuum and its connections are not in the span its rate is
            // taken over: the window opens once they are done (its clients all connected).
            let mut conn = server
                .database()
                .connect_pg()
                .map_err(|e| db_error(e.message))?;
            for sql in bakeoff_db::pgbench::VACUUM {
                conn.batch(sql)
                    .map_err(|e| db_error(format!("{sql}: {}", e.message)))?;
            }
            opts.no_vacuum = true;
            let clients = i64::from(opts.clients);
            let mut connected =
                move || super::pgbench_warmup::pgbench_backends(&mut conn) >= clients;
            let pgbench = Pgbench::for_server(server);
            let report = ticking(
                &mut |t| {
                    counters.on_tick(t);
                    on_tick(t);
                },
                &mut connected,
                || pgbench.run_until(&opts, interrupt),
            );
            // pgbench has exited: its connections are closed.
            counters.close();
            let (report, elapsed) = report?;
            let Some(report) = report else {
                // Ctrl-C stopped pgbench: no summary, no result.
                return Ok(RunOutput {
                    roles: Vec::new(),
                    ops: Vec::new(),
                    measured: elapsed,
                    interrupted: true,
                    error: None,
                    counts: Vec::new(),
                    clients: Vec::new(),
                    steady,
                });
            };
            let op = report.op_stats();
            extras.pgbench = Some(report.printed());
            let measured = Duration::from_micros(
                report
                    .log
                    .last_end_us
                    .saturating_sub(report.log.first_start_us),
            );
            let measured = if measured.is_zero() {
                elapsed
            } else {
                measured
            };
            Ok(RunOutput {
                roles: vec![RoleResult {
                    name: "pgbench".into(),
                    threads: opts.clients,
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
            })
        }),
    }
}

fn db_error(message: String) -> RunError {
    database_error(format!("preparing the pgbench window: {message}"))
}

fn database_error(message: impl Into<String>) -> RunError {
    RunError::Database {
        what: "pgbench".into(),
        message: message.into(),
    }
}

/// Runs `work` (an external program that times itself) on a thread while the sampler ticks
/// every second: the window opens once `started` says the program's own clock runs (polled
/// every 5 ms), and closes at its end.
fn ticking<T: Send>(
    on_tick: &mut dyn FnMut(&Tick),
    started: &mut dyn FnMut() -> bool,
    work: impl FnOnce() -> Result<T, bakeoff_db::postgres::PgError> + Send,
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
        .map_err(|_| database_error("the pgbench thread panicked"))?
        .map_err(|e| database_error(e.to_string()))?;
    Ok((out, elapsed))
}
