//! TPC-C on SQLite in temporary directories: a 1-warehouse load passes the row-count check;
//! a short run completes all five transactions and leaves the database consistent; a
//! corrupted database fails condition 1; an open-loop run keeps its rate.

use bakeoff_core::plan::OpKind;
use bakeoff_db::sqlite::{JournalMode, Sqlite, SqliteOptions, Synchronous};
use bakeoff_db::tpcc::inputs::KINDS;
use bakeoff_db::tpcc::{self, check_consistency, check_row_counts, Table, TpccError, TpccPlan};
use bakeoff_db::{Database, Value};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn plan() -> TpccPlan {
    TpccPlan {
        warehouses: 1,
        terminals: 2,
        runtime: Duration::from_secs(3),
        ramp: Duration::from_millis(500),
        rate_tps: None,
        seed: 11,
        load_threads: 2,
        procedures: false,
        journal: false,
    }
}

fn wal(path: &Path) -> Arc<Sqlite> {
    let o = SqliteOptions {
        journal_mode: Some(JournalMode::Wal),
        synchronous: Some(Synchronous::Normal),
        ..SqliteOptions::default()
    };
    Arc::new(Sqlite::open(path, o).unwrap())
}

/// A freshly loaded 1-warehouse database in `dir`.
fn loaded(dir: &Path) -> Arc<Sqlite> {
    let db = wal(&dir.join("tpcc.db"));
    let started = Instant::now();
    let report = tpcc::load(db.as_ref(), &plan()).unwrap();
    eprintln!("loaded 1 warehouse in {:?}: {report:?}", started.elapsed());
    assert_eq!(report.rows[&Table::Stock], 100_000);
    assert_eq!(report.rows[&Table::Customer], 30_000);
    db
}

