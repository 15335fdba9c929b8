//! `run --crash-states N` end to end (root and /dev/fuse; in CI for real): the stack's writes
//! recorded under its loop devices, crash states drawn and checked, the record's `durability`
//! section, the terminal's `risk` lines and the findings; what it refuses up front; and that a
//! kill -9 while running or while checking, then `bakeoff cleanup`, leaves nothing (the write
//! log's FUSE mount included). PostgreSQL's defaults staying clean in every state, and SQLite's
//! `synchronous=FULL`, are shown below the CLI (crates/db/tests/durability_*.rs).

mod common;
use bakeoff_testkit::{privileged_shared_turn, privileged_zfs_turn};
use common::db::*;
use common::Scene;
use std::path::Path;
use std::time::Duration;

/// SQLite that never syncs: TPC-C's acknowledged commits and its WAL checkpoints' page writes
/// reach the disk in whatever order the kernel writes them back (the kill test's run).
const UNSYNCED: &str = "db=sqlite,sqlite.synchronous=off,sqlite.journal_mode=wal,warehouses=1,\
                        terminals=2,runtime=4s,ramp_time=0";

fn usage_refusal(scene: &Scene, args: &[&str], says: &str) {
    let out = scene.cmd(args).arg("--dry-run").output().unwrap();
    assert_exit(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(says), "{args:?}: {err}");
}

#[test]
fn crash_states_are_refused_where_they_cannot_be_checked() {
    let scene = Scene::new();
    let tpcc = |stack: &str, set: &str, n: &str| {
        let set = format!("db=sqlite,warehouses=1,{set}");
        [
            "run",
            "tpcc",
            "--stack",
            stack,
            "--set",
            &set,
            "--crash-states",
            n,
        ]
        .map(String::from)
    };
    let refuse = |args: [String; 8], says: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        usage_refusal(&scene, &args, says)
    };
    refuse(tpcc("ext4", "runtime=2s", "0"), "at least 1 state");
    refuse(tpcc("tmpfs", "runtime=2s", "3"), "ext4, xfs, btrfs and zfs");
    refuse(tpcc("raw", "runtime=2s", "3"), "ext4, xfs, btrfs and zfs");
    refuse(tpcc("ext4:offset=1m", "runtime=2s", "3"), "offset=");
    let io = ["run", "randwrite", "--stack", "ext4", "--crash-states", "3"];
    usage_refusal(&scene, &io, "add --set verify=crc32c to randwrite");
    let dir = scene.images.path().to_str().unwrap();
    let target = ["run", "tpcc", "--target", dir, "--crash-states", "3"];
    usage_refusal(&scene, &target, "instead of --target");
    let log = |log: &'static str| {
        let set = "db=postgres,warehouses=1,runtime=2s";
        [
            "run",
            "tpcc",
            "--stack",
            "ext4",
            "--log-stack",
            log,
            "--set",
            set,
            "--crash-states",
            "3",
        ]
    };
    usage_refusal(&scene, &log("tmpfs"), "ext4, xfs, btrfs and zfs log stacks");
    usage_refusal(&scene, &log("xfs:offset=1m"), "offset= is not supported");
    let io_log = [
        "run",
        "oltp",
        "--stack",
        "ext4",
        "--log-stack",
        "xfs",
        "--set",
        "verify=crc32c",
        "--crash-states",
        "3",
    ];
    usage_refusal(
        &scene,
        &io_log,
        "an I/O workload's log stack is not recorded",
    );
    let capture = [
        "run",
        "tpcc",
        "--stack",
        "ext4",
        "--capture",
        "/tmp/t",
        "--crash-states",
        "3",
    ];
    usage_refusal(&scene, &capture, "cannot be used with");
}

/// Two cells on ext4, SQLite synchronous=full (the baseline) and off, 8 crash states each.
const STUDY: &str = r#"
repeat = 1
crash_states = 8

[[stack]]
name = "synced"
spec = "ext4"
set = { "sqlite.synchronous" = "full" }

[[stack]]
name = "unsynced"
spec = "ext4"
set = { "sqlite.synchronous" = "off" }

[[workload]]
name = "tpcc"
db = "sqlite"
"sqlite.journal_mode" = "wal"
warehouses = 1
terminals = 2
runtime = "4s"
ramp_time = "0"
"#;

