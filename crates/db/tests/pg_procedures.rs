//! TPC-C's transactions as PL/pgSQL functions on a managed server (root and PostgreSQL; in CI
//! for real): a run with them completes all five kinds, rolls back about 1 % of New-Orders and
//! stays consistent; the load is the same with and without them; each function leaves the
//! database exactly as the client-side statements do; a deadlock inside a function is a
//! retryable conflict, and the deliberate rollback undoes the function's writes.

mod pg_common;
use bakeoff_core::plan::OpKind;
use bakeoff_db::postgres::PgDatabase;
use bakeoff_db::tpcc::inputs::{LineInput, Terminal, Transaction, UNUSED_ITEM};
use bakeoff_db::tpcc::transactions::{self, Outcome};
use bakeoff_db::tpcc::{self, check_consistency, procedures, Table, TpccPlan};
use bakeoff_db::{Conn, Database, ErrorKind, Value};
use bakeoff_testkit::shared;
use pg_common::*;
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

#[test]
fn procedures_complete_every_kind_roll_back_one_percent_and_stay_consistent() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(1024, 6);
    let db = Arc::new(server.database());
    let statements_load = tpcc::load(db.as_ref(), &plan(false)).unwrap();
    let procedures_load = tpcc::load(db.as_ref(), &plan(true)).unwrap();
    assert_eq!(statements_load.rows, procedures_load.rows);
    assert_eq!(procedures_load.rows[&Table::Stock], 100_000);
    let mut conn = db.connect().unwrap();
    let functions = "SELECT count(*) FROM pg_proc WHERE proname IN \
                     ('neword', 'payment', 'ostat', 'delivery', 'slev')";
    assert_eq!(int(conn.as_mut(), functions), 5);

    let run = tpcc::run(
        db.clone(),
        &plan(true),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let out = &run.output;
    assert!(out.error.is_none(), "{:?}", out.error);
    let ops = |kind| out.ops.iter().find(|o| o.kind == kind).map_or(0, |o| o.ops);
    for kind in tpcc::inputs::KINDS {
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
    let conditions = check_consistency(conn.as_mut()).unwrap();
    assert!(conditions.iter().all(|c| c.passed), "{conditions:?}");
    eprintln!(
        "TPC-C through functions: {:?}, {} rollbacks, retries {:?}",
        out.ops.iter().map(|o| (o.kind, o.ops)).collect::<Vec<_>>(),
        run.rollbacks,
        run.retries
    );
    drop(conn);
    stack.destroy().unwrap();
}

/// Every table's rows, digested in a stable order.
fn digests(db: &PgDatabase) -> Vec<(Table, Value)> {
    let mut conn = db.connect().unwrap();
    Table::ALL
        .iter()
        .map(|t| {
            let sql = format!(
                "SELECT md5(string_agg(r::text, E'\\n' ORDER BY r::text)) FROM {} r",
                t.name()
            );
            (*t, conn.query(&sql, &[]).unwrap().remove(0).remove(0))
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
fn each_function_leaves_the_database_as_the_statements_do() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(1536, 4);
    let statements_db = server.database();
    tpcc::load(&statements_db, &plan(true)).unwrap();
    // A copy of the same load, so both start from the same rows (dates included).
    let mut admin = statements_db.with_dbname("postgres").connect().unwrap();
    admin
        .batch("CREATE DATABASE functions TEMPLATE bakeoff")
        .unwrap();
    let functions_db = statements_db.with_dbname("functions");
    let (mut by_statements, mut by_functions) = (
        statements_db.connect().unwrap(),
        functions_db.connect().unwrap(),
    );
    let txs = transactions_with_a_rollback(21, 400);
    let mut kinds = std::collections::BTreeSet::new();
    for (n, tx) in txs.iter().enumerate() {
        let now_us = 1_700_000_000_000_000 + n as i64;
        let expected = transactions::execute(by_statements.as_mut(), tx, now_us).unwrap();
        let got = procedures::execute(by_functions.as_mut(), tx, now_us).unwrap();
        assert_eq!(got, expected, "transaction {n}: {tx:?}");
        kinds.insert((tx.kind(), got == Outcome::RolledBack));
    }
    assert_eq!(kinds.len(), 6, "every kind, and a rollback: {kinds:?}");
    drop((by_statements, by_functions));
    let (statements, functions) = (digests(&statements_db), digests(&functions_db));
    for (s, f) in statements.iter().zip(&functions) {
        assert_eq!(s, f, "table {:?} differs", s.0);
    }
    eprintln!("{} transactions, the same rows either way", txs.len());
    drop(admin);
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

#[test]
fn a_rollback_undoes_the_function_and_a_deadlock_in_it_is_retried() {
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

    // A holds stock item 5 and waits for district 1; the function holds district 1 and waits
    // for item 5. The function's side detects the deadlock first (its timeout is shorter).
    let mut holder = db.connect().unwrap();
    holder
        .batch("SET deadlock_timeout = '60s'; BEGIN; UPDATE stock SET s_ytd = s_ytd WHERE s_w_id = 1 AND s_i_id = 5")
        .unwrap();
    terminal.batch("SET deadlock_timeout = '200ms'").unwrap();
    let blocked = std::thread::spawn(move || {
        let result = procedures::execute(terminal.as_mut(), &new_order(&[5]), 2);
        (terminal, result)
    });
    let start = Instant::now();
    while int(
        watcher.as_mut(),
        "SELECT count(*) FROM pg_locks WHERE NOT granted",
    ) == 0
    {
        assert!(start.elapsed() < Duration::from_secs(30), "never blocked");
        std::thread::sleep(Duration::from_millis(20));
    }
    holder
        .batch("UPDATE district SET d_ytd = d_ytd WHERE d_w_id = 1 AND d_id = 1")
        .unwrap();
    let (mut terminal, result) = blocked.join().unwrap();
    let err = result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Retry, "{err}");
    assert!(err.message.contains("40P01"), "{err}");
    holder.batch("ROLLBACK").unwrap();
    assert_eq!(
        next_order(watcher.as_mut()),
        next,
        "the deadlocked call left nothing"
    );
    let again = procedures::execute(terminal.as_mut(), &new_order(&[5]), 3);
    assert!(matches!(again.unwrap(), Outcome::Ordered { .. }));
    assert_eq!(next_order(watcher.as_mut()), next + 1);

    // A serialization failure raised in a function is as retryable as one from a statement.
    terminal
        .batch(
            "CREATE FUNCTION conflict() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN \
             RAISE EXCEPTION 'forced' USING ERRCODE = 'serialization_failure'; END $$",
        )
        .unwrap();
    let err = terminal.query("SELECT conflict()", &[]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Retry, "{err}");
    drop((watcher, holder, terminal));
    stack.destroy().unwrap();
}
