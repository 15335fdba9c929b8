//! What a run says on stderr while it works: progress where a user can see it (periodic lines
//! when stderr is not a terminal), nothing under `--quiet`, the teardown announced, and a study's
//! time left from its plans.

mod common;
use common::{bakeoff, quick_compare, tmp};

/// stderr of a successful run, as text.
fn stderr_of(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

/// `run randread` on a `dir=` stack (no root needed) with a private state and images directory.
fn run_on_dir_stack(extra: &[&str]) -> std::process::Output {
    let d = tmp();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    bakeoff()
        .env("BAKEOFF_STATE_DIR", d.path().join("state"))
        .args([
            "run",
            "randread",
            "--set",
            "engine=null,size=1m,runtime=300ms",
        ])
        .arg("--stack")
        .arg(format!("dir={}", data.display()))
        .arg("--images")
        .arg(d.path().join("images"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn quiet_says_nothing_and_otherwise_building_and_teardown_are_announced() {
    let quiet = stderr_of(&run_on_dir_stack(&["-q"]));
    assert_eq!(
        quiet, "",
        "-q prints nothing on stderr for a successful run"
    );
    let loud = stderr_of(&run_on_dir_stack(&[]));
    assert!(loud.contains("building stack dir="), "{loud}");
    assert!(loud.contains("tearing down dir-"), "{loud}");
}

#[test]
fn compare_gives_the_time_left_in_seconds_from_the_plans() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let out = d.path().join("out");
    let assert = quick_compare(&a, &b, 2, &["--out", out.to_str().unwrap()]).success();
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(!err.contains("about 0 min"), "{err}");
    assert!(lines[0].ends_with(" s left"), "{err}");
    assert!(lines[3].ends_with("no runs left"), "{err}");
}