#[test]
fn a_comparison_shows_unsynced_sqlite_at_risk_beside_its_synced_baseline() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    if !fuse() {
        return;
    }
    let scene = db_scene();
    let study = scene.state.path().join("risk.toml");
    std::fs::write(&study, STUDY).unwrap();
    let out = scene.state.path().join("risk");
    let (study, out) = (study.to_str().unwrap(), out.to_str().unwrap());
    let images = scene.images.path().to_str().unwrap();
    let args = [
        "compare", "--study", study, "--out", out, "--images", images,
    ];
    let done = scene.cmd(&args).output().unwrap();
    assert_exit(&done, 0);
    let table = String::from_utf8_lossy(&done.stdout);
    assert!(
        table.contains("states losing") && table.contains("states damaged %"),
        "{table}"
    );
    let record = |cell: &str| -> serde_json::Value {
        let runs = Path::new(out).join("runs");
        let dir = (std::fs::read_dir(&runs).unwrap().map(|e| e.unwrap().path()))
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(cell))
            .unwrap_or_else(|| panic!("no cell {cell} in {}", runs.display()));
        serde_json::from_str(&std::fs::read_to_string(dir.join("rep-1.json")).unwrap()).unwrap()
    };
    let (synced, unsynced) = (record("synced-"), record("unsynced-"));
    for r in [&synced, &unsynced] {
        let d = &r["durability"];
        let states = d["states"].as_array().unwrap_or_else(|| panic!("{d}"));
        assert_eq!(f(&d["states_checked"]) as usize, states.len());
        assert!(states.len() >= 6, "{} states drawn of 8", states.len());
        let sum: f64 = d["outcomes"].as_object().unwrap().values().map(f).sum();
        assert_eq!(sum as usize, states.len(), "{}", d["outcomes"]);
        assert!(f(&d["acknowledged"]) > 50.0, "{}", d["acknowledged"]);
        assert!(f(&d["recording"]["writes"]) > 0.0 && f(&d["recording"]["flushes"]) > 0.0);
        for s in states.iter().filter(|s| s["outcome"] != "clean") {
            let said = s["problems"].as_array().is_some_and(|p| !p.is_empty());
            assert!(said || f(&s["lost"]) > 0.0, "{s}");
        }
    }
    // Synced, every state is clean (a stop-31 test below the CLI saw 6 of 6 in three runs). Unsynced,
    // observed: 6 of 8 states corrupt or unopenable (a WAL checkpoint's page writes half
    // there), so a state it survives is the exception: at least one of eight is not clean.
    let clean = |r: &serde_json::Value| f(&r["durability"]["outcomes"]["clean"]);
    assert_eq!(
        clean(&synced),
        f(&synced["durability"]["states_checked"]),
        "{synced}"
    );
    assert!(clean(&unsynced) < f(&unsynced["durability"]["states_checked"]));
    let ids = common::finding_ids(&unsynced);
    assert!(
        ids.iter()
            .any(|i| i == "crash_damage" || i == "acknowledged_commits_lost"),
        "{ids:?}"
    );
    assert!(table.contains("riskier_than_baseline"), "{table}");
    scene.assert_nothing_left();
}

#[test]
fn kill_9_while_running_or_checking_then_cleanup_leaves_nothing() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    if !fuse() {
        return;
    }
    let scene = db_scene();
    let set = UNSYNCED.replace("runtime=4s", "runtime=30s");
    for (when, line) in [
        ("running", "then 30 s measured"),
        ("checking", "crash state 2/"),
    ] {
        let set = if when == "checking" { UNSYNCED } else { &set };
        let cmd = scene.db_run("tpcc", "ext4", set, &["--crash-states", "40"]);
        let (mut child, lines) = spawn_watched(cmd);
        wait_for(&lines, line, Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(500));
        child.kill().unwrap();
        child.wait().unwrap();
        scene.assert_cleanup_leaves_nothing(child.id(), &format!("kill -9 while {when}"));
        let left: Vec<_> = std::fs::read_dir(scene.images.path()).unwrap().collect();
        assert!(left.is_empty(), "after kill -9 while {when}: {left:?}");
    }
}