#[test]
fn a_short_run_completes_every_transaction_and_stays_consistent() {
    let _turn = bakeoff_testkit::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let mut conn = db.connect().unwrap();
    let counts = check_row_counts(conn.as_mut(), 1).unwrap();
    assert_eq!(counts[&Table::NewOrder], 9_000);
    let mut ticks = 0;
    let before = db.cache_counters();
    let run = tpcc::run(db.clone(), &plan(), &AtomicBool::new(false), &mut |_| {
        ticks += 1
    })
    .unwrap();
    let cache = db.cache_counters().since(&before);
    let out = &run.output;
    assert!(out.error.is_none(), "{:?}", out.error);
    assert!(
        out.measured >= Duration::from_millis(2900),
        "{:?}",
        out.measured
    );
    assert!(ticks >= 4, "ticks {ticks}");
    for kind in KINDS {
        let ops = out
            .ops
            .iter()
            .find(|o| o.kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?}"));
        assert!(ops.ops > 0 && ops.lat.is_some(), "{kind:?}: {ops:?}");
    }
    let new_orders = out
        .ops
        .iter()
        .find(|o| o.kind == OpKind::NewOrder)
        .unwrap()
        .ops;
    let nopm = new_orders as f64 * 60.0 / out.measured.as_secs_f64();
    let all: u64 = out.ops.iter().map(|o| o.ops).sum();
    eprintln!(
        "NOPM {nopm:.0}, TPM {:.0}, retries {:?}, rollbacks {}, cache {cache:?}",
        all as f64 * 60.0 / out.measured.as_secs_f64(),
        run.retries,
        run.rollbacks
    );
    assert!(nopm > 0.0);
    assert!(cache.hits > 0, "{cache:?}");
    // New-Orders are about 45 % of the mix.
    let share = new_orders as f64 / all as f64;
    assert!((0.35..0.55).contains(&share), "New-Order share {share}");
    assert_eq!(run.retries.len(), 5);
    // The orders the run made are in the tables.
    let orders = conn.query("SELECT count(*) FROM orders", &[]).unwrap()[0][0]
        .int()
        .unwrap();
    assert!(orders > 30_000, "{orders} orders");
    let results = check_consistency(conn.as_mut()).unwrap();
    assert_eq!(
        results.iter().map(|r| r.number).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    for r in &results {
        assert!(
            r.passed,
            "condition {} ({}) failed at {:?}",
            r.number, r.name, r.offender
        );
    }
}

#[test]
fn a_corrupted_database_fails_its_checks_naming_the_place() {
    let _turn = bakeoff_testkit::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let mut conn = db.connect().unwrap();
    assert!(check_consistency(conn.as_mut())
        .unwrap()
        .iter()
        .all(|r| r.passed));
    conn.execute(
        "UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3",
        &[Value::Int(100), Value::Int(1), Value::Int(4)],
    )
    .unwrap();
    let results = check_consistency(conn.as_mut()).unwrap();
    let one = &results[0];
    assert!(!one.passed);
    let offender = one.offender.as_deref().unwrap();
    assert!(offender.starts_with("warehouse 1:"), "{offender}");
    assert!(
        offender.contains("30000000") && offender.contains("30000100"),
        "{offender}"
    );
    assert!(results[1..].iter().all(|r| r.passed), "{results:?}");
    // A missing row fails the count check with table, expectation and finding.
    conn.execute("DELETE FROM customer WHERE c_id = $1", &[Value::Int(77)])
        .unwrap();
    match check_row_counts(conn.as_mut(), 1) {
        Err(e @ TpccError::RowCount { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("customer has 29990 rows") && msg.contains("need 30000"),
                "{msg}"
            );
        }
        other => panic!("expected a row-count error, got {other:?}"),
    }
}

#[test]
fn an_open_loop_run_keeps_its_rate_and_busy_conflicts_are_retried() {
    let _turn = bakeoff_testkit::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let paced = TpccPlan {
        rate_tps: Some(40.0),
        ..plan()
    };
    let run = tpcc::run(db.clone(), &paced, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let out = &run.output;
    assert!(out.error.is_none(), "{:?}", out.error);
    let all: u64 = out.ops.iter().map(|o| o.ops).sum();
    let rate = all as f64 / out.measured.as_secs_f64();
    eprintln!(
        "paced at 40 tps: {rate:.2} tps ({all} in {:?})",
        out.measured
    );
    assert!(
        (rate / 40.0 - 1.0).abs() < 0.10,
        "{rate:.1} tps for 40 asked ({all} in {:?})",
        out.measured
    );
    assert!(
        out.ops.iter().all(|o| o.service.is_some()),
        "open loop keeps service times"
    );

    // Without a busy timeout, terminals collide on SQLite's write lock: every collision is
    // rolled back and retried, and the database stays consistent.
    let mut o = db.options().clone();
    o.busy_timeout_ms = 0;
    let impatient: Arc<Sqlite> = Arc::new(Sqlite::open(db.path(), o).unwrap());
    let crowded = TpccPlan {
        terminals: 4,
        runtime: Duration::from_secs(2),
        ..plan()
    };
    let run = tpcc::run(
        impatient.clone(),
        &crowded,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert!(run.output.error.is_none(), "{:?}", run.output.error);
    let retries: u64 = run.retries.values().sum();
    eprintln!("busy_timeout 0, 4 terminals: retries {:?}", run.retries);
    assert!(retries > 0, "{:?}", run.retries);
    let mut conn = impatient.connect().unwrap();
    assert!(check_consistency(conn.as_mut())
        .unwrap()
        .iter()
        .all(|r| r.passed));
}

#[test]
fn a_database_error_ends_the_run_naming_the_transaction_and_bad_plans_are_refused() {
    let _turn = bakeoff_testkit::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = wal(&dir.path().join("empty.db"));
    let mut conn = db.connect().unwrap();
    conn.batch(&tpcc::schema::create_tables(
        db.kind(),
        tpcc::schema::KeysAt::Create,
    ))
    .unwrap();
    let run = tpcc::run(db.clone(), &plan(), &AtomicBool::new(false), &mut |_| {}).unwrap();
    let err = run
        .output
        .error
        .expect("an empty database cannot run TPC-C")
        .to_string();
    assert!(
        err.contains("on terminal") && err.contains("load it again"),
        "{err}"
    );
    assert!(
        run.output.measured < Duration::from_secs(1),
        "{:?}",
        run.output.measured
    );
    let bad = TpccPlan {
        terminals: 0,
        ..plan()
    };
    let err = tpcc::run(db.clone(), &bad, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("terminals must be at least 1"),
        "{err}"
    );
    // SQLite has no stored procedures: neither a load nor a run takes them.
    let procedures = TpccPlan {
        procedures: true,
        ..plan()
    };
    let err = tpcc::load(db.as_ref(), &procedures).unwrap_err();
    assert!(
        err.to_string().contains("procedures=true needs PostgreSQL"),
        "{err}"
    );
    let err = tpcc::run(db, &procedures, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("procedures=true needs PostgreSQL"),
        "{err}"
    );
}

#[test]
fn a_delivery_counts_the_districts_it_had_nothing_to_deliver_in() {
    let _turn = bakeoff_testkit::shared();
    use bakeoff_db::tpcc::inputs::Transaction;
    use bakeoff_db::tpcc::transactions::{self, Outcome};
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let mut conn = db.connect().unwrap();
    let delivery = Transaction::Delivery {
        w_id: 1,
        carrier_id: 3,
    };
    let first = transactions::execute(conn.as_mut(), &delivery, 1).unwrap();
    assert_eq!(first, Outcome::Delivered { skipped: 0 });
    // Districts 2 and 5 with nothing left to deliver: skipped, and said so.
    conn.execute(
        "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id IN (2, 5)",
        &[],
    )
    .unwrap();
    let second = transactions::execute(conn.as_mut(), &delivery, 2).unwrap();
    assert_eq!(second, Outcome::Delivered { skipped: 2 });
    assert_eq!(second.skipped_districts(), 2);
    assert_eq!(Outcome::Committed.skipped_districts(), 0);
}

/// The journal holds every New-Order the terminals saw committed, each found in the database;
/// orders removed afterwards (as a crash that lost them would) are counted as lost, and only
/// those acknowledged before the crash point are looked for.
#[test]
fn the_journal_finds_every_acknowledged_new_order_and_counts_the_missing() {
    let _turn = bakeoff_testkit::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let journaled = TpccPlan {
        journal: true,
        runtime: Duration::from_secs(2),
        ..plan()
    };
    let run = tpcc::run(db.clone(), &journaled, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(run.output.error.is_none(), "{:?}", run.output.error);
    let acks = &run.acknowledged;
    let in_window = run
        .output
        .ops
        .iter()
        .find(|o| o.kind == OpKind::NewOrder)
        .unwrap()
        .ops;
    // Every committed New-Order of the window is in the journal (and those of the ramp).
    assert!(
        acks.len() as u64 >= in_window - run.rollbacks,
        "{} < {in_window}",
        acks.len()
    );
    assert!(acks.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
    let mut conn = db.connect().unwrap();
    let all = tpcc::lost_commits(conn.as_mut(), acks, u64::MAX).unwrap();
    assert_eq!(
        (all.checked, all.lost, all.first_lost),
        (acks.len() as u64, 0, None)
    );

    // Lose the last three acknowledged orders.
    let lost = &acks[acks.len() - 3..];
    for a in lost {
        let gone = conn
            .execute(
                "DELETE FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3",
                &[Value::Int(a.w_id), Value::Int(a.d_id), Value::Int(a.o_id)],
            )
            .unwrap();
        assert_eq!(gone, 1, "{a:?}");
    }
    let found = tpcc::lost_commits(conn.as_mut(), acks, u64::MAX).unwrap();
    assert_eq!((found.lost, found.first_lost), (3, Some(lost[0])));
    // A crash before they were acknowledged did not lose them: they were never promised.
    let before = tpcc::lost_commits(conn.as_mut(), acks, lost[0].at_ns - 1).unwrap();
    assert_eq!((before.checked, before.lost), (acks.len() as u64 - 3, 0));
}
