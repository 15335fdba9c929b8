//! The client of a managed MariaDB server: `$n` SQL bound and read back, the bulk path across
//! its statement boundary with awkward text, and conflicts classified as retryable (root and
//! MariaDB; in CI for real).

mod my_common;
use bakeoff_db::mariadb::MyServer;
use bakeoff_db::{Conn, ErrorKind, Value};
use bakeoff_testkit::shared;
use my_common::*;

/// A server on a tmpfs stack, for the closure.
fn with_server(test: impl FnOnce(&MyServer)) {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(512, 4);
    test(&server);
    stack.destroy().unwrap();
}

#[test]
fn bulk_load_round_trips_awkward_text_and_nulls_across_statements() {
    with_server(|server| {
        let mut conn = server.connect().unwrap();
        conn.batch("CREATE TABLE t (id BIGINT PRIMARY KEY, note TEXT, ratio DOUBLE)")
            .unwrap();
        let awkward = [
            "tab\there",
            "line\nbreak\r\n",
            r"back\slash \N",
            "ünïcödé 'q' \"d\" $1",
        ];
        let rows: Vec<Vec<Value>> = (1..=2500i64)
            .map(|i| {
                let note = match i % 5 {
                    0 => Value::Null,
                    k => Value::from(awkward[k as usize - 1]),
                };
                vec![i.into(), note, Value::Float(i as f64 / 4.0)]
            })
            .collect();
        let columns = ["id", "note", "ratio"];
        let loaded = conn
            .bulk_load("t", &columns, &mut rows.clone().into_iter())
            .unwrap();
        assert_eq!(loaded, 2500, "three statements: 1,000, 1,000 and 500 rows");
        let back = conn
            .query("SELECT id, note, ratio FROM t ORDER BY id", &[])
            .unwrap();
        assert_eq!(back, rows);
        // A short row rolls the whole load back: nothing of it stays.
        let short = vec![
            vec![Value::Int(9001), "x".into(), Value::Null],
            vec![9002.into()],
        ];
        let err = conn
            .bulk_load("t", &columns, &mut short.into_iter())
            .unwrap_err();
        assert!(
            err.message.contains("row 2 has 1 values for 3 columns"),
            "{err}"
        );
        let count = conn.query("SELECT COUNT(*) FROM t", &[]).unwrap();
        assert_eq!(count, vec![vec![Value::Int(2500)]]);
        let bad = conn.bulk_load("t; DROP TABLE t", &columns, &mut std::iter::empty());
        assert!(bad.unwrap_err().message.contains("not a plain SQL name"));
    });
}

#[test]
fn values_bind_by_their_numbers_and_aggregates_read_back() {
    with_server(|server| {
        let mut conn = server.connect().unwrap();
        conn.batch(
            "CREATE TABLE s (w INT, d SMALLINT, price DECIMAL(12,2), name VARCHAR(16), day DATE)",
        )
        .unwrap();
        let insert = "INSERT INTO s VALUES ($1, $2, $3, $4, $5)";
        for i in 1..=3i64 {
            let params = [
                i.into(),
                (i * 10).into(),
                (i * 100).into(),
                "item".into(),
                "2026-11-06".into(),
            ];
            assert_eq!(conn.execute(insert, &params).unwrap(), 1);
        }
        let sums = conn
            .query(
                "SELECT SUM(w), SUM(price), COUNT(*), MAX(day), $1 FROM s WHERE name = $1",
                &["item".into()],
            )
            .unwrap();
        let expected = ["6", "600.00"].map(|t| Value::Text(t.into()));
        assert_eq!(sums[0][..2], expected, "DECIMAL sums are their digits");
        assert_eq!(
            sums[0][2..],
            [Value::Int(3), "2026-11-06".into(), "item".into()]
        );
        let err = conn
            .execute("UPDATE s SET w = $1", &[(1i64 << 40).into()])
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Other);
        assert!(
            err.message.contains("UPDATE s SET w = $1"),
            "the statement: {err}"
        );
        let missing = conn.query("SELECT $2", &[1.into()]).unwrap_err();
        assert!(
            missing.message.contains("$2 has no value (1 given)"),
            "{missing}"
        );
    });
}

#[test]
fn deadlocks_and_lock_wait_timeouts_are_retryable_other_errors_are_not() {
    with_server(|server| {
        let (mut a, mut b) = (server.connect().unwrap(), server.connect().unwrap());
        a.batch("CREATE TABLE acct (id BIGINT PRIMARY KEY, cents BIGINT)")
            .unwrap();
        a.batch("INSERT INTO acct VALUES (1, 100), (2, 100)")
            .unwrap();
        let lock = "UPDATE acct SET cents = cents + 1 WHERE id = $1";
        // A lock wait timeout: a holds row 1, b waits a second for it.
        b.batch("SET SESSION innodb_lock_wait_timeout = 1").unwrap();
        a.begin().unwrap();
        a.execute(lock, &[1.into()]).unwrap();
        b.begin().unwrap();
        let waited = b.execute(lock, &[1.into()]).unwrap_err();
        assert_eq!(waited.kind, ErrorKind::Retry, "{waited}");
        assert!(waited.message.contains("ERROR 1205"), "{waited}");
        b.rollback().unwrap();
        a.rollback().unwrap();
        // A deadlock: a holds row 1 and wants row 2, b holds row 2 and wants row 1.
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
        assert!(victim.message.contains("ERROR 1213"), "{victim}");
        let mut c = server.connect().unwrap();
        let dup = c
            .execute("INSERT INTO acct VALUES ($1, 0)", &[1.into()])
            .unwrap_err();
        assert_eq!(dup.kind, ErrorKind::Other);
        assert!(
            dup.message.contains("1062") && dup.message.contains("INSERT INTO acct"),
            "{dup}"
        );
    });
}
