//! Real databases through the command line: TPC-C on SQLite and PostgreSQL, pgbench; what each
//! transaction costs on which stack's devices; and that a killed or interrupted run leaves no
//! server, socket directory, mount or loop device behind (root and PostgreSQL; in CI for real).

mod common;
use bakeoff_testkit::{privileged, privileged_shared_turn, serial, shared};
use common::db::*;
use common::Scene;
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Sum of a device field over the record's devices of `role`.
fn device_sum(record: &serde_json::Value, role: &str, field: &str) -> (usize, f64) {
    let of_role: Vec<&serde_json::Value> = record["devices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["role"] == role)
        .collect();
    (of_role.len(), of_role.iter().map(|d| f(&d[field])).sum())
}

fn assert_consistent(record: &serde_json::Value) {
    let checks = record["database"]["consistency"].as_array().unwrap();
    assert_eq!(checks.len(), 4, "{checks:#?}");
    assert!(checks.iter().all(|c| c["passed"] == true), "{checks:#?}");
    assert_eq!(record["status"], "completed");
}

#[test]
fn sqlite_tpcc_writes_to_the_device_on_ext4_and_not_on_tmpfs() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = db_scene();
    // The warm-up is not what this test is about: capped at 5 s (CI's time).
    let set = "db=sqlite,warehouses=1,terminals=2,runtime=10s,ramp_max=5s";
    for (stack, on_device) in [("ext4", true), ("tmpfs:size=1g", false)] {
        let r = scene.db_record(scene.db_run("tpcc", stack, set, &[]));
        assert_consistent(&r);
        let s = &r["summary"];
        assert!(f(&s["nopm"]) > 0.0, "{stack}: NOPM {}", s["nopm"]);
        let per_txn = &s["device_write_bytes_per_txn"];
        if on_device {
            assert!(f(per_txn) > 0.0, "{stack}: device bytes per txn {per_txn}");
            assert!(f(&r["database"]["load"]["device_write_bytes"]) > 0.0);
        } else {
            assert!(per_txn.is_null(), "{stack}: no device, yet {per_txn}");
        }
        assert_eq!(r["plan"]["settings"]["procedures"], "false", "{stack}");
        // SQLite runs on the terminals' threads: its share is measured there.
        assert!(f(&s["server_cpu_us_per_txn"]) > 0.0);
        assert!(f(&s["client_cpu_us_per_txn"]) >= 0.0);
        assert!(f(&r["database"]["window"]["engine_cpu_us"]) > 0.0);
        assert!(
            scene.db_leftovers().is_empty(),
            "{:#?}",
            scene.db_leftovers()
        );
    }
}

