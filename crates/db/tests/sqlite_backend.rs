//! The SQLite backend on databases in temporary directories: options applied and read back,
//! parameters, bulk loads, busy databases as retryable errors, page-cache counters.

use bakeoff_db::sqlite::{JournalMode, Sqlite, SqliteOptions, Synchronous};
use bakeoff_db::{Database, ErrorKind, Value};

fn wal() -> SqliteOptions {
    SqliteOptions {
        journal_mode: Some(JournalMode::Wal),
        ..SqliteOptions::default()
    }
}

#[test]
fn every_option_is_applied_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opts.db");
    let o = SqliteOptions {
        journal_mode: Some(JournalMode::Wal),
        synchronous: Some(Synchronous::Extra),
        page_size: Some(16384),
        cache_size: Some(-8192),
        busy_timeout_ms: 1234,
    };
    let db = Sqlite::open(&path, o).unwrap();
    let s = db.settings();
    assert_eq!(s["journal_mode"], "wal");
    assert_eq!(s["synchronous"], "extra");
    assert_eq!(s["page_size"], "16384");
    assert_eq!(s["cache_size"], "-8192");
    assert_eq!(s["busy_timeout"], "1234");
    assert_eq!(s["version"], Sqlite::version());
    assert!(Sqlite::version().starts_with("3."), "{}", Sqlite::version());
    // The page size is the file's once a table exists.
    let mut c = db.connect().unwrap();
    c.batch("CREATE TABLE t (a bigint)").unwrap();
    let rows = c.query("PRAGMA page_size", &[]).unwrap();
    assert_eq!(rows[0][0], Value::Int(16384));
    // Unset options read back as SQLite's defaults (docs/tpcc.md lists them).
    let plain = Sqlite::open(&dir.path().join("plain.db"), SqliteOptions::default()).unwrap();
    let s = plain.settings();
    let defaults = [("delete", "full"), ("4096", "-2000")];
    assert_eq!(
        (s["journal_mode"].as_str(), s["synchronous"].as_str()),
        defaults[0]
    );
    assert_eq!(
        (s["page_size"].as_str(), s["cache_size"].as_str()),
        defaults[1]
    );
    // Every journal mode and synchronous level takes, on a new file each.
    for (i, mode) in JournalMode::ALL.into_iter().enumerate() {
        let sync = Synchronous::ALL[i % Synchronous::ALL.len()];
        let o = SqliteOptions {
            journal_mode: Some(mode),
            synchronous: Some(sync),
            ..SqliteOptions::default()
        };
        let db = Sqlite::open(&dir.path().join(format!("m{i}.db")), o).unwrap();
        assert_eq!(db.settings()["journal_mode"], mode.name());
        assert_eq!(db.settings()["synchronous"], sync.name());
        assert_eq!(db.settings()["busy_timeout"], "5000");
    }
}

#[test]
fn a_page_size_the_existing_file_cannot_take_is_refused_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("made.db");
    let db = Sqlite::open(
        &path,
        SqliteOptions {
            page_size: Some(4096),
            ..SqliteOptions::default()
        },
    )
    .unwrap();
    db.connect()
        .unwrap()
        .batch("CREATE TABLE t (a bigint); INSERT INTO t VALUES (1)")
        .unwrap();
    let err = Sqlite::open(
        &path,
        SqliteOptions {
            page_size: Some(8192),
            ..SqliteOptions::default()
        },
    )
    .err()
    .expect("page_size of an existing database cannot change");
    let msg = err.to_string();
    assert!(
        msg.contains("page_size = 8192 did not take effect"),
        "{msg}"
    );
    assert!(
        msg.contains("4096") && msg.contains(&path.display().to_string()),
        "{msg}"
    );
}

