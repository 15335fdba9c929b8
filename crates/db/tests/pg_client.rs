//! The client of a managed server: COPY round-trips awkward text, values bind to the types the
//! server inferred, and conflicts are classified as retryable (root and PostgreSQL; in CI for
//! real).

mod pg_common;
use bakeoff_db::{Database, ErrorKind, Value};
use pg_common::*;

/// A server on a tmpfs stack, for the closure.
fn with_server(test: impl FnOnce(&bakeoff_db::postgres::PgServer)) {
    if !privileged() {
        return;
    }
    let _turn = bakeoff_testkit::shared();
    let (_images, stack, server) = tmpfs_server(256, 4);
    test(&server);
    stack.destroy().unwrap();
}

#[test]
fn bulk_load_round_trips_tabs_newlines_backslashes_and_nulls() {
    with_server(|server| {
        let db = server.database();
        let mut conn = db.connect().unwrap();
        conn.batch("CREATE TABLE t (id bigint, note text, amount_cents bigint, ratio float8)")
            .unwrap();
        let rows: Vec<Vec<Value>> = vec![
            vec![1.into(), "tab\there".into(), 100.into(), Value::Float(0.5)],
            vec![
                2.into(),
                "line\nbreak\r\n".into(),
                (-7).into(),
                Value::Float(1e300),
            ],
            vec![
                3.into(),
                r"back\slash \N \t".into(),
                Value::Null,
                Value::Float(-0.1),
            ],
            vec![4.into(), Value::Null, i64::MAX.into(), Value::Null],
            vec![
                5.into(),
                "ünïcödé, 'quotes' and \"doubles\"".into(),
                0.into(),
                Value::Float(3.0),
            ],
        ];
        let loaded = conn
            .bulk_load(
                "t",
                &["id", "note", "amount_cents", "ratio"],
                &mut rows.clone().into_iter(),
            )
            .unwrap();
        assert_eq!(loaded, rows.len() as u64);
        let back = conn.query(
            "SELECT id, note, amount_cents, ratio FROM t ORDER BY id",
            &[],
        );
        assert_eq!(back.unwrap(), rows);
        // A short row aborts the whole COPY: nothing of it stays.
        let short = vec![
            vec![Value::Int(6), "x".into(), 1.into(), Value::Null],
            vec![7.into()],
        ];
        let err = conn
            .bulk_load(
                "t",
                &["id", "note", "amount_cents", "ratio"],
                &mut short.into_iter(),
            )
            .unwrap_err();
        assert!(
            err.message.contains("row 2 has 1 values for 4 columns"),
            "{err}"
        );
        let count = conn.query("SELECT count(*) FROM t", &[]).unwrap();
        assert_eq!(count, vec![vec![Value::Int(5)]]);
    });
}

#[test]
fn values_bind_to_inferred_types_and_aggregates_read_back() {
    with_server(|server| {
        let mut conn = server.database().connect().unwrap();
        conn.batch("CREATE TABLE s (w int, d smallint, price numeric(12,2), name varchar(16))")
            .unwrap();
        let insert = "INSERT INTO s VALUES ($1, $2, $3, $4)";
        for i in 1..=3 {
            let n = conn
                .execute(
                    insert,
                    &[i.into(), (i * 10).into(), (i * 100).into(), "item".into()],
                )
                .unwrap();
            assert_eq!(n, 1);
        }
        // sum(bigint) is numeric without a scale (an integer); numeric(12,2) keeps its scale.
        let sums = conn
            .query(
                "SELECT sum(w::bigint), sum(price), avg(d), count(*) FROM s WHERE name = $1",
                &["item".into()],
            )
            .unwrap();
        assert_eq!(
            sums,
            vec![vec![
                Value::Int(6),
                Value::Float(600.0),
                Value::Float(20.0),
                Value::Int(3)
            ]]
        );
        let big = conn.execute("UPDATE s SET w = $1", &[(1i64 << 40).into()]);
        let err = big.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Other);
        assert!(
            err.message.contains("UPDATE s SET w = $1"),
            "the statement: {err}"
        );
    });
}

#[test]
fn serialization_failures_and_deadlocks_are_retryable_other_errors_are_not() {
    with_server(|server| {
        let db = server.database();
        let (mut a, mut b) = (db.connect().unwrap(), db.connect().unwrap());
        a.batch("CREATE TABLE acct (id bigint PRIMARY KEY, cents bigint)")
            .unwrap();
        a.batch("INSERT INTO acct VALUES (1, 100), (2, 100)")
            .unwrap();
        let serializable = "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE";
        for c in [&mut a, &mut b] {
            c.begin().unwrap();
            c.batch(serializable).unwrap();
        }
        // b's snapshot is taken before a's update commits; its own update then conflicts.
        b.query("SELECT cents FROM acct WHERE id = 1", &[]).unwrap();
        a.execute(
            "UPDATE acct SET cents = cents - 10 WHERE id = $1",
            &[1.into()],
        )
        .unwrap();
        a.commit().unwrap();
        let err = b
            .execute(
                "UPDATE acct SET cents = cents + 10 WHERE id = $1",
                &[1.into()],
            )
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Retry, "{err}");
        assert!(err.message.contains("40001"), "{err}");
        b.rollback().unwrap();

        // A deadlock: a holds row 1 and wants row 2, b holds row 2 and wants row 1.
        let lock = "UPDATE acct SET cents = cents + 1 WHERE id = $1";
        a.begin().unwrap();
        b.begin().unwrap();
        a.execute(lock, &[1.into()]).unwrap();
        b.execute(lock, &[2.into()]).unwrap();
        let waiter = std::thread::spawn(move || {
            let r = a.execute(lock, &[2.into()]);
            let _ = a.rollback();
            r
        });
        std::thread::sleep(std::time::Duration::from_millis(200)); // a waits for row 2 first
        let mine = b.execute(lock, &[1.into()]);
        let _ = b.rollback();
        let theirs = waiter.join().unwrap();
        let victim = [mine, theirs]
            .into_iter()
            .find_map(Result::err)
            .expect("a deadlock");
        assert_eq!(victim.kind, ErrorKind::Retry, "{victim}");
        assert!(victim.message.contains("40P01"), "{victim}");

        let mut c = db.connect().unwrap();
        let dup = c
            .execute("INSERT INTO acct VALUES ($1, 0)", &[1.into()])
            .unwrap_err();
        assert_eq!(dup.kind, ErrorKind::Other);
        assert!(
            dup.message.contains("23505") && dup.message.contains("INSERT INTO acct"),
            "{dup}"
        );
    });
}