#[test]
fn postgres_wal_lands_on_the_log_stack_and_each_stack_is_reported_apart() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let set = "db=postgres,warehouses=1,terminals=2,runtime=10s,ramp_max=10s";
    // The default size (`auto`), not the scene's 1 GiB.
    let images = scene.images.path().to_str().unwrap().to_string();
    let mut run = scene.cmd(&["run", "tpcc", "--stack", "ext4", "--images", &images]);
    run.args(["--log-stack", "xfs", "--set", set]);
    let r = scene.db_record(run);
    assert_consistent(&r);
    // `--size auto`: the log stack holds twice the default max_wal_size (1 GB); the data
    // stack the load and a bound on the rows a run adds (4 MiB/s for each busy terminal over
    // the warm-up's cap and the window), beyond the 1 GiB floor.
    let size = |stack: &str| f(&r[stack]["backing"][0]["size_bytes"]);
    assert!(
        size("log_stack") >= 2.0 * (1u64 << 30) as f64,
        "{}",
        r["log_stack"]
    );
    let busy = 2.min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    let growth = (busy * (4 << 20) * (10 + 10)) as f64;
    assert!(
        size("stack") >= (130 << 20) as f64 + growth,
        "{}",
        r["stack"]
    );
    // By default each transaction is one call of its PL/pgSQL function.
    assert_eq!(r["plan"]["settings"]["procedures"], "true");
    let wal = f(&r["database"]["window"]["wal_bytes"]);
    let (logs, log_written) = device_sum(&r, "log", "write_bytes");
    let (datas, data_written) = device_sum(&r, "stack", "write_bytes");
    assert!(logs >= 1 && datas >= 1, "{}", r["devices"]);
    assert!(wal > 1e6, "the window wrote {wal} bytes of WAL");
    assert!(
        log_written >= 0.9 * wal,
        "log device wrote {log_written} bytes for {wal} bytes of WAL"
    );
    // The data stack's writes are its own: far from the WAL's, and the log stack's figure
    // is its own summary field.
    assert!(
        data_written < log_written,
        "data {data_written}, log {log_written}"
    );
    let s = &r["summary"];
    assert!(f(&s["log_device_write_bytes_per_txn"]) > f(&s["wal_bytes_per_txn"]) * 0.9);
    // A commit syncs the WAL at most once (fewer with group commit); the WAL writer and the
    // checkpoint add a few.
    let syncs = f(&s["wal_syncs_per_txn"]);
    assert!(
        syncs > 0.0 && syncs < 2.0,
        "{syncs} WAL syncs a transaction"
    );
    // Whole checkpoint cycles: the window closes with a checkpoint, so the data pages its
    // transactions dirtied are among the data stack's writes per transaction.
    let window = &r["database"]["window"];
    assert!(f(&window["checkpoints"]) >= 1.0, "{window}");
    let block = r["database"]["settings"]["block_size"].as_str().unwrap();
    let pages = f(&window["checkpoint_buffers"]) * block.parse::<f64>().unwrap();
    assert!(pages > 0.0, "the checkpoints wrote pages: {window}");
    let txns = f(&s["tps"]) * f(&r["measured_ns"]) / 1e9;
    let per_txn = f(&s["device_write_bytes_per_txn"]);
    assert!(
        per_txn >= pages / txns,
        "data stack {per_txn:.0} B/txn, checkpoints {:.0} B/txn",
        pages / txns
    );
    let timeout = &r["database"]["settings"]["checkpoint_timeout"];
    assert_eq!(timeout, "30s", "half of 10 s, at least PostgreSQL's 30 s");
    // The load ends with a checkpoint and a sync: its device bytes hold the whole database.
    let load = &r["database"]["load"];
    assert!(
        f(&load["device_write_bytes"]) >= 0.8 * f(&load["size_bytes"]),
        "the load wrote {} for a database of {}",
        load["device_write_bytes"],
        load["size_bytes"]
    );
    assert_eq!(r["log_stack"]["kind"], "xfs", "{}", r["log_stack"]);
    assert!(r["database"]["paths"]["wal_directory"]
        .as_str()
        .is_some_and(|p| p.contains("pgwal")));
    assert!(
        scene.db_leftovers().is_empty(),
        "{:#?}",
        scene.db_leftovers()
    );
}

#[test]
fn a_zfs_log_pool_beside_a_zfs_data_pool_shares_one_zfs_fuse() {
    if !postgres() {
        return;
    }
    let _serial = serial();
    let scene = db_scene();
    // A 5 s window once saw the log pool write 45 MB for 109 MB of WAL in CI (139 MB for 75 MB
    // when the machine is quiet): zfs-fuse writes a pool's data in transaction groups, one every
    // 5 s, so a window that short holds one group or two. Three or more make the count steady.
    let set = "db=postgres,warehouses=1,terminals=2,runtime=15s,ramp_max=5s";
    let data = "zfs:recordsize=8k,checksum=off";
    let log = ["--log-stack", "zfs:checksum=off"];
    let r = scene.db_record(scene.db_run("tpcc", data, set, &log));
    assert_consistent(&r);
    let shared = &r["log_stack"]["properties"]["daemon"];
    assert!(
        shared.as_str().is_some_and(|d| d.starts_with("shared")),
        "{}",
        r["log_stack"]
    );
    let wal = f(&r["database"]["window"]["wal_bytes"]);
    let (_, log_written) = device_sum(&r, "log", "write_bytes");
    eprintln!(
        "WAL {wal}, log pool wrote {log_written}, {} txn, data pool wrote {:?}",
        r["database"]["window"]["commits"],
        device_sum(&r, "stack", "write_bytes")
    );
    assert!(
        log_written >= 0.9 * wal,
        "log pool wrote {log_written} for {wal} of WAL"
    );
    // Different daemon settings cannot share the one zfs-fuse: refused, and nothing is left.
    let other_arc = ["--log-stack", "zfs:arc=64m"];
    let out = scene
        .db_run("tpcc", data, set, &other_arc)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("one zfs-fuse per machine"));
    assert!(
        scene.db_leftovers().is_empty(),
        "{:#?}",
        scene.db_leftovers()
    );
}

#[test]
fn pgbench_through_bakeoff_reports_the_tps_pgbench_printed() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let set = "scale=2,clients=2,jobs=2,runtime=5s";
    let r = scene.db_record(scene.db_run("pgbench", "tmpfs:size=1g", set, &[]));
    let printed = f(&r["database"]["pgbench"]["tps"]);
    let ours = f(&r["summary"]["tps"]);
    assert!(
        (ours - printed).abs() <= 0.01 * printed,
        "bakeoff {ours} tps, pgbench printed {printed}"
    );
    assert!(f(&r["summary"]["txn_lat_p99_us"]) > 0.0);
    // pgbench warmed up until the server's commits, WAL and full-page images were steady.
    let steady = &r["steady"];
    assert_eq!(steady["warmup"], "auto", "{steady}");
    assert!(f(&steady["warmup_s"]) >= 4.0, "{steady}");
    let names: Vec<&str> = (steady["checks"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["ops_s", "wal_bytes_per_txn", "fpi_per_txn"],
        "{steady}"
    );
    assert!(
        scene.db_leftovers().is_empty(),
        "{:#?}",
        scene.db_leftovers()
    );
}

