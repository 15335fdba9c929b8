//! TPC-H at SF 0.01 on SQLite in temporary directories: every phase runs and says what it
//! did, the row counts are TPC-H's, the 22 queries answer (Q1 and Q6 as the generator's rows
//! say they must); a wrong count, an orphan row, a failing query and a raised stop flag are
//! errors that name what went wrong.

use bakeoff_db::sqlite::{JournalMode, Sqlite, SqliteOptions, Synchronous};
use bakeoff_db::tpch::queries::QUERIES;
use bakeoff_db::tpch::rows::expected_rows;
use bakeoff_db::tpch::rows::rows;
use bakeoff_db::tpch::{Phase, Table, Tpch, TpchError, TpchPlan};
use bakeoff_db::{Database, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;
use std::time::Instant;
use tempfile::TempDir;

const PLAN: TpchPlan = TpchPlan {
    sf: 0.01,
    load_threads: 2,
};

fn open(dir: &Path) -> Sqlite {
    let options = SqliteOptions {
        journal_mode: Some(JournalMode::Wal),
        synchronous: Some(Synchronous::Normal),
        ..SqliteOptions::default()
    };
    Sqlite::open(&dir.join("tpch.db"), options).unwrap()
}

/// A database with the schema and the data, nothing else.
fn loaded() -> (TempDir, Sqlite) {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let tpch = Tpch::new(&db, PLAN).unwrap();
    tpch.create_schema().unwrap();
    tpch.load(&AtomicBool::new(false)).unwrap();
    (dir, db)
}

/// One database every phase ran on, shared by the tests that only read it.
fn ready() -> &'static Sqlite {
    static READY: OnceLock<(TempDir, Sqlite)> = OnceLock::new();
    let (_, db) = READY.get_or_init(|| {
        let (dir, db) = loaded();
        let tpch = Tpch::new(&db, PLAN).unwrap();
        for phase in [Phase::Indexes, Phase::Keys, Phase::Analyze] {
            tpch.run(phase, &AtomicBool::new(false)).unwrap();
        }
        (dir, db)
    });
    db
}

#[test]
fn every_phase_runs_in_order_and_says_what_it_did() {
    let _turn = bakeoff_testkit::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let tpch = Tpch::new(&db, PLAN).unwrap();
    let stop = AtomicBool::new(false);
    let mut reports = Vec::new();
    for phase in Phase::ALL {
        let started = Instant::now();
        let report = tpch.run(phase, &stop).unwrap();
        assert_eq!(report.phase, phase);
        assert!(report.elapsed <= started.elapsed());
        eprintln!(
            "{}: {:?}, {} rows, {} steps",
            phase.name(),
            report.elapsed,
            report.rows,
            report.steps.len()
        );
        reports.push(report);
    }
    let steps: Vec<usize> = reports.iter().map(|r| r.steps.len()).collect();
    assert_eq!(steps, [1, 8, 10, 8 + 10, 8, 22]);
    let load = &reports[1];
    for (step, table) in load.steps.iter().zip(Table::ALL) {
        assert_eq!(step.name, table.name());
        assert_eq!(step.rows as i64, expected_rows(table, PLAN.sf), "{table:?}");
    }
    assert_eq!(
        load.rows,
        5 + 25 + 100 + 2_000 + 8_000 + 1_500 + 15_000 + 60_175
    );
    let counts = tpch.check_row_counts().unwrap();
    assert_eq!(counts[&Table::LineItem], 60_175);
    let queries = &reports[5];
    assert_eq!(queries.steps[0].name, "Q1");
    assert_eq!(
        queries.steps[0].rows, 4,
        "Q1: one row per return flag and status"
    );
    assert_eq!(
        queries.rows,
        queries.steps.iter().map(|s| s.rows).sum::<u64>()
    );
}

