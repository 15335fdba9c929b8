//! `bakeoff run tpch` through the command line on an ext4 loop stack (root; PostgreSQL for its
//! half; in CI for real): every phase timed and accounted, TPC-H's row counts, the 22 queries
//! answering; the server inside the run's memory cgroup under `--mem-limit`; a kill -9 during
//! the load followed by `bakeoff cleanup` leaves nothing behind; `compare` shows the phases as
//! rows and the stacks as columns; the keys a TPC-H run refuses.

mod common;
use bakeoff_testkit::{privileged_shared_turn, shared};
use common::db::*;
use common::Scene;
use serde_json::Value;
use std::time::Duration;

/// The phases of a TPC-H run, in order.
const PHASES: [&str; 7] = [
    "initdb",
    "tpch.schema",
    "tpch.load",
    "tpch.indexes",
    "tpch.keys",
    "tpch.analyze",
    "tpch.queries",
];

fn phase<'r>(record: &'r Value, name: &str) -> &'r Value {
    let phases = record["phases"].as_array().unwrap();
    let found = phases.iter().find(|p| p["name"] == name);
    found.unwrap_or_else(|| panic!("no phase {name} in {phases:#?}"))
}

/// What every TPC-H run at SF 0.01 must show, on either database.
fn assert_tpch_at_sf_001(r: &Value, db: &str) {
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    let names: Vec<&str> = (r["phases"].as_array().unwrap().iter())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, PHASES);
    for name in PHASES {
        let p = phase(r, name);
        assert_eq!(p["status"], "completed", "{name}: {}", p["error"]);
        assert!(f(&p["real_s"]) > 0.0, "{name} timed: {}", p["real_s"]);
        assert!(f(&p["user_s"]) + f(&p["sys_s"]) > 0.0, "{name}: CPU {p}");
        assert!(p["cpu"]["busy_pct"].is_number(), "{name}: machine CPU");
        assert!(p["device_write_bytes"].is_number(), "{name}: device bytes");
    }
    // The initdb phase ran before the window: it started before the phases in it.
    assert!(f(&phase(r, "initdb")["start_offset_s"]) < 0.0);
    let load = phase(r, "tpch.load");
    assert_eq!(load["rows"], 86_805, "rows loaded at SF 0.01");
    assert!(
        f(&load["device_write_bytes"]) > 1e6,
        "the load wrote: {load}"
    );
    let tables = &r["database"]["load"]["rows"];
    assert_eq!(
        (&tables["orders"], &tables["lineitem"]),
        (&15_000.into(), &60_175.into())
    );
    let queries = phase(r, "tpch.queries")["steps"].as_array().unwrap();
    let names: Vec<String> = (1..=22).map(|n| format!("Q{n}")).collect();
    assert_eq!(
        queries
            .iter()
            .map(|q| q["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        names
    );
    // Every query returns rows; Q17's one row at SF 0.01 is NULL (no part of Brand#23 in a
    // MED BOX: docs/tpch.md), still one row.
    for q in queries {
        assert!(q["rows"].as_u64().unwrap() >= 1, "{q}");
        assert!(f(&q["real_s"]) > 0.0, "{q}");
    }
    assert_eq!(
        (&queries[0]["rows"], &queries[16]["rows"]),
        (&4.into(), &1.into())
    );
    let database = &r["database"];
    assert_eq!(database["db"], db);
    assert!(!database["settings"].as_object().unwrap().is_empty());
    assert!(r["space"]["used_bytes"].as_u64().unwrap() > 10 << 20);
}

#[test]
fn tpch_on_postgres_times_every_phase_with_the_servers_cpu_and_checks_the_rows() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let run = scene.db_run("tpch", "ext4", "db=postgres,sf=0.01", &[]);
    let r = scene.db_record(run);
    assert_tpch_at_sf_001(&r, "postgres");
    assert!(r["database"]["version"]
        .as_str()
        .unwrap()
        .contains("PostgreSQL"));
    let load = phase(&r, "tpch.load");
    assert_eq!(load["cpu_source"], "bakeoff_and_server");
    // The server (a daemon of the stack) did the COPY's parsing and writing.
    assert!(f(&load["cpu"]["split"]["daemons_us"]) > 0.0, "{load}");
    assert!(
        scene.db_leftovers().is_empty(),
        "{:#?}",
        scene.db_leftovers()
    );
}

#[test]
fn tpch_on_sqlite_times_every_phase_and_prints_the_queries() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = db_scene();
    let set = "db=sqlite,sf=0.01,sqlite.synchronous=normal";
    let json = scene.state.path().join("run.json");
    let out = (scene.db_run("tpch", "ext4", set, &["--json"]).arg(&json))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_tpch_at_sf_001(&r, "sqlite");
    assert_eq!(phase(&r, "tpch.load")["cpu_source"], "bakeoff");
    assert_eq!(
        r["database"]["settings"]["synchronous"], "normal",
        "read back"
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    for text in ["tpch.queries", "rows", "86,805", "queries  Q1 ", "Q22 "] {
        assert!(summary.contains(text), "{text} in\n{summary}");
    }
    assert!(!summary.contains("TPM"), "no transactions here:\n{summary}");
    assert!(scene.db_leftovers().is_empty());
}

