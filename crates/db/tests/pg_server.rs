//! A managed PostgreSQL server on a tmpfs stack: started, queried, its settings read back, its
//! WAL where it was asked, inside the run's memory cgroup, stopped with nothing left; wrong
//! settings refused before anything is created (root and PostgreSQL; in CI for real).
//!
//! The tests take turns: the memory-limit test moves this whole process into a cgroup, and a
//! process another test forks meanwhile would keep that cgroup from being removed.

mod pg_common;
use bakeoff_db::postgres::PgServer;
use bakeoff_db::Conn;
use bakeoff_testkit::shared;
use pg_common::*;
use std::os::unix::fs::MetadataExt;

#[test]
fn a_server_answers_reads_back_its_settings_and_stops_with_nothing_left() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    let mut stack = tmpfs(images.path(), 512);
    let mut opts = options(&stack, 4);
    opts.set("pg.work_mem=8MB").unwrap();
    let server = start(&mut stack, opts);
    let mut conn = server.connect().unwrap();
    let rows = conn.query("SELECT $1::bigint + 1", &[40.into()]).unwrap();
    assert_eq!(rows, vec![vec![bakeoff_db::Value::Int(41)]]);
    assert_eq!(server.show_all()["work_mem"], "8MB", "the user's setting");
    assert_eq!(
        server.show_all()["max_connections"],
        "14",
        "4 clients and the margin"
    );
    assert_eq!(server.show_all()["listen_addresses"], "");
    assert!(
        server.version().starts_with("PostgreSQL 15"),
        "{}",
        server.version()
    );
    // The postmaster is the stack's daemon, runs as postgres, and listens in its private directory.
    let pid = server.pid();
    assert_eq!(
        stack.daemons().iter().map(|d| d.pid()).collect::<Vec<_>>(),
        [pid]
    );
    assert_eq!(
        std::fs::metadata(format!("/proc/{pid}")).unwrap().uid(),
        server.user().uid
    );
    let socket = std::fs::metadata(server.socket_dir()).unwrap();
    assert_eq!(
        (socket.mode() & 0o777, socket.uid()),
        (0o700, server.user().uid)
    );
    assert!(server.socket_dir().join(".s.PGSQL.5432").exists());
    let record = server.database_run();
    assert_eq!(
        (record.db.as_str(), record.settings["work_mem"].as_str()),
        ("postgres", "8MB")
    );
    assert_eq!(
        record.paths["data_directory"],
        stack.target.join("pgdata").to_string_lossy()
    );
    let log = server.log_file().to_path_buf();
    assert_eq!(log, stack.target.join("pgdata.log"));
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("ready to accept connections"));
    let initdb = stack
        .info
        .commands
        .iter()
        .any(|c| c.argv[0].ends_with("/initdb"));
    assert!(initdb, "initdb is one of the stack's commands");
    drop(conn);
    let socket_dir = server.socket_dir().to_path_buf();
    server.stop(&mut stack).unwrap();
    assert!(!running(pid), "the postmaster still runs");
    assert!(stack.daemons().is_empty());
    assert!(!socket_dir.exists(), "{} is left", socket_dir.display());
    stack.destroy().unwrap();
}

#[test]
fn a_restart_starts_the_same_cluster_again_and_teardown_stops_it() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, mut stack, mut server) = tmpfs_server(512, 2);
    let mut conn = server.connect().unwrap();
    conn.batch("CREATE TABLE kept (n bigint); INSERT INTO kept VALUES (7)")
        .unwrap();
    drop(conn);
    let first = server.pid();
    let mut cold = false;
    server
        .restart(&mut stack, |_| {
            cold = true;
            Ok(())
        })
        .unwrap();
    assert!(cold && !running(first) && running(server.pid()));
    let rows = server
        .connect()
        .unwrap()
        .query("SELECT n FROM kept", &[])
        .unwrap();
    assert_eq!(rows, vec![vec![bakeoff_db::Value::Int(7)]]);
    let (pid, socket_dir) = (server.pid(), server.socket_dir().to_path_buf());
    stack.destroy().unwrap();
    assert!(!running(pid), "teardown stops the server");
    assert!(
        !socket_dir.exists(),
        "teardown removes the socket directory"
    );
}

#[test]
fn wrong_settings_are_refused_before_anything_is_created() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    let mut stack = tmpfs(images.path(), 64);
    let cases = [
        ("pg.work_mme=8MB", "did you mean work_mem?"),
        (
            "pg.max_connections=lots",
            "max_connections takes an integer from 1",
        ),
        (
            "pg.wal_level=bogus",
            "Available values: minimal, replica, logical",
        ),
        ("pg.work_mem=8XB", "not \"XB\""),
        ("pg.checkpoint_timeout=2d", "outside the valid range"),
        ("pg.shared_buffers=1TB", "more than the"),
        ("pg.unix_socket_directories=/tmp", "bakeoff decides it"),
    ];
    for (arg, expected) in cases {
        let mut opts = options(&stack, 2);
        opts.set(arg).unwrap();
        let err = PgServer::start(&mut stack, opts).unwrap_err().to_string();
        let key = arg.split('=').next().unwrap();
        assert!(err.contains(key) && err.contains(expected), "{arg}: {err}");
        assert!(
            !stack.target.join("pgdata").exists(),
            "{arg}: a data directory"
        );
        assert!(
            !socket_dir(stack.name()).exists(),
            "{arg}: a socket directory"
        );
    }
    assert!(stack.daemons().is_empty());
    stack.destroy().unwrap();
}

#[test]
fn the_wal_goes_where_wal_dir_says_on_another_stack() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    // Declared first, dropped last: the server on the data stack stops before the log stack goes.
    let log_stack = tmpfs(images.path(), 256);
    let mut stack = tmpfs(images.path(), 256);
    let wal_dir = log_stack.target.join("wal");
    let mut opts = options(&stack, 2);
    opts.wal_dir = Some(wal_dir.clone());
    let server = start(&mut stack, opts);
    let link = server.data_dir().join("pg_wal");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), wal_dir);
    let before = server.stats().unwrap();
    let mut conn = server.connect().unwrap();
    conn.batch("CREATE TABLE t AS SELECT g AS n FROM generate_series(1, 10000) g")
        .unwrap();
    drop(conn);
    let segments = std::fs::read_dir(&wal_dir).unwrap().count();
    assert!(segments >= 1, "no WAL segment in {}", wal_dir.display());
    let written = server.stats().unwrap().since(&before);
    assert!(written.wal_bytes > 100_000, "{written:?}");
    assert!(written.db_size_bytes > 0);
    stack.destroy().unwrap();
    log_stack.destroy().unwrap();
}

#[test]
fn a_server_started_under_a_memory_limit_runs_in_the_runs_cgroup() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    let (stack, server) = server_in_memory_cgroup(images.path(), 128, 2 << 30, 2);
    assert_eq!(
        server.show_all()["shared_buffers"],
        "512MB",
        "a quarter of the limit"
    );
    stack.destroy().unwrap();
}
