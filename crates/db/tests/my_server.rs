//! A managed MariaDB server on a tmpfs stack: started, queried, its variables read back, its
//! redo log where it was asked, inside the run's memory cgroup, stopped with nothing left;
//! wrong variables refused before anything is created (root and MariaDB; in CI for real).
//!
//! The tests take turns: the memory-limit test moves this whole process into a cgroup, and a
//! process another test forks meanwhile would keep that cgroup from being removed.

mod my_common;
use bakeoff_db::mariadb::MyServer;
use bakeoff_db::{Conn, Value};
use bakeoff_testkit::shared;
use my_common::*;
use std::os::unix::fs::MetadataExt;

#[test]
fn a_server_answers_reads_back_its_variables_and_stops_with_nothing_left() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    let mut stack = tmpfs(images.path(), 512);
    let mut opts = options(&stack, 4);
    opts.set("my.innodb-flush-log-at-trx-commit=2").unwrap();
    let server = start(&mut stack, opts);
    let mut conn = server.connect().unwrap();
    let rows = conn.query("SELECT $1 + 1", &[40.into()]).unwrap();
    assert_eq!(rows, vec![vec![Value::Int(41)]]);
    let vars = server.show_variables();
    assert_eq!(
        vars["innodb_flush_log_at_trx_commit"], "2",
        "the user's variable"
    );
    assert_eq!(vars["max_connections"], "14", "4 clients and the margin");
    assert_eq!(vars["skip_networking"], "ON");
    assert_eq!(vars["innodb_log_file_size"], (48u64 << 20).to_string());
    assert_eq!(
        vars["innodb_buffer_pool_load_at_startup"], "OFF",
        "a cold start is cold"
    );
    assert_eq!(vars["innodb_buffer_pool_dump_at_shutdown"], "OFF");
    assert_eq!(vars["datadir"], format!("{}/", server.data_dir().display()));
    assert!(server.version().contains("MariaDB"), "{}", server.version());
    // mariadbd is the stack's daemon, runs as mysql, and listens in its private directory.
    let pid = server.pid();
    assert_eq!(
        stack.daemons().iter().map(|d| d.pid()).collect::<Vec<_>>(),
        [pid]
    );
    let proc_uid = std::fs::metadata(format!("/proc/{pid}")).unwrap().uid();
    assert_eq!(proc_uid, server.user().uid);
    let socket = std::fs::metadata(server.socket_dir()).unwrap();
    assert_eq!(
        (socket.mode() & 0o777, socket.uid()),
        (0o700, server.user().uid)
    );
    assert!(server.socket_dir().join("mysqld.sock").exists());
    let record = server.database_run();
    assert_eq!(record.db, "mariadb");
    assert_eq!(record.settings["innodb_flush_log_at_trx_commit"], "2");
    let data = stack.target.join("mariadb");
    assert_eq!(record.paths["data_directory"], data.to_string_lossy());
    assert_eq!(server.log_file(), stack.target.join("mariadb.log"));
    let log = std::fs::read_to_string(server.log_file()).unwrap();
    assert!(log.contains("ready for connections"), "{log}");
    let installed =
        (stack.info.commands.iter()).any(|c| c.argv[0].ends_with("/mariadb-install-db"));
    assert!(
        installed,
        "mariadb-install-db is one of the stack's commands"
    );
    drop(conn);
    let socket_dir = server.socket_dir().to_path_buf();
    server.stop(&mut stack).unwrap();
    assert!(!running(pid), "mariadbd still runs");
    assert!(stack.daemons().is_empty());
    assert!(!socket_dir.exists(), "{} is left", socket_dir.display());
    stack.destroy().unwrap();
}

#[test]
fn a_restart_starts_the_same_instance_again_and_teardown_stops_it() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, mut stack, mut server) = tmpfs_server(512, 2);
    let mut conn = server.connect().unwrap();
    conn.batch("CREATE TABLE kept (n BIGINT); INSERT INTO kept VALUES (7)")
        .unwrap();
    let big = "CREATE TABLE big (n BIGINT PRIMARY KEY, pad CHAR(200)); \
               INSERT INTO big SELECT seq, 'x' FROM seq_1_to_20000";
    conn.batch(big).unwrap();
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
    let before = server.stats().unwrap();
    let mut conn = server.connect().unwrap();
    let rows = conn.query("SELECT n FROM kept", &[]).unwrap();
    assert_eq!(rows, vec![vec![Value::Int(7)]]);
    let sum = conn
        .query("SELECT SUM(n) = 200010000 FROM big", &[])
        .unwrap();
    assert_eq!(sum, vec![vec![Value::Int(1)]]);
    drop(conn);
    // No buffer-pool dump and load: the restart is cold, the table's pages come from its file.
    let read = server.stats().unwrap().since(&before);
    // (About 280 pages of 16 KiB: 352 reads with read-ahead; 48 when a dump is loaded at start.)
    assert!(read.buffer_pool_reads.unwrap() >= 200, "{read:?}");
    let (pid, socket_dir) = (server.pid(), server.socket_dir().to_path_buf());
    stack.destroy().unwrap();
    assert!(!running(pid), "teardown stops the server");
    assert!(
        !socket_dir.exists(),
        "teardown removes the socket directory"
    );
}

