//! What runs in a database run's measured window: TPC-C's terminals under the harness, or a
//! real pgbench or sysbench with the sampler ticking beside it (`external`); and the
//! database's counters at the window's edges.

use super::load::tpcc_plan;
use bakeoff_core::dbplan::{DbPlan, DbWork};
use bakeoff_core::dbrecord::{DatabaseRun, DbCounters, PgbenchReport, SysbenchReport};
use bakeoff_db::managed::ManagedDb;
use bakeoff_engine::{RunError, Tick, TickKind};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use super::super::measure::Body;

/// The database's own counters at the window's start and end.
pub struct Counters<'a> {
    opened: &'a dyn ManagedDb,
    start: Option<DbCounters>,
    end: Option<DbCounters>,
}

impl<'a> Counters<'a> {
    /// Counters of `opened`'s database.
    pub fn new(opened: &'a dyn ManagedDb) -> Counters<'a> {
        Counters {
            opened,
            start: None,
            end: None,
        }
    }

    /// Notes the counters at the window's start. A server's window is made of whole
    /// checkpoint cycles (docs/methodology.md): a checkpoint as it opens, after the opening
    /// counters, writes what the warm-up dirtied before the devices are first read; one at the
    /// End tick, which reaches this before the sampler reads the devices, writes what the
    /// window dirtied inside the devices' window.
    pub fn on_tick(&mut self, tick: &Tick) {
        match tick.kind {
            TickKind::MeasureStart => {
                self.start = self.opened.counters();
                self.checkpoint("opens");
                if let (Some(start), Some(after)) = (self.start.as_mut(), self.opened.counters()) {
                    start.leave_out_checkpoint(&after);
                }
            }
            TickKind::End => self.checkpoint("closes"),
            _ => {}
        }
    }

    /// Notes the counters at the window's end, once the workload's connections are closed
    /// (every backend has published its statistics); the closing checkpoint's buffers, which
    /// the checkpointer publishes itself, are in them.
    pub fn close(&mut self) {
        self.end = self.opened.counters();
    }

    fn checkpoint(&self, edge: &str) {
        if let Err(e) = self.opened.checkpoint() {
            eprintln!("bakeoff: warning: the checkpoint as the window {edge} failed: {e}");
        }
    }

    /// The window's deltas.
    pub fn window(&self) -> Option<DbCounters> {
        Some(self.end.as_ref()?.since(self.start.as_ref()?))
    }
}

/// What the run adds to the database section besides counters.
#[derive(Default)]
pub struct Extras {
    retries: BTreeMap<String, u64>,
    rollbacks: u64,
    skipped_districts: u64,
    pgbench: Option<PgbenchReport>,
    sysbench: Option<SysbenchReport>,
    /// In: TPC-C's client journals the New-Orders it saw acknowledged (`--crash-states`).
    pub journal: bool,
    /// Out: those New-Orders.
    pub acknowledged: Vec<bakeoff_db::tpcc::Ack>,
}

impl Extras {
    /// Writes them into the record's database section.
    pub fn apply(self, db: &mut DatabaseRun) {
        db.retries = self.retries;
        db.rollbacks = self.rollbacks;
        db.delivery_skipped_districts = self.skipped_districts;
        db.pgbench = self.pgbench;
        db.sysbench = self.sysbench;
    }
}

/// The body of the window for `plan`.
pub fn body<'b, 'o: 'b>(
    plan: &'b DbPlan,
    opened: &'b dyn ManagedDb,
    counters: &'b mut Counters<'o>,
    extras: &'b mut Extras,
    interrupt: &'b AtomicBool,
) -> Box<Body<'b>> {
    match &plan.work {
        DbWork::Tpcc { .. } => Box::new(move |on_tick| {
            let mut tp = tpcc_plan(plan).expect("a TPC-C plan");
            tp.journal = extras.journal;
            let on_tick = &mut |t: &Tick| {
                counters.on_tick(t);
                on_tick(t);
            };
            let db = opened.database();
            let costs = opened.warmup_costs();
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
            extras.acknowledged = run.acknowledged;
            Ok(run.output)
        }),
        DbWork::Tpch { .. } => Box::new(|_| {
            Err(database_error(
                "TPC-H runs as phases (dbrun/tpch.rs), not in a window",
            ))
        }),
        DbWork::Pgbench { .. } => Box::new(move |on_tick| {
            let on_tick = &mut |t: &Tick| {
                counters.on_tick(t);
                on_tick(t);
            };
            let out = super::external::pgbench_window(plan, opened, on_tick, interrupt);
            // pgbench has exited: its connections are closed.
            counters.close();
            let (out, printed) = out?;
            extras.pgbench = printed;
            Ok(out)
        }),
        DbWork::Sysbench { .. } => Box::new(move |on_tick| {
            let on_tick = &mut |t: &Tick| {
                counters.on_tick(t);
                on_tick(t);
            };
            let out = super::external::sysbench_window(plan, opened, on_tick, interrupt);
            // sysbench has exited: its connections are closed.
            counters.close();
            let (out, printed) = out?;
            extras.sysbench = printed;
            Ok(out)
        }),
    }
}

fn database_error(message: impl Into<String>) -> RunError {
    RunError::Database {
        what: "tpch".into(),
        message: message.into(),
    }
}