#[test]
fn a_wrong_postgresql_setting_is_exit_2_before_anything_is_built() {
    if !postgres() {
        return;
    }
    let scene = db_scene();
    for (set, named) in [
        ("db=postgres,pg.shared_bufers=1GB", "shared_bufers"),
        ("db=postgres,pg.work_mem=lots", "work_mem"),
    ] {
        let started = Instant::now();
        let out = scene.db_run("tpcc", "ext4", set, &[]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{set}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{set}: {err}");
        assert!(!err.contains("building stack"), "{set}: {err}");
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(std::fs::read_dir(scene.images.path())
            .unwrap()
            .next()
            .is_none());
    }
}

#[test]
fn stored_procedures_on_sqlite_are_exit_2_naming_the_key_before_anything_is_built() {
    if !privileged() {
        return;
    }
    let scene = db_scene();
    let out = (scene.db_run("tpcc", "ext4", "db=sqlite,procedures=true", &[]))
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("procedures") && err.contains("db=postgres"),
        "{err}"
    );
    assert!(!err.contains("building stack"), "{err}");
    assert!(std::fs::read_dir(scene.images.path())
        .unwrap()
        .next()
        .is_none());
}

/// Starts a PostgreSQL TPC-C run that would take a while, and waits for `phase` (a line of
/// its standard error).
fn start_pg_run(scene: &Scene, phase: &str) -> (Child, Receiver<String>) {
    let set = "db=postgres,warehouses=1,terminals=2,runtime=60s";
    let (child, lines) = spawn_watched(scene.db_run("tpcc", "ext4", set, &["--log-stack", "ext4"]));
    wait_for(&lines, phase, Duration::from_secs(90));
    // Into the phase: the loaders are copying, or the terminals are running.
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
fn kill_9_in_the_load_and_the_window_then_cleanup_leaves_no_server_or_stack() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    for phase in ["loading TPC-C", "measured"] {
        let (mut child, _lines) = start_pg_run(&scene, phase);
        signal(&child, "-KILL");
        child.wait().unwrap();
        assert!(
            !scene.db_leftovers().is_empty(),
            "kill -9 in {phase} left the run's state"
        );
        scene.assert_cleanup_leaves_nothing(child.id(), &format!("kill -9 in {phase}"));
    }
}

#[test]
fn ctrl_c_in_the_window_is_exit_130_with_the_server_stopped() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let (mut child, _lines) = start_pg_run(&scene, "measured");
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left = scene.db_leftovers();
    assert!(left.is_empty(), "after Ctrl-C: {left:#?}");
}

/// A stack that passes the dataset estimate honestly but fills up during the load: 124 MiB of
/// ext4 holds about 100.4 MiB by the capacity model (102 MiB once built), room for one
/// warehouse's estimated 100 MiB of tables, so the dry run and the run's own check pass; but
/// the cluster also writes its catalog, the indexes and WAL segments the estimate leaves out,
/// and PostgreSQL PANICs on its WAL while the client knows only "error communicating with the
/// server". The error names the server's own cause from its log, the file and the full disk.
#[test]
fn a_full_disk_during_a_postgresql_load_is_named_from_the_servers_log() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let images = scene.images.path().to_str().unwrap().to_string();
    let set = "db=postgres,warehouses=1,terminals=1,runtime=2s";
    let out = scene
        .cmd(&[
            "run", "tpcc", "--quiet", "--stack", "ext4", "--images", &images,
        ])
        .args(["--size", "170m", "--set", set])
        .output()
        .unwrap();
    assert_exit(&out, 4);
    let err = String::from_utf8_lossy(&out.stderr);
    // The 1-warehouse load (about 130 MiB) fits the size given, so the run starts; its WAL
    // (twice the 1 GB max_wal_size) does not, and the user is told so before the build.
    assert!(
        err.contains("warning: stack ext4 holds about") && err.contains("--size auto"),
        "{err}"
    );
    assert!(err.contains("loading TPC-C"), "{err}");
    assert!(err.contains("the server's log says:"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("pgdata") && err.contains("--size"), "{err}");
    let left = scene.db_leftovers();
    assert!(left.is_empty(), "{left:#?}");
}
