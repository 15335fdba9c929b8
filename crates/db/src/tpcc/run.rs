//! A TPC-C run: one harness thread per terminal, each with its own connection, drawing
//! transactions from its deck back to back (closed loop) or on a fixed schedule (open loop
//! under `rate_tps`), retrying conflicts and counting retries and rollbacks.

use super::acknowledged::{monotonic_ns, Ack};
use super::inputs::{Terminal, Transaction, KINDS};
use super::procedures;
use super::transactions::{self, Outcome};
use super::TpccPlan;
use crate::backend::{Conn, Database, DbError, ErrorKind};
use bakeoff_core::plan::OpKind;
use bakeoff_core::steady::AutoRamp;
use bakeoff_engine::harness::{self, Body, Costs, RoleDesc, RunOutput, ThreadSpec, Tick, Timing};
use bakeoff_engine::shared::{RunError, Shared};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a TPC-C run produced.
#[derive(Debug)]
pub struct TpccRun {
    /// The harness's output: per kind, completed transactions in the window and latencies.
    pub output: RunOutput,
    /// Conflicts (serialization failures, deadlocks, busy databases) rolled back and retried
    /// in the window, per kind; a retried transaction counts once as completed.
    pub retries: BTreeMap<OpKind, u64>,
    /// New-Orders rolled back on purpose in the window (they count as completed too).
    pub rollbacks: u64,
    /// Districts the window's Deliveries skipped: no undelivered order left, or another
    /// terminal took the oldest first (of 10 per Delivery).
    pub delivery_skipped_districts: u64,
    /// Under `TpccPlan::journal`: every New-Order whose commit returned, in or out of the
    /// window, in the order they were acknowledged; empty otherwise.
    pub acknowledged: Vec<Ack>,
}

/// Retries, rollbacks and skipped Delivery districts over all terminals.
#[derive(Default)]
struct Counts {
    retries: [AtomicU64; KINDS.len()],
    rollbacks: AtomicU64,
    skipped_districts: AtomicU64,
}

fn kind_slot(kind: OpKind) -> usize {
    KINDS.iter().position(|k| *k == kind).unwrap_or(0)
}

/// How a terminal runs one transaction: statement by statement, or one function call.
type Execute = fn(&mut dyn Conn, &Transaction, i64) -> Result<Outcome, DbError>;

/// What every terminal shares.
struct Setup {
    db: Arc<dyn Database>,
    plan: TpccPlan,
    counts: Arc<Counts>,
    execute: Execute,
    /// The terminals' journals, each added when its terminal ends.
    acknowledged: Mutex<Vec<Ack>>,
}

