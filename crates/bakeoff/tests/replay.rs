//! Capture and replay through the command line: `bakeoff capture -- COMMAND` on a directory
//! and its replay on an ext4 loop stack with every call (root: eBPF and loop devices; in CI for
//! real); `run pgbench --capture` and the replay of that trace on the stack it was captured on
//! (PostgreSQL); the refusals, before anything is attached or built.

mod common;
use bakeoff_testkit::privileged_turn;
use common::db::*;
use common::Scene;
use serde_json::Value;
use std::path::Path;

fn ops_of(record: &Value, kind: &str) -> u64 {
    let ops = record["ops"].as_array().unwrap();
    (ops.iter().find(|o| o["kind"] == kind)).map_or(0, |o| o["ops"].as_u64().unwrap())
}

fn show(scene: &Scene, trace: &Path) -> Value {
    let out = scene
        .cmd(&["trace", "show", "--json"])
        .arg(trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_captured_command_replays_on_a_stack_with_every_call() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let db = bakeoff_testkit::scratch_dir();
    let trace = scene.state.path().join("dd.trace");
    let script = format!(
        "cd {} && dd if=/dev/zero of=f bs=8k count=64 oflag=direct,dsync status=none && mv f g \
         && cat g > /dev/null && cat missing 2>/dev/null; rm g; printf abc > h",
        db.path().display()
    );
    let out = (scene
        .cmd(&["capture", "--under"])
        .arg(db.path())
        .arg("--out")
        .arg(&trace))
    .args(["--", "sh", "-c", &script])
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("lost 0"), "{err}");
    let stats = show(&scene, &trace);
    let by_op = |op: &str| stats["totals"]["ops"][op].as_u64().unwrap_or(0);
    assert_eq!(by_op("write"), 65, "{}", stats["totals"]);
    assert_eq!(
        (by_op("rename"), by_op("unlink")),
        (1, 1),
        "{}",
        stats["totals"]
    );
    let calls = stats["totals"]["records"].as_u64().unwrap();

    let replayed = scene.run_json(&[
        "run",
        "--replay",
        trace.to_str().unwrap(),
        "--stack",
        "ext4",
    ]);
    assert_eq!(replayed["status"], "completed", "{replayed:#}");
    assert_eq!(ops_of(&replayed, "write"), 65);
    assert_eq!(replayed["replay"]["calls"], calls, "{}", replayed["replay"]);
    assert_eq!(replayed["replay"]["trace_calls"], calls);
    // h is the one file left at the end (f was renamed to g, and g removed): its 3 bytes.
    assert_eq!(
        (
            &replayed["replay"]["end_sizes_checked"],
            &replayed["replay"]["end_sizes_differ"]
        ),
        (&serde_json::json!(1), &serde_json::json!(0)),
        "{}",
        replayed["replay"]
    );
    // The handle kept the captured O_DIRECT|O_DSYNC.
    let flags = stats["files"][0]["flags"].to_string();
    assert!(
        flags.contains("O_DIRECT") && flags.contains("O_DSYNC"),
        "{flags}"
    );
}

#[test]
fn a_pgbench_capture_replays_on_its_stack_with_every_call() {
    if !postgres() {
        return;
    }
    let _serial = bakeoff_testkit::serial();
    let scene = db_scene();
    let trace = scene.state.path().join("pgbench.trace");
    let set = "scale=2,clients=2,jobs=2,runtime=3s,ramp_max=3s";
    let mut run = scene.db_run(
        "pgbench",
        "ext4",
        set,
        &["--capture", trace.to_str().unwrap()],
    );
    let record = scene.db_record(std::mem::replace(&mut run, scene.cmd(&[])));
    let capture = &record["capture"];
    assert_eq!(capture["lost"], 0, "{capture:#}");
    assert!(capture["ops"].as_u64().unwrap() > 1000, "{capture:#}");
    assert!(
        capture["bytes_per_op"].as_f64().unwrap() <= 20.0,
        "{capture:#}"
    );
    let stats = show(&scene, &trace);
    let marks: Vec<&str> = (stats["marks"].as_array().unwrap().iter())
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(marks, ["window_start", "window_end"]);

    let replayed = scene.run_json(&[
        "run",
        "--replay",
        trace.to_str().unwrap(),
        "--stack",
        "ext4",
        "--size",
        "1g",
    ]);
    assert_eq!(replayed["status"], "completed", "{replayed:#}");
    let calls = capture["ops"].as_u64().unwrap();
    assert_eq!(replayed["replay"]["calls"], calls, "{}", replayed["replay"]);
    assert!(ops_of(&replayed, "sync") > 0 && ops_of(&replayed, "write") > 0);
    assert!(
        scene.db_leftovers().is_empty(),
        "{:#?}",
        scene.db_leftovers()
    );
}

#[test]
fn capture_and_replay_refuse_what_they_cannot_do_before_anything_starts() {
    let scene = Scene::new();
    let dir = tempfile::tempdir().unwrap();
    let inside = dir.path().join("t.trace");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "capture".into(),
                "--under".into(),
                dir.path().display().to_string(),
                "--out".into(),
                inside.display().to_string(),
                "--".into(),
                "true".into(),
            ],
            "its own writes",
        ),
        (
            vec![
                "capture".into(),
                "--under".into(),
                "/no/such/dir".into(),
                "--out".into(),
                "/tmp/x.trace".into(),
                "--pid".into(),
                "1".into(),
            ],
            "--under /no/such/dir",
        ),
        (
            vec![
                "capture".into(),
                "--under".into(),
                dir.path().display().to_string(),
                "--out".into(),
                "/tmp/x.trace".into(),
                "--buffer".into(),
                "3m".into(),
                "--pid".into(),
                "1".into(),
            ],
            "power of two",
        ),
        (
            vec![
                "run".into(),
                "randread".into(),
                "--target".into(),
                dir.path().display().to_string(),
                "--capture".into(),
                "/tmp/x.trace".into(),
            ],
            "traces a database",
        ),
        (
            vec![
                "run".into(),
                "--replay".into(),
                "/no/such.trace".into(),
                "--target".into(),
                dir.path().display().to_string(),
            ],
            "/no/such.trace",
        ),
    ];
    for (args, says) in cases {
        let out = scene.cmd(&[]).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
