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
fn a_piped_run_prints_a_status_line_every_interval() {
    let d = tmp();
    let out = bakeoff()
        .args(["run", "randread", "--target"])
        .arg(d.path())
        .args([
            "--set",
            "size=4m,ramp_time=0,runtime=3500ms",
            "--status-interval",
            "1s",
        ])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("bakeoff: randread 0:0"))
        .collect();
    assert!(lines.len() >= 2, "a line a second:\n{err}");
    for l in &lines {
        assert!(l.contains("/0:03, "), "elapsed of planned: {l}");
        assert!(l.contains(" s left: read "), "{l}");
        assert!(l.contains(" MB/s p99 "), "{l}");
        // The target directory sits on a block device: iostat's figures.
        assert!(l.contains("; dev r/s ") && l.contains(" util "), "{l}");
    }
}

#[test]
fn a_piped_layout_prints_status_lines_too() {
    let d = tmp();
    let out = bakeoff()
        .args(["run", "randread", "--target"])
        .arg(d.path())
        .args([
            "--set",
            "size=256m,runtime=200ms",
            "--status-interval",
            "20ms",
        ])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("bakeoff: laying out ") && l.contains(" of 256 MiB (")),
        "{err}"
    );
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
fn after_ctrl_c_the_teardown_is_announced_even_when_quiet() {
    let d = tmp();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
        .env("BAKEOFF_STATE_DIR", d.path().join("state"))
        .args([
            "run",
            "randread",
            "-q",
            "--set",
            "engine=null,size=1m,runtime=60s",
        ])
        .arg("--stack")
        .arg(format!("dir={}", data.display()))
        .arg("--images")
        .arg(d.path().join("images"))
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ctrl_c_announces_the_teardown_quietly(child);
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

#[test]
fn on_a_terminal_each_second_is_drawn_once() {
    let d = tmp();
    let cmd = format!(
        "stty cols 120; {} run randread --target {} --set size=4m,runtime=3500ms >/dev/null",
        assert_cmd::cargo::cargo_bin("bakeoff").display(),
        d.path().display()
    );
    // `script` (util-linux) runs the command on a pseudo-terminal and copies what it drew.
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script (util-linux) runs a command on a terminal");
    assert!(out.status.success(), "{out:?}");
    let drawn = String::from_utf8_lossy(&out.stdout).into_owned();
    let rates: Vec<&str> = drawn
        .split(['\r', '\n'])
        .filter_map(|l| l.find(" read ").map(|i| l[i..].trim_end()))
        .collect();
    assert!(rates.len() >= 2, "{drawn:?}");
    for pair in rates.windows(2) {
        assert_ne!(pair[0], pair[1], "a value drawn twice: {rates:?}");
    }
}

#[test]
fn a_piped_compare_prints_each_cells_status_lines_named_by_the_cell() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let out = d.path().join("out");
    let args = ["--out", out.to_str().unwrap(), "--status-interval", "1s"];
    let args = [&args[..], &["--set", "runtime=2500ms"]].concat();
    let assert = quick_compare(&a, &b, 1, &args).success();
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for (i, dir) in [(1, &a), (2, &b)] {
        let name = format!(
            "bakeoff: [{i}/2] dir={} / randread rep 1 0:0",
            dir.display()
        );
        let lines = err.lines().filter(|l| l.starts_with(&name)).count();
        assert!(lines >= 1, "cell {i} has status lines:\n{err}");
    }
}

#[test]
fn a_piped_exec_prints_status_lines_while_the_command_runs() {
    let d = tmp();
    let out = bakeoff()
        .args(["exec", "--target"])
        .arg(d.path())
        .args(["--status-interval", "1s", "--", "sleep", "2.5"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    let lines: Vec<&str> = (err.lines())
        .filter(|l| l.starts_with("bakeoff: exec 0:0"))
        .collect();
    assert!(lines.len() >= 2, "a line a second:\n{err}");
    // A command runs as long as it takes: no planned length, no time left.
    assert!(lines.iter().all(|l| !l.contains(" left")), "{err}");
}

#[test]
fn quiet_says_nothing_about_a_database_load_either() {
    let d = tmp();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = bakeoff()
        .env("BAKEOFF_STATE_DIR", d.path().join("state"))
        .args(["run", "tpcc", "-q", "--warm", "--set"])
        .arg("db=sqlite,warehouses=1,terminals=1,runtime=1s")
        .arg("--stack")
        .arg(format!("dir={}", data.display()))
        .arg("--images")
        .arg(d.path().join("images"))
        .output()
        .unwrap();
    assert_eq!(stderr_of(&out), "", "-q prints nothing on stderr");
}

#[test]
fn after_ctrl_c_an_execs_teardown_is_announced_even_when_quiet() {
    let d = tmp();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
        .env("BAKEOFF_STATE_DIR", d.path().join("state"))
        .args(["exec", "-q", "--warm", "--stack"])
        .arg(format!("dir={}", data.display()))
        .arg("--images")
        .arg(d.path().join("images"))
        .args(["--", "sleep", "60"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ctrl_c_announces_the_teardown_quietly(child);
}

/// Ctrl-C 2 s into a quiet run (`-q`) on a `dir=` stack: exit 130, the teardown announced,
/// nothing else of the building said.
fn ctrl_c_announces_the_teardown_quietly(mut child: std::process::Child) {
    std::thread::sleep(std::time::Duration::from_secs(2));
    common::db::signal(&child, "-INT");
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("tearing down dir-"), "{err}");
    assert!(!err.contains("building stack"), "-q: {err}");
}
