//! `bakeoff exec` and recipes through the command line: a command's device bytes on an ext4
//! stack, the CPU of a grandchild, a failing command's exit code (7) and standard error, its
//! output passed through and kept with `--output`, the
//! stagger between parallel instances, Ctrl-C and kill -9 (then `bakeoff cleanup`) leaving no
//! process, mount or loop device, a recipe file's errors at their line, and a comparison of
//! recipes with a phase table. Runs are warm (no machine-wide cache drop) unless a test needs
//! otherwise.

mod common;
use bakeoff_testkit::{privileged_turn, scratch_dir};
use common::Scene;
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

impl Scene {
    /// `bakeoff exec --warm` in `where_` (`--stack SPEC` or `--target DIR`) with `extra` flags,
    /// then `-- argv`; its output and run record (which it writes even when the run fails).
    fn exec(&self, where_: [&str; 2], extra: &[&str], argv: &[&str]) -> (Output, Value) {
        let json = self.state.path().join("exec.json");
        let mut cmd = self.cmd(&["exec", "--warm", "--quiet"]);
        cmd.args(where_).arg("--images").arg(self.images.path());
        cmd.args(extra)
            .arg("--json")
            .arg(&json)
            .arg("--")
            .args(argv);
        let out = cmd.output().unwrap();
        let text = std::fs::read_to_string(&json)
            .unwrap_or_else(|e| panic!("no record ({e}): {}", stderr(&out)));
        std::fs::remove_file(&json).unwrap();
        (out, serde_json::from_str(&text).unwrap())
    }

    /// Loop devices over our images and mounts under them.
    fn leftovers(&self) -> Vec<String> {
        let root = self.images.path().to_string_lossy().to_string();
        let losetup = bakeoff_testkit::command::sh("losetup", &["-a"]);
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let mut left: Vec<String> = (losetup.lines().chain(mounts.lines()))
            .filter(|l| l.contains(&root))
            .map(str::to_string)
            .collect();
        left.extend(processes_with(&root));
        left
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The command lines of running processes that contain `text`.
fn processes_with(text: &str) -> Vec<String> {
    let entries = std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok());
    entries
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(text) && !c.contains("cargo") && !c.contains("/exec-"))
        .collect()
}

/// Waits until a `perl` process whose command line contains `text` runs (the shell that
/// starts it carries the text in its own command line first: it does not count).
fn wait_for_process(text: &str) {
    let start = Instant::now();
    let perl = || processes_with(text).iter().any(|c| c.starts_with("perl "));
    while !perl() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{text} never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn phase0(record: &Value) -> &Value {
    &record["phases"][0]
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_direct_write_of_256_mib_on_ext4_is_256_mib_on_the_device() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let dd = [
        "dd",
        "if=/dev/zero",
        "of=f",
        "bs=1M",
        "count=256",
        "oflag=direct",
    ];
    let (out, record) = scene.exec(["--stack", "ext4"], &[], &dd);
    assert!(out.status.success(), "{}", stderr(&out));
    let written = f(&phase0(&record)["device_write_bytes"]);
    let want = f64::from(256u32 << 20);
    assert!(
        (written - want).abs() <= 0.10 * want,
        "device writes {written} bytes for a 256 MiB direct write"
    );
    assert_eq!(phase0(&record)["instances"][0]["exit_code"], 0);
    let used = f(&record["space"]["used_bytes"]);
    assert!(
        used >= want,
        "df says {used} bytes used after writing 256 MiB"
    );
    assert_eq!(record["space"]["source"], "df");
    assert!(scene.leftovers().is_empty(), "{:?}", scene.leftovers());
}

#[test]
fn a_grandchild_burning_a_second_of_cpu_is_counted() {
    let scene = Scene::new();
    let dir = scratch_dir();
    // perl (Debian's perl-base is essential) loops until it has used 1 s of user CPU.
    let burn = "(perl -e 'while ((times)[0] < 1.0) {}') & wait";
    let target = dir.path().to_str().unwrap();
    let (out, record) = scene.exec(["--target", target], &[], &["sh", "-c", burn]);
    assert!(out.status.success(), "{}", stderr(&out));
    let user = f(&phase0(&record)["user_s"]);
    assert!(user >= 0.9, "{user} s user for a grandchild that burnt 1 s");
    let real = f(&phase0(&record)["real_s"]);
    assert!(real >= 0.9, "{real} s real");
    let source = phase0(&record)["cpu_source"].as_str().unwrap();
    let root = rustix::process::geteuid().is_root();
    assert_eq!(source, if root { "cgroup" } else { "rusage" });
}

#[test]
fn a_failing_command_exits_7_with_its_status_and_the_tail_of_its_stderr() {
    let scene = Scene::new();
    let dir = scratch_dir();
    let script = "for i in $(seq 1 30); do echo line$i >&2; done; exit 7";
    let target = dir.path().to_str().unwrap();
    let (out, record) = scene.exec(["--target", target], &[], &["sh", "-c", script]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("exited with status 7"), "{err}");
    // All of its standard error passed through; the message repeats the last 20 lines.
    assert!(err.contains("line1\n") && err.contains("line30"), "{err}");
    let message = err.lines().skip_while(|l| !l.contains("bakeoff: error:"));
    let message: Vec<&str> = message.collect();
    assert!(message.iter().any(|l| l.contains("line11")), "{err}");
    assert!(!message.iter().any(|l| l.trim() == "line10"), "{err}");
    assert_eq!(record["status"], "failed");
    let instance = &phase0(&record)["instances"][0];
    assert_eq!(instance["exit_code"], 7);
    assert_eq!(instance["stderr_tail"].as_array().unwrap().len(), 20);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("FAILED") && summary.contains("line30"),
        "{summary}"
    );
}