#[test]
fn statements_bind_dollar_parameters_and_bulk_load_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let db = Sqlite::open(&dir.path().join("p.db"), SqliteOptions::default()).unwrap();
    let mut c = db.connect().unwrap();
    c.batch("CREATE TABLE t (id bigint PRIMARY KEY, name varchar(20), price double precision, note text)")
        .unwrap();
    let mut rows = (1..=2500i64).map(|i| {
        vec![
            Value::Int(i),
            Value::Text(format!("it's \"{i}\"\n\t\\")),
            Value::Float(i as f64 / 4.0),
            if i % 2 == 0 {
                Value::Null
            } else {
                Value::Text("$1".into())
            },
        ]
    });
    let n = c
        .bulk_load("t", &["id", "name", "price", "note"], &mut rows)
        .unwrap();
    assert_eq!(n, 2500);
    let got = c
        .query(
            "SELECT id, name, price, note FROM t WHERE id = $1 OR (id > $2 AND id <= $2 + 1) ORDER BY id",
            &[Value::Int(7), Value::Int(2499)],
        )
        .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[0],
        vec![
            Value::Int(7),
            Value::Text("it's \"7\"\n\t\\".into()),
            Value::Float(1.75),
            Value::Text("$1".into()),
        ]
    );
    assert_eq!(got[1][3], Value::Null);
    let changed = c
        .execute(
            "UPDATE t SET price = $1 WHERE id <= $2",
            &[Value::Float(0.5), Value::Int(10)],
        )
        .unwrap();
    assert_eq!(changed, 10);
    // A rolled-back transaction leaves nothing; a wrong row is an error naming the table.
    c.begin().unwrap();
    c.execute("DELETE FROM t", &[]).unwrap();
    c.rollback().unwrap();
    assert_eq!(
        c.query("SELECT count(*) FROM t", &[]).unwrap()[0][0],
        Value::Int(2500)
    );
    let err = c
        .bulk_load(
            "t",
            &["id", "name"],
            &mut std::iter::once(vec![Value::Int(1)]),
        )
        .unwrap_err();
    assert!(err.to_string().contains("loading t"), "{err}");
    let err = c.execute("SELECT nothing FROM nowhere", &[]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Other);
    assert!(err.to_string().contains("nowhere"), "{err}");
}

#[test]
fn a_busy_database_is_a_retryable_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = SqliteOptions {
        busy_timeout_ms: 50,
        ..wal()
    };
    let db = Sqlite::open(&dir.path().join("busy.db"), o).unwrap();
    let mut a = db.connect().unwrap();
    let mut b = db.connect().unwrap();
    a.batch("CREATE TABLE t (a bigint)").unwrap();
    a.begin().unwrap();
    a.execute("INSERT INTO t VALUES ($1)", &[Value::Int(1)])
        .unwrap();
    let err = b.begin().unwrap_err();
    assert_eq!(err.kind, ErrorKind::Retry, "{err}");
    b.rollback().unwrap();
    a.commit().unwrap();
    b.begin().unwrap();
    b.commit().unwrap();
}

#[test]
fn page_cache_counters_sum_every_connection() {
    let dir = tempfile::tempdir().unwrap();
    let o = SqliteOptions {
        cache_size: Some(100),
        ..wal()
    };
    let db = Sqlite::open(&dir.path().join("cache.db"), o).unwrap();
    let before = db.cache_counters();
    {
        let mut c = db.connect().unwrap();
        c.batch("CREATE TABLE t (id bigint PRIMARY KEY, pad text)")
            .unwrap();
        let pad = "x".repeat(500);
        let mut rows = (0..20_000i64).map(|i| vec![Value::Int(i), Value::Text(pad.clone())]);
        c.bulk_load("t", &["id", "pad"], &mut rows).unwrap();
    }
    let loaded = db.cache_counters().since(&before);
    assert!(loaded.writes > 1000, "{loaded:?}");
    // A second connection reads the table (larger than its 100-page cache) twice.
    let mut c = db.connect().unwrap();
    for _ in 0..2 {
        c.begin().unwrap();
        let n = c.query("SELECT count(pad) FROM t", &[]).unwrap();
        assert_eq!(n[0][0], Value::Int(20_000));
        c.commit().unwrap();
    }
    let read = db.cache_counters().since(&before);
    assert!(
        read.misses >= loaded.misses + 2 * 2000,
        "{read:?} after {loaded:?}"
    );
    assert!(read.hits > loaded.hits, "{read:?} after {loaded:?}");
}

/// `PRAGMA integrity_check` finds nothing in a database written and closed, and finds an
/// index page overwritten afterwards (what a torn or lost write leaves).
#[test]
fn the_integrity_check_is_clean_then_finds_an_overwritten_page() {
    use bakeoff_db::integrity::sqlite_integrity_check;
    use std::io::{Seek, SeekFrom, Write};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("check.db");
    {
        let db = Sqlite::open(&path, SqliteOptions::default()).unwrap();
        let mut conn = db.connect().unwrap();
        conn.batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t (v); \
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) \
             INSERT INTO t SELECT i, printf('%08d-value', i * 7919 % 5000) FROM n",
        )
        .unwrap();
        let check = sqlite_integrity_check(conn.as_mut());
        assert!(check.clean(), "{check:?}");
    }
    let pages = std::fs::metadata(&path).unwrap().len() / 4096;
    assert!(pages > 20, "{pages} pages");
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    // The last page belongs to the index, built last; its cells overwritten.
    f.seek(SeekFrom::Start((pages - 1) * 4096 + 100)).unwrap();
    f.write_all(&[0x5A; 512]).unwrap();
    drop(f);
    let db = Sqlite::open(&path, SqliteOptions::default()).unwrap();
    let check = sqlite_integrity_check(db.connect().unwrap().as_mut());
    assert!(!check.clean() && check.first.is_some(), "{check:?}");
    eprintln!("{check:?}");
}
