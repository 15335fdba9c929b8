//! TPC-C on a managed MariaDB server (root and MariaDB; in CI for real): a 1-warehouse load
//! with the row counts of clause 4.3.3.1, short runs of all five transactions with 4 terminals
//! sent statement by statement, as stored procedures and open-loop at 40 tps, each consistent
//! afterwards; each procedure leaves the database exactly as the client-side statements do; a
//! procedure's rollback (the unused item, a lock-wait timeout) leaves nothing and a deadlock
//! inside one is a retryable conflict.

mod my_common;
use bakeoff_core::plan::OpKind;
use bakeoff_db::mariadb::{MyDatabase, MyServer};
use bakeoff_db::tpcc::inputs::{LineInput, Terminal, Transaction, KINDS, UNUSED_ITEM};
use bakeoff_db::tpcc::transactions::{self, Outcome};
use bakeoff_db::tpcc::{self, check_consistency, procedures, Table, TpccPlan, TpccRun};
use bakeoff_db::{Conn, Database, Db, ErrorKind, Value};
use bakeoff_testkit::shared;
use my_common::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn plan(procedures: bool) -> TpccPlan {
    TpccPlan {
        warehouses: 1,
        terminals: 4,
        runtime: Duration::from_secs(4),
        ramp: Duration::from_millis(500),
        rate_tps: None,
        seed: 21,
        load_threads: 2,
        procedures,
        journal: false,
    }
}

/// The single integer `sql` returns.
fn int(conn: &mut dyn Conn, sql: &str) -> i64 {
    let rows = conn.query(sql, &[]).unwrap();
    match rows.first().and_then(|r| r.first()) {
        Some(Value::Int(n)) => *n,
        other => panic!("{sql}: {other:?}"),
    }
}

/// Runs `plan` and checks what every run must show: no error, every kind completed, about
/// 1 % of New-Orders rolled back, the database consistent.
fn run_and_check(server: &MyServer, plan: &TpccPlan) -> TpccRun {
    let db = Arc::new(server.database());
    let before = server.stats().unwrap();
    let run = tpcc::run(db.clone(), plan, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let out = &run.output;
    assert!(out.error.is_none(), "{:?}", out.error);
    let ops = |kind| out.ops.iter().find(|o| o.kind == kind).map_or(0, |o| o.ops);
    for kind in KINDS {
        assert!(ops(kind) > 0, "no {kind:?}: {:?}", out.ops);
    }
    // Each New-Order rolls back with probability 1 %: within four standard deviations.
    let new_orders = ops(OpKind::NewOrder) as f64;
    let expected = 0.01 * new_orders;
    let spread = 4.0 * (expected * 0.99).sqrt() + 2.0;
    assert!(
        (run.rollbacks as f64 - expected).abs() <= spread,
        "{} rollbacks of {new_orders} New-Orders",
        run.rollbacks
    );
    let mut conn = db.connect().unwrap();
    let conditions = check_consistency(conn.as_mut()).unwrap();
    assert!(conditions.iter().all(|c| c.passed), "{conditions:?}");
    let used = server.stats().unwrap().since(&before);
    let commits = used.com_commit.unwrap();
    assert!(commits as f64 >= 0.99 * new_orders, "{used:?}");
    assert!(used.os_log_written.unwrap() > 0, "{used:?}");
    let window = plan.runtime.as_secs_f64() / 60.0;
    eprintln!(
        "TPC-C on MariaDB (procedures={}): {:?}; NOPM {:.0}, TPM {:.0}, {} rollbacks, \
         retries {:?}, {} Delivery districts skipped; {commits} COMMITs",
        plan.procedures,
        out.ops.iter().map(|o| (o.kind, o.ops)).collect::<Vec<_>>(),
        new_orders / window,
        out.ops.iter().map(|o| o.ops).sum::<u64>() as f64 / window,
        run.rollbacks,
        run.retries,
        run.delivery_skipped_districts,
    );
    run
}

#[test]
fn tpcc_loads_runs_by_statements_and_by_procedures_and_stays_consistent() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(1024, 6);
    let db = server.database();
    let start = Instant::now();
    let report = tpcc::load(&db, &plan(true)).unwrap();
    eprintln!(
        "loaded in {:.1} s: {:?}",
        start.elapsed().as_secs_f64(),
        report.rows
    );
    let expected = [
        (Table::Item, 100_000),
        (Table::Warehouse, 1),
        (Table::District, 10),
        (Table::Customer, 30_000),
        (Table::History, 30_000),
        (Table::Orders, 30_000),
        (Table::NewOrder, 9_000),
        (Table::Stock, 100_000),
    ];
    for (table, rows) in expected {
        assert_eq!(report.rows[&table], rows, "{table:?}");
    }
    let lines = report.rows[&Table::OrderLine];
    assert!((150_000..=450_000).contains(&lines), "{lines} order lines");
    let mut conn = db.connect().unwrap();
    let procedures = "SELECT count(*) FROM information_schema.routines \
                      WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' \
                      AND routine_name IN ('neword', 'payment', 'ostat', 'delivery', 'slev')";
    assert_eq!(int(conn.as_mut(), procedures), 5);
    let isolation = conn.query("SELECT @@tx_isolation", &[]).unwrap();
    assert_eq!(isolation[0][0], Value::from("REPEATABLE-READ"));
    drop(conn);

    let by_statements = run_and_check(&server, &plan(false));
    let by_procedures = run_and_check(&server, &plan(true));
    let new_orders = |run: &TpccRun| {
        let o = run.output.ops.iter().find(|o| o.kind == OpKind::NewOrder);
        o.map_or(0, |o| o.ops)
    };
    assert!(new_orders(&by_statements) > 0 && new_orders(&by_procedures) > 0);

    // Open loop, as on PostgreSQL and SQLite: the terminals keep the offered rate, and each
    // transaction's service time is kept beside its latency from its scheduled start.
    let paced = run_and_check(
        &server,
        &TpccPlan {
            rate_tps: Some(40.0),
            ..plan(true)
        },
    );
    let all: u64 = paced.output.ops.iter().map(|o| o.ops).sum();
    let rate = all as f64 / paced.output.measured.as_secs_f64();
    eprintln!(
        "paced at 40 tps: {rate:.2} tps ({all} in {:?})",
        paced.output.measured
    );
    assert!(
        (rate / 40.0 - 1.0).abs() < 0.10,
        "{rate:.1} tps for 40 asked"
    );
    assert!(
        paced.output.ops.iter().all(|o| o.service.is_some()),
        "open loop keeps service times"
    );
    stack.destroy().unwrap();
}