#[test]
fn a_command_killed_by_a_signal_exits_7_and_names_the_signal() {
    let scene = Scene::new();
    let dir = scratch_dir();
    let target = dir.path().to_str().unwrap();
    let (out, record) = scene.exec(["--target", target], &[], &["sh", "-c", "kill -9 $$"]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was killed by signal 9"),
        "{}",
        stderr(&out)
    );
    let instance = &phase0(&record)["instances"][0];
    assert_eq!(instance["exit_code"], Value::Null);
    assert_eq!(instance["signal"], 9);
}

#[test]
fn the_commands_output_passes_through_and_output_keeps_it_in_files() {
    let scene = Scene::new();
    let dir = scratch_dir();
    let target = dir.path().to_str().unwrap();
    let kept = dir.path().join("kept");
    let script = "echo OUT; printf 'ERR\\n' >&2; exit 3";
    let flags = ["--output", kept.to_str().unwrap()];
    let (out, record) = scene.exec(["--target", target], &flags, &["sh", "-c", script]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("OUT\n"),
        "the command's output comes first: {stdout}"
    );
    assert!(stderr(&out).contains("ERR\n"), "{}", stderr(&out));
    let instance = &phase0(&record)["instances"][0];
    let file = |key: &str| {
        let path = instance[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {instance}"));
        std::fs::read_to_string(path).unwrap()
    };
    assert_eq!(file("stdout_file"), "OUT\n");
    assert_eq!(file("stderr_file"), "ERR\n");
    assert_eq!(
        instance["stdout_file"],
        format!("{}/1-exec.stdout", kept.display())
    );
}

#[test]
fn with_the_record_on_stdout_the_commands_output_goes_to_stderr() {
    let scene = Scene::new();
    let dir = scratch_dir();
    let out = scene
        .cmd(&[
            "exec",
            "--warm",
            "--quiet",
            "--export-json",
            "-",
            "--target",
        ])
        .arg(dir.path())
        .args(["--", "echo", "OUT"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["status"], "completed");
    assert!(stderr(&out).contains("OUT\n"), "{}", stderr(&out));
}

#[test]
fn a_recipes_commands_pass_through_and_output_is_refused_for_a_workload() {
    let scene = Scene::new();
    let dir = scratch_dir();
    let recipe = dir.path().join("two.toml");
    let text = "[[phase]]\nname = \"a\"\nrun = \"echo from-a\"\n\
                [[phase]]\nname = \"b\"\nrun = \"echo from-b >&2\"\n";
    std::fs::write(&recipe, text).unwrap();
    let kept = dir.path().join("kept");
    let out = scene
        .cmd(&[
            "run",
            "--warm",
            "--quiet",
            "--recipe",
            recipe.to_str().unwrap(),
        ])
        .args(["--target", dir.path().to_str().unwrap()])
        .args(["--output", kept.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("from-a\n"));
    assert!(stderr(&out).contains("from-b\n"), "{}", stderr(&out));
    let b = std::fs::read_to_string(kept.join("2-b.stderr")).unwrap();
    assert_eq!(b, "from-b\n");

    let out = scene
        .cmd(&["run", "randread", "--dry-run", "--target"])
        .arg(dir.path())
        .args(["--output", kept.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--output"), "{}", stderr(&out));
}

#[test]
fn parallel_instances_start_a_stagger_apart_each_in_its_own_directory() {
    let scene = Scene::new();
    let dir = scratch_dir();
    let target = dir.path().to_str().unwrap();
    let flags = ["--parallel", "2", "--stagger", "1s", "--cwd", "work"];
    let (out, record) = scene.exec(["--target", target], &flags, &["sh", "-c", "pwd > where"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let instances = phase0(&record)["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 2);
    let gap = f(&instances[1]["start_offset_s"]) - f(&instances[0]["start_offset_s"]);
    assert!(
        (0.95..1.5).contains(&gap),
        "the second started {gap} s after the first"
    );
    for k in [1, 2] {
        let inst = dir.path().join(format!("work/inst-{k}"));
        let wrote = std::fs::read_to_string(inst.join("where")).unwrap();
        assert_eq!(wrote.trim(), inst.to_str().unwrap());
    }
}

/// A recipe run on an ext4 stack whose one phase runs two processes marked with `marker` (one
/// in the background) for 5 minutes, once they run. The recipe file's name does not contain the
/// marker, so bakeoff's own command line does not match.
fn start_sleeping(scene: &Scene, marker: &str) -> std::process::Child {
    let recipe = scene.state.path().join("sleep.toml");
    let run = format!("perl -e 'sleep 300' {marker}-bg & perl -e 'sleep 300' {marker}");
    let text = format!("[[phase]]\nname = \"sleep\"\nrun = \"\"\"\n{run}\n\"\"\"\n");
    std::fs::write(&recipe, text).unwrap();
    let mut cmd = scene.cmd(&["run", "--warm", "--quiet", "--stack", "ext4", "--recipe"]);
    cmd.arg(&recipe).arg("--images").arg(scene.images.path());
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_process(marker);
    child
}

/// Nothing of the run is left: no process with `marker`, no loop device or mount.
fn assert_gone(scene: &Scene, marker: &str) {
    let left = processes_with(marker);
    assert!(left.is_empty(), "{left:?}");
    assert!(scene.leftovers().is_empty(), "{:?}", scene.leftovers());
}

#[test]
fn kill_9_in_a_phase_then_cleanup_leaves_no_process_mount_or_loop_device() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let marker = format!("bakeoff-k9-{}", std::process::id());
    let mut child = start_sleeping(&scene, &marker);
    // Both sleepers (the one in the background and the one in front) are running.
    let start = Instant::now();
    while processes_with(&marker)
        .iter()
        .filter(|c| c.starts_with("perl "))
        .count()
        < 2
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{marker}: the sleepers never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let outlived = processes_with(&marker);
    // Cleanup first, so that a failed check below leaves nothing behind either.
    let out = scene.cmd(&["cleanup"]).output().unwrap();
    assert!(
        outlived.len() >= 2,
        "the commands outlive bakeoff: {outlived:?}"
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_gone(&scene, &marker);
}

#[test]
fn ctrl_c_in_a_phase_stops_the_tree_and_exits_130() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let marker = format!("bakeoff-int-{}", std::process::id());
    let child = start_sleeping(&scene, &marker);
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_gone(&scene, &marker);
}

#[test]
fn a_recipe_file_error_names_its_line_and_nothing_runs() {
    let scene = Scene::new();
    let dir = scratch_dir();
    let recipe = dir.path().join("bad.toml");
    let text = "[[phase]]\nname = \"a\"\nrun = \"touch ran\"\nparallel = 0\n";
    std::fs::write(&recipe, text).unwrap();
    let out = scene
        .cmd(&["run", "--recipe", recipe.to_str().unwrap()])
        .args(["--target", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let want = format!(
        "{}:4: phase.a.parallel: 0 is out of range",
        recipe.display()
    );
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
    assert!(!dir.path().join("ran").exists());
}

#[test]
fn a_comparison_of_a_recipe_shows_its_phases_per_stack() {
    let (a, b, out) = (scratch_dir(), scratch_dir(), scratch_dir());
    let recipe = out.path().join("tiny.toml");
    let text =
        "[params]\nN = \"1\"\n[[phase]]\nname = \"write\"\nrun = \"head -c ${N}m /dev/zero > f\"\n\
                [[phase]]\nname = \"flush\"\naction = \"sync\"\n";
    std::fs::write(&recipe, text).unwrap();
    let json = out.path().join("cmp.json");
    let results = out.path().join("results");
    let run = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
        .env("BAKEOFF_STATE_DIR", out.path().join("state"))
        .env(common::RULE_OFF.0, common::RULE_OFF.1)
        .args([
            "compare",
            "--warm",
            "--repeat",
            "2",
            "--set",
            "N=2",
            "--workload",
        ])
        .arg(&recipe)
        .arg("--images")
        .arg(out.path().join("images"))
        .arg("--stack")
        .arg(format!("dir={}", a.path().display()))
        .arg("--stack")
        .arg(format!("dir={}", b.path().display()))
        .arg("--out")
        .arg(&results)
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let table = &report["phases"][0];
    let rows: Vec<&str> = (table["rows"].as_array().unwrap().iter())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            "write",
            "flush",
            "total",
            "space used MiB",
            "compression ratio",
            "other CPU %",
            "steal %"
        ]
    );
    assert_eq!(table["runs"], serde_json::json!([2, 2]));
    assert_eq!(table["baseline"], 0);
    let written = f(&table["rows"][0]["cells"][1]["value"]["median"]);
    assert!(written > 0.0);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        text.contains("write") && text.contains("(baseline), 2 runs"),
        "{text}"
    );
    assert!(
        a.path().join("f").exists(),
        "the command ran in the stack's directory"
    );
}
