//! Runs disturbed by other work (docs/verdicts.md): a busy process started by the test during
//! exactly one run of a study marks that run, and only it, disturbed; the run is kept beside
//! the results and run again at the end of its round; the report leaves it out and says so. A
//! run still disturbed after its last redo is kept, marked, and left out of the verdicts. The
//! study's cost counts the disturbed attempts' time.
//!
//! The studies run the null engine on directories (no devices, no root), with the rule on at
//! its default limit; the test takes the machine alone, so only its own busy process competes.

mod common;
use bakeoff_testkit::serial;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Two processes that keep both CPUs busy, in their own process group (killed as one).
struct Hog(Child);

impl Hog {
    fn start() -> Hog {
        use std::os::unix::process::CommandExt;
        let child = Command::new("sh")
            .args(["-c", "yes >/dev/null & yes >/dev/null & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["--", &group]).status();
        let _ = self.0.wait();
    }
}

/// `compare` of the null engine on directories `a` and `b` (2 s runs) into `out`.
fn study(root: &Path, out: &Path, repeat: u32, extra: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"));
    c.env("BAKEOFF_STATE_DIR", root.join("state"))
        .env_remove("BAKEOFF_DISTURBANCE_LIMIT")
        .args(["compare", "--warm", "--workload", "randread"])
        .args(["--set", "engine=null,size=1m,ramp_time=0,runtime=2s"])
        .arg("--images")
        .arg(root.join("images"))
        .args(["--repeat", &repeat.to_string(), "--out"])
        .arg(out)
        .args(extra);
    for d in ["a", "b"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
        c.arg("--stack")
            .arg(format!("dir={}", root.join(d).display()));
    }
    c
}

/// The results directory of the cell on directory `stack` ("a" or "b").
fn cell_dir(out: &Path, stack: &str) -> std::path::PathBuf {
    let part = format!("-{stack}-randread-");
    std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().contains(&part))
        .unwrap()
}

/// The run records' file names of the cell on directory `stack`.
fn records(out: &Path, stack: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cell_dir(out, stack))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

fn record(out: &Path, stack: &str, name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(cell_dir(out, stack).join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_run_beside_a_busy_process_is_kept_apart_and_run_again_at_the_end_of_its_round() {
    let _turn = serial();
    let root = common::tmp();
    let out = root.path().join("results");
    let mut child = study(root.path(), &out, 3, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let table = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
    let (mut hog, mut lines) = (None, Vec::new());
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        // The first run done: the busy process competes with the second (b's rep 1) ...
        if line.starts_with("[1/6]") {
            hog = Some(Hog::start());
        }
        // ... and stops when that run is found disturbed.
        if line.contains("was disturbed") {
            hog = None;
        }
        lines.push(line);
    }
    drop(hog);
    let status = child.wait().unwrap();
    let table = table.join().unwrap();
    let stderr = lines.join("\n");
    assert!(status.success(), "{stderr}");
    let disturbed: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("was disturbed"))
        .collect();
    assert_eq!(
        disturbed.len(),
        1,
        "exactly the run beside the busy process:\n{stderr}"
    );
    assert!(
        disturbed[0].contains("/b / randread rep 1 was disturbed: other processes used")
            && disturbed[0].contains("run again at the end of this round"),
        "{stderr}"
    );
    // The redo comes before the next round: b's rep 1 twice, then a's rep 2.
    let order: Vec<&str> = (lines.iter())
        .filter(|l| l.starts_with('['))
        .map(|l| l.split(": ").next().unwrap())
        .collect();
    assert!(
        order[1].ends_with("/b / randread rep 1")
            && order[2].ends_with("/b / randread rep 1")
            && order[3].ends_with("/a / randread rep 2"),
        "{order:?}"
    );
    assert_eq!(order.len(), 7, "six runs and one redo: {order:?}");
    assert_eq!(
        records(&out, "a"),
        ["rep-1.json", "rep-2.json", "rep-3.json"]
    );
    let b = records(&out, "b");
    assert_eq!(
        b,
        [
            "rep-1.disturbed-1.json",
            "rep-1.json",
            "rep-2.json",
            "rep-3.json"
        ]
    );
    let kept = record(&out, "b", "rep-1.disturbed-1.json");
    let other = kept["disturbed"]["other_cpu_pct"].as_f64().unwrap();
    assert!(other > 10.0, "{kept:#}");
    assert!(kept["disturbed"]["before"]["secs"].as_f64().unwrap() > 0.5);
    let redone = record(&out, "b", "rep-1.json");
    assert!(redone.get("disturbed").is_none(), "the redo ran quiet");
    assert!(
        table.contains("1 run(s) disturbed by other work and run again"),
        "{table}"
    );
    // The study's cost counts the disturbed attempt's time too.
    assert!(
        table.contains("cost: the study's 7 runs took")
            && table.contains("; 1 of them disturbed by other work"),
        "{table}"
    );
}

#[test]
fn a_run_still_disturbed_after_its_last_redo_is_kept_marked_and_left_out_of_the_verdicts() {
    let _turn = serial();
    let root = common::tmp();
    let out = root.path().join("results");
    let hog = Hog::start();
    let done = study(root.path(), &out, 1, &["--max-redo", "0"])
        .output()
        .unwrap();
    drop(hog);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    assert!(
        stderr.contains("kept, marked disturbed and left out of the verdicts"),
        "{stderr}"
    );
    let kept = record(&out, "a", "rep-1.json");
    assert!(kept["disturbed"]["reasons"][0]
        .as_str()
        .unwrap()
        .contains("limit 10%"));
    let report = common::bakeoff()
        .args(["report", "--format", "json"])
        .arg(&out)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["runs"] == 0), "{json:#}");
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("still disturbed after the last redo"),
        "{notes}"
    );
}
