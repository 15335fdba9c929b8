//! MariaDB through the command line: sysbench against the server bakeoff manages, the TPS it
//! printed and what each transaction cost (the redo log on its own stack, InnoDB's counters);
//! a wrong `my.` variable refused before anything is built; a killed or interrupted run
//! leaves no server, socket directory, mount or loop device behind (root, MariaDB and
//! sysbench; in CI for real).

mod common;
use bakeoff_testkit::shared;
use common::db::*;
use common::Scene;
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Sum of a device field over the record's devices of `role`.
fn device_sum(record: &serde_json::Value, role: &str, field: &str) -> f64 {
    let devices = record["devices"].as_array().unwrap();
    let of_role = devices.iter().filter(|d| d["role"] == role);
    of_role.map(|d| f(&d[field])).sum()
}

#[test]
fn sysbench_reports_the_tps_it_printed_and_the_redo_log_lands_on_the_log_stack() {
    if !mariadb() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    // A 256 MiB redo log, so that it fits the scene's 1 GiB stacks.
    let set = "tables=2,table_size=20000,threads=2,runtime=10s,ramp_max=20s,\
               my.innodb_log_file_size=256M";
    let run = scene.db_run("sysbench", "xfs", set, &["--log-stack", "xfs"]);
    let r = scene.db_record(run);
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    assert_eq!(r["database"]["db"], "mariadb");
    let printed = &r["database"]["sysbench"];
    let (theirs, ours) = (f(&printed["tps"]), f(&r["summary"]["tps"]));
    assert!(
        (ours - theirs).abs() <= 0.01 * theirs,
        "bakeoff {ours} tps, sysbench printed {theirs}"
    );
    assert!(f(&r["summary"]["txn_lat_p99_us"]) > 0.0);
    // Every transaction sysbench counted committed once (sysbench's BEGIN ... COMMIT).
    let window = &r["database"]["window"];
    let commits = f(&window["commits"]);
    let transactions = f(&printed["transactions"]);
    assert!(
        (commits - transactions).abs() <= 0.01 * transactions,
        "the server counted {commits} COMMITs for sysbench's {transactions} transactions"
    );
    // The redo log is on the log stack: its device wrote at least what InnoDB logged.
    let redo = f(&window["wal_bytes"]);
    let log_written = device_sum(&r, "log", "write_bytes");
    assert!(redo > 1e6, "the window logged {redo} bytes");
    assert!(
        log_written >= 0.9 * redo,
        "log device wrote {log_written} bytes for {redo} bytes of redo"
    );
    assert!(r["database"]["paths"]["redo_directory"]
        .as_str()
        .is_some_and(|p| p.contains("myredo")));
    // InnoDB's own figures per transaction, beside the devices'.
    let s = &r["summary"];
    assert!(f(&s["innodb_data_fsyncs_per_txn"]) > 0.0, "{s}");
    assert!(f(&s["innodb_dblwr_pages_per_txn"]) >= 0.0, "{s}");
    assert!(
        window["innodb"]["dirty_pages_at_start"].is_u64(),
        "{window}"
    );
    // The warm-up waited for throughput, redo and doublewrite per transaction.
    let steady = &r["steady"];
    let names: Vec<&str> = (steady["checks"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["ops_s", "redo_bytes_per_txn", "dblwr_pages_per_txn"],
        "{steady}"
    );
    // The server's CPU is the database's.
    assert!(f(&r["cpu"]["split"]["daemons_us"]) > 0.0, "{}", r["cpu"]);
    let load = &r["database"]["load"];
    assert_eq!(f(&load["rows"]["sbtest2"]), 20_000.0, "{load}");
    let left = scene.db_leftovers();
    assert!(left.is_empty(), "{left:#?}");
}

#[test]
fn tpcc_on_mariadb_loads_checks_and_logs_its_redo_on_the_log_stack() {
    if !mariadb() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let set = "db=mariadb,warehouses=1,terminals=2,runtime=10s,ramp_max=20s,\
               my.innodb_log_file_size=256M";
    let r = scene.db_record(scene.db_run("tpcc", "xfs", set, &["--log-stack", "xfs"]));
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    // Clause 4.3.3.1's rows for one warehouse (order lines: 10 per order on average).
    let rows = &r["database"]["load"]["rows"];
    for (table, n) in [
        ("warehouse", 1.0),
        ("district", 10.0),
        ("customer", 30_000.0),
        ("history", 30_000.0),
        ("orders", 30_000.0),
        ("new_order", 9_000.0),
        ("item", 100_000.0),
        ("stock", 100_000.0),
    ] {
        assert_eq!(f(&rows[table]), n, "{table}: {rows}");
    }
    let checks = r["database"]["consistency"].as_array().unwrap();
    assert_eq!(checks.len(), 4, "{checks:#?}");
    assert!(checks.iter().all(|c| c["passed"] == true), "{checks:#?}");
    assert!(f(&r["summary"]["nopm"]) > 0.0);
    assert_eq!(r["plan"]["settings"]["procedures"], "true");
    let window = &r["database"]["window"];
    let redo = f(&window["wal_bytes"]);
    let log_written = device_sum(&r, "log", "write_bytes");
    assert!(redo > 1e6, "the window logged {redo} bytes");
    assert!(
        log_written >= 0.9 * redo,
        "log device wrote {log_written} bytes for {redo} bytes of redo"
    );
    assert!(f(&r["summary"]["innodb_pages_read_per_txn"]) >= 0.0);
    let left = scene.db_leftovers();
    assert!(left.is_empty(), "{left:#?}");
}

#[test]
fn a_wrong_mariadb_variable_is_exit_2_before_anything_is_built() {
    if !mariadb() {
        return;
    }
    let scene = db_scene();
    for (set, named) in [
        ("my.innodb_doublewrit=OFF", "innodb_doublewrit"),
        ("my.innodb_buffer_pool_size=lots", "innodb_buffer_pool_size"),
        ("my.socket=/tmp/x", "bakeoff decides"),
        ("db=postgres", "mariadb"),
    ] {
        let started = Instant::now();
        let out = scene.db_run("sysbench", "ext4", set, &[]).output().unwrap();
        assert_exit(&out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{set}: {err}");
        assert!(!err.contains("building stack"), "{set}: {err}");
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(std::fs::read_dir(scene.images.path())
            .unwrap()
            .next()
            .is_none());
    }
}

/// Starts a sysbench run that would take a while, and waits for `phase` (a line of its
/// standard error).
fn start_run(scene: &Scene, phase: &str) -> (Child, Receiver<String>) {
    let set = "tables=4,table_size=100000,threads=2,runtime=60s,my.innodb_log_file_size=256M";
    let run = scene.db_run("sysbench", "ext4", set, &["--log-stack", "ext4"]);
    let (child, lines) = spawn_watched(run);
    wait_for(&lines, phase, Duration::from_secs(120));
    // Into the phase: sysbench is inserting, or its clients are running.
    std::thread::sleep(Duration::from_secs(2));
    assert!(!scene.db_leftovers().is_empty(), "the run is under way");
    // The run's server has its socket directory, named for the run's process: what
    // `assert_cleanup_leaves_nothing` looks for is there to find.
    assert!(
        !socket_dirs_of(child.id()).is_empty(),
        "the server's socket directory"
    );
    (child, lines)
}

#[test]
fn kill_9_in_the_load_and_the_window_then_cleanup_leaves_no_mariadb_or_stack() {
    if !mariadb() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    for phase in ["loading sysbench", "measured"] {
        let (mut child, _lines) = start_run(&scene, phase);
        signal(&child, "-KILL");
        child.wait().unwrap();
        let left = scene.db_leftovers();
        assert!(
            left.iter().any(|l| l.contains("mariadbd")),
            "kill -9 in {phase} left the server: {left:#?}"
        );
        scene.assert_cleanup_leaves_nothing(child.id(), &format!("kill -9 in {phase}"));
    }
}

#[test]
fn ctrl_c_in_the_window_is_exit_130_with_mariadb_stopped() {
    if !mariadb() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let (mut child, _lines) = start_run(&scene, "measured");
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left = scene.db_leftovers();
    assert!(left.is_empty(), "after Ctrl-C: {left:#?}");
    let sockets = socket_dirs_of(child.id());
    assert!(sockets.is_empty(), "{sockets:?}");
}