/// Runs `plan` against `db` (loaded with the plan's warehouses and seed). A database error
/// that is not a conflict ends the run: it is in `output.error`.
pub fn run(
    db: Arc<dyn Database>,
    plan: &TpccPlan,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<TpccRun, RunError> {
    run_warming(db, plan, None, None, interrupt, on_tick)
}

/// [`run`] with an automatic warm-up (`auto`, in place of the plan's fixed ramp) that also
/// waits for `costs` (the database's WAL bytes and full-page images) to be steady per
/// transaction. Every terminal's connection is closed when this returns.
pub fn run_warming(
    db: Arc<dyn Database>,
    plan: &TpccPlan,
    auto: Option<AutoRamp>,
    costs: Option<Costs<'_>>,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<TpccRun, RunError> {
    plan.validate_for(db.kind())
        .map_err(|e| RunError::Database {
            what: "TPC-C plan".into(),
            message: e.to_string(),
        })?;
    let counts = Arc::new(Counts::default());
    let setup = Arc::new(Setup {
        db,
        plan: plan.clone(),
        counts: counts.clone(),
        execute: if plan.procedures {
            procedures::execute
        } else {
            transactions::execute
        },
        acknowledged: Mutex::new(Vec::new()),
    });
    let shared = Arc::new(Shared::new());
    let roles = [RoleDesc {
        name: "terminal".into(),
        threads: plan.terminals,
        log_writer: false,
    }];
    let timing = Timing {
        auto,
        costs,
        ..Timing::fixed(plan.ramp, plan.runtime)
    };
    let mut specs = (0..plan.terminals).map(|t| {
        Ok(ThreadSpec {
            role: 0,
            name: format!("terminal-{t}"),
            kinds: KINDS.to_vec(),
            open_loop: plan.rate_tps.is_some(),
            body: terminal_body(t, setup.clone()),
        })
    });
    let output = harness::run(&shared, timing, &roles, &mut specs, interrupt, on_tick)?;
    let retries = KINDS
        .iter()
        .map(|k| (*k, counts.retries[kind_slot(*k)].load(Ordering::Relaxed)))
        .collect();
    let mut acknowledged = std::mem::take(&mut *lock(&setup.acknowledged));
    acknowledged.sort_by_key(|a| a.at_ns);
    Ok(TpccRun {
        output,
        acknowledged,
        retries,
        rollbacks: counts.rollbacks.load(Ordering::Relaxed),
        delivery_skipped_districts: counts.skipped_districts.load(Ordering::Relaxed),
    })
}

/// The journal, also when a terminal panicked holding it (its entries are still true).
fn lock(journal: &Mutex<Vec<Ack>>) -> std::sync::MutexGuard<'_, Vec<Ack>> {
    journal
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// Sleeps until the run's clock reads `t_ns` or the run ends.
fn sleep_until(shared: &Shared, t_ns: u64) {
    loop {
        let now = shared.now_ns();
        if now >= t_ns || shared.stopped() {
            return;
        }
        std::thread::sleep(Duration::from_nanos((t_ns - now).min(20_000_000)));
    }
}

fn terminal_body(index: u32, setup: Arc<Setup>) -> Body {
    Box::new(move |shared, mut stats, mut ready| {
        let fail = |what: &str, e: DbError| RunError::Database {
            what: format!("TPC-C {what} on terminal {index}"),
            message: e.message,
        };
        let mut conn = match setup.db.connect() {
            Ok(c) => c,
            Err(e) => {
                shared.fail(fail("connecting", e));
                return stats;
            }
        };
        ready.go();
        let plan = &setup.plan;
        let mut terminal = Terminal::new(index, plan.warehouses, plan.seed);
        // Each terminal's share of the rate, on a fixed schedule from the start.
        let interval_ns = plan
            .rate_tps
            .map_or(0, |r| (f64::from(plan.terminals) * 1e9 / r) as u64);
        let mut next_ns = shared.now_ns();
        let mut journal = Vec::new();
        while !shared.stopped() {
            let scheduled = if interval_ns > 0 {
                sleep_until(shared, next_ns);
                next_ns += interval_ns;
                next_ns - interval_ns
            } else {
                shared.now_ns()
            };
            if shared.stopped() {
                break;
            }
            let tx = terminal.next_transaction();
            let start = shared.now_ns().max(scheduled);
            match attempt(conn.as_mut(), &tx, shared, &setup) {
                Ok(Some(outcome)) => {
                    let end = shared.now_ns();
                    if let (
                        true,
                        Outcome::Ordered { o_id },
                        Transaction::NewOrder { w_id, d_id, .. },
                    ) = (plan.journal, outcome, &tx)
                    {
                        let at_ns = monotonic_ns();
                        journal.push(Ack {
                            w_id: *w_id,
                            d_id: *d_id,
                            o_id,
                            at_ns,
                        });
                    }
                    let measured = shared.in_window(end);
                    stats.record(tx.kind(), 0, end - scheduled, end - start, measured);
                    if measured && outcome == Outcome::RolledBack {
                        setup.counts.rollbacks.fetch_add(1, Ordering::Relaxed);
                    }
                    let skipped = u64::from(outcome.skipped_districts());
                    if measured && skipped > 0 {
                        (setup.counts.skipped_districts).fetch_add(skipped, Ordering::Relaxed);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    shared.fail(fail(kind_name(tx.kind()), e));
                    break;
                }
            }
        }
        lock(&setup.acknowledged).append(&mut journal);
        stats
    })
}

fn kind_name(kind: OpKind) -> &'static str {
    match kind {
        OpKind::NewOrder => "New-Order",
        OpKind::Payment => "Payment",
        OpKind::OrderStatus => "Order-Status",
        OpKind::Delivery => "Delivery",
        _ => "Stock-Level",
    }
}

/// Runs `tx` until it completes, retrying conflicts (counted if in the window); `None` if
/// the run ended while it was being retried.
fn attempt(
    conn: &mut dyn Conn,
    tx: &Transaction,
    shared: &Shared,
    setup: &Setup,
) -> Result<Option<Outcome>, DbError> {
    loop {
        match (setup.execute)(conn, tx, now_us()) {
            Ok(outcome) => return Ok(Some(outcome)),
            Err(e) if e.kind == ErrorKind::Retry => {
                if shared.in_window(shared.now_ns()) {
                    setup.counts.retries[kind_slot(tx.kind())].fetch_add(1, Ordering::Relaxed);
                }
                if shared.stopped() {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e),
        }
    }
}
