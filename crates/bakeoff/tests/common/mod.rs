//! What bakeoff's CLI tests share: the binary under test, its JSON run records and findings, a
//! quick comparison, and a private state and images directory per test. The privilege checks,
//! serial lock, loop devices and mounts are in `bakeoff-testkit`.

#![allow(dead_code)]

pub mod db;
pub mod mpi;

use std::path::Path;
use std::process::Command;

/// The disturbance rule off (`compare --disturbance-limit 0`): tests share the machine with
/// the other lane's, whose CPU would mark their runs disturbed and run them again; the rule
/// has its own test (tests/disturbed.rs).
pub const RULE_OFF: (&str, &str) = ("BAKEOFF_DISTURBANCE_LIMIT", "0");

/// The bakeoff binary under test.
pub fn bakeoff() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("bakeoff").unwrap();
    c.env(RULE_OFF.0, RULE_OFF.1);
    c
}

/// A temporary directory under the target directory (not a tmpfs).
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Runs bakeoff with `args`, which must succeed; its JSON run record.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"));
    cmd.args(args);
    record_of(cmd)
}

/// Runs `cmd` (bakeoff) with `--quiet --json`, which must succeed; its JSON run record.
fn record_of(mut cmd: Command) -> serde_json::Value {
    let out_dir = tmp();
    let json = out_dir.path().join("run.json");
    let out = cmd
        .args(["--quiet", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// `bakeoff run WORKLOAD --target TARGET --set SET`: its JSON run record.
pub fn run_on(target: &str, workload: &str, set: &str) -> serde_json::Value {
    run_json(&["run", workload, "--target", target, "--set", set])
}

/// The ids of the findings of a run record or a report row.
pub fn finding_ids(v: &serde_json::Value) -> Vec<String> {
    let findings = v["findings"].as_array();
    let findings = findings.unwrap_or_else(|| panic!("no findings array in {v}"));
    findings
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

/// A summary figure.
pub fn fig(v: &serde_json::Value, key: &str) -> f64 {
    v["summary"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("summary.{key} is {}", v["summary"][key]))
}

/// A quick `compare` of two directory stacks: randread on the null engine, warm (no cache
/// drop, so it disturbs nobody), 200 ms per run, with its own stack ledger and images beside `a` (so it
/// runs without root and never replays another run's ledger). Add `--out DIR` and more
/// through `extra`.
pub fn quick_compare(
    a: &Path,
    b: &Path,
    repeat: u32,
    extra: &[&str],
) -> assert_cmd::assert::Assert {
    bakeoff()
        .env("BAKEOFF_STATE_DIR", a.with_file_name("state"))
        .args(["compare", "--warm", "--workload", "randread"])
        .arg("--images")
        .arg(a.with_file_name("images"))
        .args(["--repeat", &repeat.to_string()])
        .args(["--set", "engine=null,size=1m,ramp_time=0,runtime=200ms"])
        .arg("--stack")
        .arg(format!("dir={}", a.display()))
        .arg("--stack")
        .arg(format!("dir={}", b.display()))
        .args(extra)
        .assert()
}

/// A private state directory (`BAKEOFF_STATE_DIR`) and images directory for one test.
pub struct Scene {
    pub state: tempfile::TempDir,
    pub images: tempfile::TempDir,
}

impl Scene {
    pub fn new() -> Scene {
        Scene {
            state: tempfile::tempdir().unwrap(),
            images: bakeoff_testkit::scratch_dir(),
        }
    }

    /// bakeoff with `args`, keeping its state in ours.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"));
        c.env("BAKEOFF_STATE_DIR", self.state.path())
            .env(RULE_OFF.0, RULE_OFF.1)
            .args(args);
        c
    }

    /// bakeoff with `args`, keeping its state and stack images in ours, which must succeed:
    /// its JSON run record.
    pub fn run_json(&self, args: &[&str]) -> serde_json::Value {
        let mut cmd = self.cmd(args);
        cmd.arg("--images").arg(self.images.path());
        record_of(cmd)
    }
}