#[test]
fn wrong_variables_are_refused_before_anything_is_created() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    let mut stack = tmpfs(images.path(), 64);
    let cases = [
        (
            "my.innodb_bufer_pool_size=1G",
            "did you mean innodb_buffer_pool_size?",
        ),
        (
            "my.max_connections=lots",
            "Error while setting value 'lots'",
        ),
        ("my.innodb_flush_method=bogus", "bogus"),
        ("my.innodb_buffer_pool_size=1X", "Unknown suffix 'X'"),
        ("my.max_connections=0", "unsigned value 0 adjusted to 10"),
        (
            "my.innodb_file_per_table=maybe",
            "due to invalid value 'maybe'",
        ),
        ("my.innodb_buffer_pool_size=1T", "more than the"),
        ("my.socket=/tmp/x.sock", "bakeoff decides it"),
        ("my.innodb-log-group-home-dir=/tmp", "bakeoff decides it"),
    ];
    for (arg, expected) in cases {
        let mut opts = options(&stack, 2);
        opts.set(arg).unwrap();
        let err = MyServer::start(&mut stack, opts).unwrap_err().to_string();
        let key = arg.split('=').next().unwrap().replace('-', "_");
        assert!(err.contains(&key) && err.contains(expected), "{arg}: {err}");
        let made: Vec<_> = std::fs::read_dir(&stack.target).unwrap().collect();
        assert!(made.is_empty(), "{arg}: {made:?} made on the stack");
        assert!(
            !socket_dir(stack.name()).exists(),
            "{arg}: a socket directory"
        );
    }
    assert!(stack.daemons().is_empty());
    stack.destroy().unwrap();
}

#[test]
fn the_redo_log_goes_where_redo_dir_says_on_another_stack_and_innodb_counts_it() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    // Declared first, dropped last: the server on the data stack stops before the log stack goes.
    let log_stack = tmpfs(images.path(), 256);
    let mut stack = tmpfs(images.path(), 256);
    let redo_dir = log_stack.target.join("myredo");
    let mut opts = options(&stack, 2);
    opts.redo_dir = Some(redo_dir.clone());
    let server = start(&mut stack, opts);
    assert!(
        redo_dir.join("ib_logfile0").is_file(),
        "no redo log in {}",
        redo_dir.display()
    );
    assert!(
        !server.data_dir().join("ib_logfile0").exists(),
        "a redo log in the data directory"
    );
    let home = &server.show_variables()["innodb_log_group_home_dir"];
    assert_eq!(home.trim_end_matches('/'), redo_dir.to_string_lossy());
    assert_eq!(
        server.database_run().paths["redo_directory"],
        redo_dir.to_string_lossy()
    );
    let before = server.stats().unwrap();
    let mut conn = server.connect().unwrap();
    conn.batch("CREATE TABLE t (n BIGINT PRIMARY KEY, pad VARCHAR(200))")
        .unwrap();
    conn.begin().unwrap();
    conn.batch("INSERT INTO t SELECT seq, REPEAT('x', 200) FROM seq_1_to_10000")
        .unwrap();
    conn.commit().unwrap();
    drop(conn);
    let run = server.stats().unwrap().since(&before);
    assert!(run.os_log_written.unwrap() > 1_000_000, "{run:?}");
    assert!(run.com_commit.unwrap() >= 1, "{run:?}");
    assert!(run.buffer_pool_read_requests.unwrap() > 0, "{run:?}");
    assert_eq!(run.counters().wal_bytes, run.os_log_written);
    server.checkpoint().unwrap();
    let flushed = server.stats().unwrap();
    assert_eq!(
        flushed.buffer_pool_pages_dirty,
        Some(0),
        "a checkpoint leaves no dirty page"
    );
    assert!(
        flushed.since(&before).pages_written.unwrap() > 0,
        "{flushed:?}"
    );
    assert!(
        server.size_on_disk().unwrap() > 2_000_000,
        "the table's file"
    );
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
    let mut stack = tmpfs(images.path(), 256);
    stack.limit_memory(2 << 30).unwrap();
    let opts = options(&stack, 2);
    let server = start(&mut stack, opts);
    let cgroup = |pid: String| std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let ours = cgroup("self".into());
    assert!(
        ours.contains(&format!("bakeoff-{}", stack.name())),
        "{ours}"
    );
    assert_eq!(
        cgroup(server.pid().to_string()),
        ours,
        "mariadbd is in the run's cgroup"
    );
    assert_eq!(
        server.show_variables()["innodb_buffer_pool_size"],
        (1u64 << 30).to_string(),
        "half of the limit"
    );
    stack.destroy().unwrap();
}