#[test]
fn a_corrupted_row_fails_the_run_naming_the_query_that_answered_wrongly() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = db_scene();
    let json = scene.state.path().join("run.json");
    // One line item's quantity off by one: Q1's sum for its group differs, row counts do not.
    let corrupt = "UPDATE lineitem SET l_quantity = l_quantity + 1 \
                   WHERE l_orderkey = 1 AND l_linenumber = 1";
    let out = (scene
        .db_run("tpch", "ext4", "db=sqlite,sf=0.01", &["--json"])
        .arg(&json))
    .env("BAKEOFF_TEST_TPCH_CORRUPT", corrupt)
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["status"], "failed", "{}", r["error"]);
    let queries = phase(&r, "tpch.queries");
    assert_eq!(queries["status"], "failed");
    let error = queries["error"].as_str().unwrap();
    assert!(
        error.contains("Q1 (Pricing Summary Report): row ")
            && error.contains("SQLite's answer on a copy of the same generated data"),
        "{error}"
    );
    assert!(
        !error.contains("Q6 "),
        "Q6 does not read the quantity summed: {error}"
    );
    assert!(scene.db_leftovers().is_empty());
}

/// The pid of the postmaster whose data directory is under `root`, once it runs.
fn postmaster_under(root: &str) -> Option<String> {
    let ps = std::process::Command::new("ps")
        .args(["-eo", "pid=,args="])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&ps.stdout).to_string();
    text.lines()
        .map(str::trim)
        .find(|l| l.contains(" -D ") && l.contains(root) && l.contains("postgres"))
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
}

/// The memory limit of the cgroup a `/proc/PID/cgroup` text names: cgroup v1's memory
/// controller where it is mounted (this machine's hybrid layout), else v2's unified one.
fn memory_limit(cgroup: &str) -> Option<u64> {
    let line = |tag: &str| {
        cgroup
            .lines()
            .find_map(|l| l.split_once(tag).map(|(_, p)| p))
    };
    let file = match line(":memory:") {
        Some(path) => format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"),
        None => format!("/sys/fs/cgroup{}/memory.max", line("0::")?),
    };
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

#[test]
fn under_a_memory_limit_the_server_runs_in_the_runs_cgroup() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let run = scene.db_run(
        "tpch",
        "ext4",
        "db=postgres,sf=0.01",
        &["--mem-limit", "256m"],
    );
    let (mut child, lines) = spawn_watched(run);
    wait_for(&lines, "phase tpch.schema", Duration::from_secs(120));
    let root = scene.images.path().to_string_lossy().to_string();
    let pid = postmaster_under(&root).expect("the server runs during the phases");
    let cgroup_of = |pid: &str| std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let server = cgroup_of(&pid);
    assert_eq!(
        server,
        cgroup_of(&child.id().to_string()),
        "server and bakeoff"
    );
    assert_eq!(
        memory_limit(&server),
        Some(256 << 20),
        "the cap on {server}"
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(scene.db_leftovers().is_empty());
}

#[test]
fn kill_9_in_the_load_then_cleanup_leaves_no_server_socket_mount_or_loop() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    // SF 0.1: several seconds of load to kill it in.
    let run = scene.db_run("tpch", "ext4", "db=postgres,sf=0.1", &[]);
    let (mut child, lines) = spawn_watched(run);
    wait_for(&lines, "phase tpch.load (2/6)", Duration::from_secs(120));
    std::thread::sleep(Duration::from_secs(1));
    signal(&child, "-KILL");
    child.wait().unwrap();
    assert!(
        !scene.db_leftovers().is_empty(),
        "kill -9 left the run's state"
    );
    scene.assert_cleanup_leaves_nothing(child.id(), "kill -9 in the load");
}

#[test]
fn compare_shows_tpch_phases_as_rows_and_stacks_as_columns() {
    if !postgres() {
        return;
    }
    let _turn = shared();
    let scene = db_scene();
    let images = scene.images.path().to_str().unwrap().to_string();
    let out_dir = scene.state.path().join("study");
    let out = scene
        .cmd(&[
            "compare",
            "--stack",
            "ext4",
            "--stack",
            "xfs",
            "--workload",
            "tpch",
        ])
        .args([
            "--set",
            "db=postgres,sf=0.01",
            "--repeat",
            "1",
            "--size",
            "1g",
        ])
        .args(["--images", &images, "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let table = String::from_utf8_lossy(&out.stdout);
    let header = table
        .lines()
        .find(|l| l.contains("tpch phase"))
        .unwrap_or_default();
    assert!(
        header.contains("ext4 (baseline)") && header.contains("xfs"),
        "{table}"
    );
    for name in PHASES.iter().chain(&["total", "space used MiB"]) {
        let row = table.lines().find(|l| l.contains(&format!(" {name} ")));
        let row = row.unwrap_or_else(|| panic!("no row {name} in\n{table}"));
        // The xfs column's ratio to the baseline.
        assert!(row.contains('×'), "{row}");
    }
    assert!(scene.db_leftovers().is_empty());
}

#[test]
fn run_keys_and_an_impossible_scale_factor_are_exit_2_naming_the_key() {
    let scene = Scene::new();
    for (set, key) in [
        ("runtime=30s", "runtime"),
        ("ramp_time=5s", "ramp_time"),
        ("sf=0.001", "sf"),
        ("db=sqlite,pg.work_mem=8MB", "pg.work_mem"),
    ] {
        let out = scene
            .cmd(&["run", "tpch", "--stack", "ext4", "--set", set, "--dry-run"])
            .output()
            .unwrap();
        assert_exit(&out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(key) && err.starts_with("bakeoff: error:"),
            "{set}: {err}"
        );
    }
    let out = scene.cmd(&["workloads", "show", "tpch"]).output().unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    for key in ["sf", "load_threads", "sqlite.page_size", "pg.KEY"] {
        assert!(text.contains(key), "{key} in\n{text}");
    }
}
