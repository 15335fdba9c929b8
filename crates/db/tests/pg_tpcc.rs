//! TPC-C on a managed PostgreSQL server: a 1-warehouse load through COPY, a short run of all
//! five transactions sent statement by statement (`procedures: false`; the functions are
//! tested in `pg_procedures.rs`), and the consistency conditions after it (root and
//! PostgreSQL; in CI for real).

mod pg_common;
use bakeoff_db::tpcc::inputs::KINDS;
use bakeoff_db::tpcc::{self, check_consistency, check_row_counts, Table, TpccPlan};
use bakeoff_db::Database;
use bakeoff_testkit::shared;
use pg_common::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn tpcc_loads_runs_and_stays_consistent_on_a_managed_server() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(1024, 4);
    let plan = TpccPlan {
        warehouses: 1,
        terminals: 2,
        runtime: Duration::from_secs(3),
        ramp: Duration::from_millis(500),
        rate_tps: None,
        seed: 5,
        load_threads: 2,
        procedures: false,
        journal: false,
    };
    let db = Arc::new(server.database());
    let report = tpcc::load(db.as_ref(), &plan).unwrap();
    assert_eq!(report.rows[&Table::Stock], 100_000);
    let mut conn = db.connect().unwrap();
    assert_eq!(
        check_row_counts(conn.as_mut(), 1).unwrap()[&Table::NewOrder],
        9_000
    );
    let before = server.stats().unwrap();
    let run = tpcc::run(db.clone(), &plan, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let out = &run.output;
    assert!(out.error.is_none(), "{:?}", out.error);
    for kind in KINDS {
        let ops = out.ops.iter().find(|o| o.kind == kind);
        assert!(ops.is_some_and(|o| o.ops > 0), "no {kind:?}: {:?}", out.ops);
    }
    let conditions = check_consistency(conn.as_mut()).unwrap();
    assert!(conditions.iter().all(|c| c.passed), "{conditions:?}");
    drop(conn);
    let used = server.stats().unwrap().since(&before);
    assert!(used.xact_commit > 0 && used.wal_bytes > 0, "{used:?}");
    eprintln!(
        "TPC-C on PostgreSQL: {:?}; server counted {used:?}",
        out.ops.iter().map(|o| (o.kind, o.ops)).collect::<Vec<_>>()
    );
    stack.destroy().unwrap();
}
