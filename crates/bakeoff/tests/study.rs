//! Studies end to end on fast tmpfs stacks (root; in CI for real): kill -9 in the middle then
//! --resume ends with every run recorded once; a throttled cell is reported worse, with the
//! right sign and size.

mod common;
use bakeoff_testkit::{files_under, privileged_shared_turn, privileged_turn};
use common::finding_ids;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bakeoff(state: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"));
    c.env("BAKEOFF_STATE_DIR", state)
        .env(common::RULE_OFF.0, common::RULE_OFF.1);
    c
}

const STUDY: &[&str] = &[
    "compare",
    "--stack",
    "tmpfs:size=64m",
    "--stack",
    "tmpfs:size=96m",
    "--workload",
    "randread",
    "--set",
    "engine=null,size=16m,ramp_time=0,runtime=1s",
    "--repeat",
    "3",
];

fn records(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = files_under(&out.join("runs"))
        .into_iter()
        .map(|p| p.strip_prefix(out).unwrap().display().to_string())
        .collect();
    v.sort();
    v
}

fn report_json(state: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let o = bakeoff(state)
        .args(["report", out.to_str().unwrap(), "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn kill_9_in_a_study_then_resume_records_every_run_once() {
    // Outcomes only (every run recorded once): beside other shared tests.
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let (state, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (killed, whole) = (dir.path().join("killed"), dir.path().join("whole"));
    let images = dir.path().join("images");
    let img = images.to_str().unwrap();
    let mut child = bakeoff(state.path())
        .args(STUDY)
        .args(["--images", img, "--out", killed.to_str().unwrap()])
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while records(&killed).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the study made no progress"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Command::new("kill")
        .args(["-9", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    let partial = records(&killed);
    assert!((2..6).contains(&partial.len()), "{partial:?}");
    let o = bakeoff(state.path())
        .args(STUDY)
        .args(["--images", img, "--out", killed.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "without --resume an existing study is refused"
    );
    let o = bakeoff(state.path())
        .args(STUDY)
        .args([
            "--images",
            img,
            "--out",
            killed.to_str().unwrap(),
            "--resume",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let all = records(&killed);
    assert_eq!(all.len(), 6, "{all:?}");
    assert!(
        partial.iter().all(|p| all.contains(p)),
        "finished runs were kept, not redone"
    );
    assert!(all.iter().all(|p| p.ends_with("rep-1.json")
        || p.ends_with("rep-2.json")
        || p.ends_with("rep-3.json")));
    // Each repetition replays its own offsets over the same data (issue 8 #14).
    for p in &all {
        let text = std::fs::read_to_string(killed.join(p)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let rep = p.rsplit("rep-").next().unwrap();
        let rep: u64 = rep.trim_end_matches(".json").parse().unwrap();
        assert_eq!(v["plan"]["repetition"], rep, "{p}");
    }
    let o = bakeoff(state.path())
        .args(STUDY)
        .args(["--images", img, "--out", whole.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (
        report_json(state.path(), &killed, &[]),
        report_json(state.path(), &whole, &[]),
    );
    let shape = |r: &serde_json::Value| {
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row["label"].to_string(),
                    row["runs"].clone(),
                    row["is_baseline"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        shape(&a),
        shape(&b),
        "the resumed study reports like an uninterrupted one"
    );
    assert_eq!(a["columns"], b["columns"]);
    assert!(files_under(&images).is_empty(), "stacks torn down");
}

#[test]
fn a_throttled_cell_is_reported_worse_with_the_right_size() {
    // A verdict on speed: alone.
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let (state, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = dir.path().join("t");
    let o = bakeoff(state.path())
        .args([
            "compare",
            "--stack",
            "tmpfs:size=64m",
            "--workload",
            "randread",
            "--set",
            "size=16m,runtime=1s",
        ])
        .args([
            "--sweep",
            "randread.rate_iops=0,2000",
            "--repeat",
            "3",
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--images", dir.path().join("img").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = report_json(state.path(), &out, &["--columns", "read_iops"]);
    let rows = r["rows"].as_array().unwrap();
    let base = rows.iter().find(|row| row["is_baseline"] == true).unwrap();
    let capped = rows
        .iter()
        .find(|row| row["label"].as_str().unwrap().contains("rate_iops=2000"))
        .unwrap();
    let base_iops = base["figures"][0]["median"].as_f64().unwrap();
    let cmp = &capped["figures"][0]["vs_baseline"];
    assert_eq!(cmp["verdict"], "worse", "{cmp}");
    let ratio = cmp["ratio"].as_f64().unwrap();
    let expected = 2000.0 / base_iops;
    assert!(
        ratio > expected * 0.8 && ratio < expected * 1.2,
        "ratio {ratio}, expected about {expected}"
    );
}

#[test]
fn seed_000_shapes_show_amplification_and_cache_findings_only_where_they_apply() {
    // zfs-fuse is one daemon per machine, and the cache findings measure: alone.
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let (state, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = dir.path().join("s0");
    let o = bakeoff(state.path())
        .args([
            "compare",
            "--stack",
            "raw",
            "--stack",
            "zfs:recordsize=128k,primarycache=metadata,vdev_cache=0",
        ])
        .args([
            "--stack",
            "zfs:arc=100m",
            "--workload",
            "randread",
            "--set",
            "bs=8k,size=32m,direct=true,ramp_time=0,runtime=3s",
        ])
        .args([
            "--repeat",
            "1",
            "--size",
            "512m",
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--images", dir.path().join("img").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = report_json(
        state.path(),
        &out,
        &["--columns", "read_amplification,cache_hit_pct"],
    );
    let rows = r["rows"].as_array().unwrap();
    let row = |prefix: &str| {
        rows.iter()
            .find(|x| x["label"].as_str().unwrap().starts_with(prefix))
            .unwrap()
    };
    let amp = |x: &serde_json::Value| x["figures"][0]["median"].as_f64().unwrap();
    let (raw, big, cached) = (row("raw"), row("zfs:recordsize=128k"), row("zfs:arc=100m"));
    assert!(
        (amp(raw) - 1.0).abs() < 0.1,
        "raw amplification {}",
        amp(raw)
    );
    assert!(
        (14.0..=17.0).contains(&amp(big)),
        "128k records: amplification {}",
        amp(big)
    );
    let ids = (finding_ids(raw), finding_ids(big), finding_ids(cached));
    assert!(
        !ids.0.contains(&"read_amplification".into()) && !ids.0.contains(&"cache_served".into()),
        "raw: {:?}",
        ids.0
    );
    assert!(
        ids.1.contains(&"read_amplification".into()) && !ids.1.contains(&"cache_served".into()),
        "128k: {:?}",
        ids.1
    );
    assert!(
        ids.2.contains(&"cache_served".into()),
        "ARC-served: {:?}",
        ids.2
    );
}