/// Every table's checksum (`CHECKSUM TABLE`: of the rows' contents).
fn checksums(db: &MyDatabase) -> Vec<(Table, Option<String>)> {
    let mut conn = db.connect_my().unwrap();
    Table::ALL
        .iter()
        .map(|t| {
            let rows = conn
                .text_rows(&format!("CHECKSUM TABLE {}", t.name()))
                .unwrap();
            (*t, rows[0][1].clone())
        })
        .collect()
}

/// Transactions of terminal 0 until there are `at_least` and one of them rolls back.
fn transactions_with_a_rollback(seed: u64, at_least: usize) -> Vec<Transaction> {
    let mut terminal = Terminal::new(0, 1, seed);
    let rolls_back = |tx: &Transaction| match tx {
        Transaction::NewOrder { lines, .. } => lines.iter().any(|l| l.item == UNUSED_ITEM),
        _ => false,
    };
    let mut txs: Vec<Transaction> = Vec::new();
    while txs.len() < at_least || !txs.iter().any(rolls_back) {
        txs.push(terminal.next_transaction());
    }
    txs
}

#[test]
fn each_procedure_leaves_the_database_as_the_statements_do() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(1536, 4);
    let statements_db = server.database();
    tpcc::load(&statements_db, &plan(true)).unwrap();
    // A copy of the same load, so both start from the same rows (dates included).
    let mut admin = statements_db.connect().unwrap();
    admin.batch("CREATE DATABASE procedures").unwrap();
    for t in Table::ALL.map(Table::name) {
        admin
            .batch(&format!(
                "CREATE TABLE procedures.{t} LIKE {t}; \
                 INSERT INTO procedures.{t} SELECT * FROM {t}"
            ))
            .unwrap();
    }
    let procedures_db = MyDatabase::new(&server.socket(), "procedures");
    let mut by_procedures = procedures_db.connect().unwrap();
    let definitions = procedures::create_functions(Db::Mariadb).unwrap();
    by_procedures.batch(definitions).unwrap();
    let mut by_statements = statements_db.connect().unwrap();
    let txs = transactions_with_a_rollback(21, 400);
    let mut kinds = std::collections::BTreeSet::new();
    for (n, tx) in txs.iter().enumerate() {
        let now_us = 1_700_000_000_000_000 + n as i64;
        let expected = transactions::execute(by_statements.as_mut(), tx, now_us).unwrap();
        let got = procedures::execute(by_procedures.as_mut(), tx, now_us).unwrap();
        assert_eq!(got, expected, "transaction {n}: {tx:?}");
        kinds.insert((tx.kind(), got == Outcome::RolledBack));
    }
    assert_eq!(kinds.len(), 6, "every kind, and a rollback: {kinds:?}");
    drop((by_statements, by_procedures, admin));
    let (statements, procedures) = (checksums(&statements_db), checksums(&procedures_db));
    for (s, p) in statements.iter().zip(&procedures) {
        assert!(s.1.is_some(), "{s:?}");
        assert_eq!(s, p, "table {:?} differs", s.0);
    }
    eprintln!("{} transactions, the same rows either way", txs.len());
    stack.destroy().unwrap();
}