#[test]
fn mariadb_defaults_recover_every_acknowledged_commit() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    if !mariadb() || !fuse() {
        return;
    }
    let scene = db_scene();
    // InnoDB's defaults: the redo log synced at every commit, the doublewrite buffer on.
    let set =
        "db=mariadb,warehouses=1,terminals=2,runtime=3s,ramp_time=0,my.innodb_log_file_size=64M";
    let r = scene.db_record(scene.db_run("tpcc", "ext4", set, &["--crash-states", "3"]));
    let d = &r["durability"];
    assert!(f(&d["states_checked"]) >= 2.0, "{d}");
    assert_eq!(d["outcomes"]["clean"], d["states_checked"], "{d}");
    assert!(f(&d["acknowledged"]) > 20.0, "{d}");
    scene.assert_nothing_left();
}

#[test]
fn a_log_stacks_writes_are_recorded_and_its_state_recovered_beside_the_data_stacks() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    if !postgres() || !fuse() {
        return;
    }
    let scene = db_scene();
    // PostgreSQL's WAL on an xfs log stack, its data on ext4: one log orders both stacks'
    // writes; each state brings both back (pg_wal pointed at the log stack's state).
    let set = "db=postgres,warehouses=1,terminals=2,runtime=4s,ramp_time=0";
    let extra = ["--log-stack", "xfs", "--crash-states", "4"];
    let r = scene.db_record(scene.db_run("tpcc", "ext4", set, &extra));
    let d = &r["durability"];
    assert!(f(&d["states_checked"]) >= 3.0, "{d}");
    assert_eq!(d["outcomes"]["clean"], d["states_checked"], "{d}");
    // (A state whose WAL was not found would not start: PostgreSQL needs it to recover.)
    assert!(f(&d["acknowledged"]) > 20.0, "{d}");
    scene.assert_nothing_left();
}

#[test]
fn zfs_states_are_imported_scrubbed_and_checked_and_leave_no_pool_behind() {
    // zfs-fuse is one daemon per machine: one ZFS test at a time; it checks outcomes only.
    let Some(_turn) = privileged_zfs_turn() else {
        return;
    };
    if !postgres() || !fuse() {
        return;
    }
    let scene = db_scene();
    // The WAL on a log pool of its own: each state imports both pools (one zfs-fuse serves
    // them) and points pg_wal at the log pool's dataset.
    let set = "db=postgres,warehouses=1,terminals=2,runtime=4s,ramp_time=0";
    let extra = ["--log-stack", "zfs", "--crash-states", "6"];
    let r = scene.db_record(scene.db_run("tpcc", "zfs", set, &extra));
    let d = &r["durability"];
    assert!(f(&d["states_checked"]) >= 4.0, "{d}");
    assert!(f(&d["acknowledged"]) > 20.0, "{d}");
    // Copy-on-write: every state's pool imports and its scrub finds nothing.
    assert_eq!(d["outcomes"]["fs_damaged"], 0, "{d}");
    assert_eq!(d["outcomes"]["corrupt"], 0, "{d}");
    // zfs-fuse does not make a rename durable when fsync returns (docs/durability.md): a state
    // may hold pg_logical/replorigin_checkpoint (written, synced and renamed at each
    // checkpoint) empty or as zeros, and then PostgreSQL refuses to start. Any other reason
    // would be news.
    let states = d["states"].as_array().unwrap();
    for state in states {
        if state["outcome"] == "db_failed_to_start" {
            let problems = state["problems"].to_string();
            let renamed = [
                "could not read file",
                "replication checkpoint has wrong magic 0",
            ];
            assert!(renamed.iter().any(|r| problems.contains(r)), "{state}");
        }
    }
    // Some states get as far as the database's own checks and the acknowledged commits.
    let reached = states
        .iter()
        .filter(|s| s["outcome"] != "db_failed_to_start");
    assert!(reached.count() >= 1, "{d}");
    // No daemon left serving the states' pools (the run's and the checks' own both stopped;
    // one that exited may wait a moment to be reaped).
    let live_zfs_fuse = || {
        let ps = ["-C", "zfs-fuse", "-o", "stat="];
        let out = std::process::Command::new("ps").args(ps).output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|s| !s.starts_with('Z'))
    };
    assert!(!live_zfs_fuse(), "zfs-fuse still runs");
    scene.assert_nothing_left();
}