#[test]
fn all_22_queries_answer_and_q1_and_q6_agree_with_the_generated_rows() {
    let _turn = bakeoff_testkit::shared();
    let db = ready();
    let tpch = Tpch::new(db, PLAN).unwrap();
    let mut empty = Vec::new();
    for n in 1..=QUERIES {
        let report = tpch.run_query(n).unwrap();
        assert_eq!(report.number, n);
        assert_eq!(report.rows as usize, report.answer.len());
        if report.rows == 0 {
            empty.push(n);
        }
        eprintln!("Q{n}: {} rows in {:?}", report.rows, report.elapsed);
    }
    assert!(empty.is_empty(), "queries without rows: {empty:?}");

    // Q1 and Q6 recomputed from the generator's rows, in exact integer cents.
    let mut q1: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
    let mut q6_cents2 = 0i64; // revenue in 1/10,000
    for row in rows(Table::LineItem, PLAN.sf, 1, 1) {
        let (quantity, price) = (int(&row[4]), cents(&row[5]));
        let (discount, shipdate) = (cents(&row[6]), text(&row[10]));
        if shipdate.as_str() <= "1998-09-02" {
            let group = q1.entry((text(&row[8]), text(&row[9]))).or_default();
            *group = (group.0 + 1, group.1 + quantity);
        }
        let in_1994 = ("1994-01-01".."1995-01-01").contains(&shipdate.as_str());
        if in_1994 && (5..=7).contains(&discount) && quantity < 24 {
            q6_cents2 += price * discount;
        }
    }
    let answer = tpch.run_query(1).unwrap().answer;
    let groups: Vec<((String, String), (i64, i64))> = answer
        .iter()
        .map(|r| {
            (
                (text(&r[0]), text(&r[1])),
                (int(&r[9]), r[2].float() as i64),
            )
        })
        .collect();
    assert_eq!(groups, q1.into_iter().collect::<Vec<_>>());
    let revenue = tpch.run_query(6).unwrap().answer[0][0].float();
    let expected = q6_cents2 as f64 / 10_000.0;
    assert!(
        (revenue - expected).abs() < 0.005,
        "Q6 {revenue} != {expected}"
    );
}

fn int(v: &Value) -> i64 {
    v.int().unwrap_or_else(|| panic!("not an integer: {v:?}"))
}

fn text(v: &Value) -> String {
    v.text()
        .unwrap_or_else(|| panic!("not text: {v:?}"))
        .to_string()
}

fn cents(v: &Value) -> i64 {
    (v.float() * 100.0).round() as i64
}

trait Number {
    fn float(&self) -> f64;
}

impl Number for Value {
    fn float(&self) -> f64 {
        match self {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            other => panic!("not a number: {other:?}"),
        }
    }
}

#[test]
fn a_table_with_a_row_missing_is_named() {
    let _turn = bakeoff_testkit::shared();
    let (_dir, db) = loaded();
    let mut conn = db.connect().unwrap();
    conn.execute("DELETE FROM nation WHERE n_nationkey = 3", &[])
        .unwrap();
    let err = Tpch::new(&db, PLAN)
        .unwrap()
        .check_row_counts()
        .unwrap_err();
    assert!(
        matches!(
            err,
            TpchError::RowCount {
                table: "nation",
                expected: 25,
                found: 24,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("table nation has 24 rows"),
        "{err}"
    );
}

#[test]
fn an_order_deleted_under_its_line_items_fails_the_keys_phase() {
    let _turn = bakeoff_testkit::shared();
    let (_dir, db) = loaded();
    let mut conn = db.connect().unwrap();
    conn.execute("DELETE FROM orders WHERE o_orderkey = 1", &[])
        .unwrap();
    let err = Tpch::new(&db, PLAN).unwrap().create_keys().unwrap_err();
    assert!(
        matches!(
            err,
            TpchError::Orphans {
                key: "lineitem_orders_fk",
                orphans: 6,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_raised_stop_ends_the_load_and_the_queries_and_bad_queries_are_named() {
    let _turn = bakeoff_testkit::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let tpch = Tpch::new(&db, PLAN).unwrap();
    let stop = AtomicBool::new(true);
    tpch.create_schema().unwrap();
    let started = Instant::now();
    let err = tpch.load(&stop).unwrap_err();
    assert!(
        matches!(err, TpchError::Interrupted { phase: "tpch.load" }),
        "{err}"
    );
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    let err = tpch.queries(&stop).unwrap_err();
    assert_eq!(err.to_string(), "TPC-H tpch.queries was interrupted");

    let err = tpch.run_query(23).unwrap_err().to_string();
    assert!(
        err.contains("no query 23") && err.contains("1 to 22"),
        "{err}"
    );
    let mut conn = db.connect().unwrap();
    conn.batch("DROP TABLE lineitem").unwrap();
    let err = tpch.queries(&AtomicBool::new(false)).unwrap_err();
    assert!(matches!(err, TpchError::Query { number: 1, .. }), "{err}");
    let err = err.to_string();
    assert!(
        err.contains("Q1 (Pricing Summary Report)") && err.contains("lineitem"),
        "{err}"
    );
}