/// District 1's next order number.
fn next_order(conn: &mut dyn Conn) -> i64 {
    int(
        conn,
        "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1",
    )
}

fn new_order(items: &[i64]) -> Transaction {
    Transaction::NewOrder {
        w_id: 1,
        d_id: 1,
        c_id: 7,
        lines: items
            .iter()
            .map(|&item| LineInput {
                item,
                supply_w_id: 1,
                quantity: 3,
            })
            .collect(),
    }
}

/// Waits until a transaction of the server waits for a lock (`call`, still running, the one
/// expected to).
fn wait_blocked<T>(watcher: &mut dyn Conn, call: &std::thread::JoinHandle<T>) {
    let waiting = "SELECT count(*) FROM information_schema.innodb_trx \
                   WHERE trx_state = 'LOCK WAIT'";
    let start = Instant::now();
    while int(watcher, waiting) == 0 {
        assert!(!call.is_finished(), "the call ended without waiting");
        assert!(start.elapsed() < Duration::from_secs(30), "never blocked");
        // InnoDB refreshes the table's cache only when it was not read for 100 ms: polled
        // faster, it would show the first reading forever.
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_procedure_rolls_back_whole_and_its_conflicts_are_retryable() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(1024, 4);
    let db = server.database();
    tpcc::load(&db, &plan(true)).unwrap();
    let mut watcher = db.connect().unwrap();
    let mut terminal = db.connect().unwrap();
    let count = "SELECT count(*) FROM order_line";
    let (next, lines) = (next_order(watcher.as_mut()), int(watcher.as_mut(), count));

    // The unused item on the last line: the lines before it are undone with the order.
    let outcome = procedures::execute(terminal.as_mut(), &new_order(&[5, 6, UNUSED_ITEM]), 1);
    assert_eq!(outcome.unwrap(), Outcome::RolledBack);
    assert_eq!(next_order(watcher.as_mut()), next);
    assert_eq!(int(watcher.as_mut(), count), lines);

    // A lock-wait timeout: InnoDB undoes only the statement that waited; the procedure's
    // handler undoes the rest (the district's next order number, the order).
    let mut holder = db.connect().unwrap();
    let lock_item_5 = "BEGIN; UPDATE stock SET s_ytd = s_ytd + 1 WHERE s_w_id = 1 AND s_i_id = 5";
    holder.batch(lock_item_5).unwrap();
    terminal
        .batch("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    let err = procedures::execute(terminal.as_mut(), &new_order(&[5]), 2).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Retry, "{err}");
    assert!(err.message.contains("ERROR 1205"), "{err}");
    assert_eq!(
        next_order(watcher.as_mut()),
        next,
        "the timed-out call left nothing"
    );
    holder.batch("ROLLBACK").unwrap();

    // A deadlock: the holder changes 300 stock rows (item 5 among them), the procedure takes
    // district 1 and waits for item 5, the holder asks for district 1. InnoDB rolls back the
    // transaction that changed fewer rows: the procedure's.
    holder
        .batch("BEGIN; UPDATE stock SET s_ytd = s_ytd + 1 WHERE s_w_id = 1 AND s_i_id <= 300")
        .unwrap();
    terminal
        .batch("SET SESSION innodb_lock_wait_timeout = 50")
        .unwrap();
    let blocked = std::thread::spawn(move || {
        let result = procedures::execute(terminal.as_mut(), &new_order(&[5]), 3);
        (terminal, result)
    });
    wait_blocked(watcher.as_mut(), &blocked);
    holder
        .batch("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 1")
        .unwrap();
    let (mut terminal, result) = blocked.join().unwrap();
    let err = result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Retry, "{err}");
    assert!(err.message.contains("ERROR 1213"), "{err}");
    holder.batch("ROLLBACK").unwrap();
    assert_eq!(
        next_order(watcher.as_mut()),
        next,
        "the deadlocked call left nothing"
    );
    let again = procedures::execute(terminal.as_mut(), &new_order(&[5]), 4);
    assert!(matches!(again.unwrap(), Outcome::Ordered { .. }));
    assert_eq!(next_order(watcher.as_mut()), next + 1);
    let conditions = check_consistency(watcher.as_mut()).unwrap();
    assert!(conditions.iter().all(|c| c.passed), "{conditions:?}");
    drop((watcher, holder, terminal));
    stack.destroy().unwrap();
}
