//! Faults during runs on stacks: kill -9 in layout, run and teardown followed by
//! `bakeoff cleanup`; Ctrl-C and SIGTERM; a stack too small; two runs at once. After each,
//! nothing of bakeoff's is left: no loop device over its images, no mount, no image, no ledger,
//! no read-only loop device (root; in CI for real).

mod common;
use bakeoff_testkit::{privileged_shared_turn, privileged_turn, privileged_zfs_turn, walk};
use common::Scene;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

impl Scene {
    fn run_on(&self, stack: &str, set: &str, extra: &[&str]) -> Command {
        let images = self.images.path().to_str().unwrap().to_string();
        let mut c = self.cmd(&[
            "run", "slob", "--quiet", "--stack", stack, "--images", &images, "--size", "512m",
        ]);
        c.args(["--set", set]).args(extra);
        c
    }

    /// Runs `cmd` with `--json`, which must succeed, and returns its run record.
    fn record(&self, mut cmd: Command) -> serde_json::Value {
        let json = self.state.path().join("run.json");
        let out = cmd.arg("--json").arg(&json).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&json).unwrap();
        std::fs::remove_file(&json).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn cleanup(&self) -> Output {
        self.cmd(&["cleanup"]).output().unwrap()
    }

    /// Loop devices over our images and mounts under our images directory.
    fn leftovers(&self) -> Vec<String> {
        let root = self.images.path().to_string_lossy().to_string();
        let mut left = Vec::new();
        for e in std::fs::read_dir("/sys/block")
            .unwrap()
            .filter_map(|e| e.ok())
        {
            let name = e.file_name().to_string_lossy().to_string();
            let backing =
                std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
            if backing.starts_with(&root) {
                left.push(format!("{name} over {}", backing.trim()));
            }
            if name.starts_with("loop")
                && std::fs::read_to_string(e.path().join("ro")).is_ok_and(|r| r.trim() == "1")
            {
                left.push(format!("{name} is read-only"));
            }
        }
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        left.extend(
            mounts
                .lines()
                .filter(|l| l.contains(&root))
                .map(str::to_string),
        );
        left.extend(
            walk(self.images.path())
                .into_iter()
                .map(|p| p.display().to_string()),
        );
        left.extend(
            walk(&self.state.path().join("ledger"))
                .into_iter()
                .map(|p| format!("ledger {}", p.display())),
        );
        left
    }

    fn assert_clean(&self, after: &str) {
        let left = self.leftovers();
        assert!(left.is_empty(), "after {after}, left behind: {left:#?}");
    }
}

fn signal(child: &Child, sig: &str) {
    Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
}

/// Waits until the run's dataset is laid out on its stack (the layout manifest appears), so
/// the run is measuring, or panics after `limit`.
fn wait_for_mount(scene: &Scene, limit: Duration) {
    let start = Instant::now();
    while start.elapsed() < limit {
        let laid_out = walk(scene.images.path())
            .iter()
            .any(|p| p.ends_with(".bakeoff-dataset.json"));
        if laid_out {
            std::thread::sleep(Duration::from_millis(700));
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the run never started measuring");
}

fn assert_killed(out: &Output) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(9),
        "expected SIGKILL: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn kill_9_in_layout_run_and_teardown_then_cleanup_leaves_nothing() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = Scene::new();
    let set = "readers=2,writers=1,data_size=256m,redo_size=8m,runtime=30s";
    for phase in ["layout", "teardown"] {
        let out = scene
            .run_on("ext4", &set.replace("30s", "1s"), &[])
            .env("BAKEOFF_FAULT_AT", phase)
            .output()
            .unwrap();
        assert_killed(&out);
        assert!(
            !scene.leftovers().is_empty(),
            "a kill -9 in {phase} leaves state for cleanup to find"
        );
        let c = scene.cleanup();
        assert!(
            c.status.success(),
            "cleanup after {phase}: {}",
            String::from_utf8_lossy(&c.stderr)
        );
        scene.assert_clean(&format!("kill -9 in {phase} and cleanup"));
    }
    let mut child = scene
        .run_on("xfs", set, &[])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_mount(&scene, Duration::from_secs(30));
    signal(&child, "-KILL");
    child.wait().unwrap();
    assert!(!scene.leftovers().is_empty());
    // Any bakeoff command that builds a stack first undoes what a killed run left.
    let next = scene
        .run_on("ext4", &set.replace("30s", "1s"), &[])
        .output()
        .unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    assert!(String::from_utf8_lossy(&next.stderr).contains("cleaning up after"));
    scene.assert_clean("kill -9 in the run, then a new run");
}

#[test]
fn ctrl_c_and_sigterm_tear_the_stack_down() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = Scene::new();
    for sig in ["-INT", "-TERM"] {
        let json = scene.state.path().join("r.json");
        let mut child = scene
            .run_on(
                "ext4",
                "readers=2,writers=1,data_size=128m,redo_size=8m,runtime=60s",
                &["--json", json.to_str().unwrap()],
            )
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_mount(&scene, Duration::from_secs(30));
        let sent = Instant::now();
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "{sig}: took {:?}",
            sent.elapsed()
        );
        assert_eq!(status.code(), Some(130), "{sig}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["status"], "interrupted");
        assert_eq!(v["stack"]["kind"], "ext4");
        std::fs::remove_file(&json).unwrap();
        scene.assert_clean(sig);
    }
}

/// `bakeoff ... 2>&1 | tee log` stopped with Ctrl-C: the reader of bakeoff's stderr is gone
/// when the signal comes. Whatever bakeoff can no longer say, its stack is torn down.
#[test]
fn ctrl_c_with_stderr_closed_still_tears_the_stack_down() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = Scene::new();
    let mut child = scene
        .run_on(
            "ext4",
            "readers=2,writers=1,data_size=128m,redo_size=8m,runtime=60s",
            &[],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_mount(&scene, Duration::from_secs(30));
    drop(child.stderr.take());
    let sent = Instant::now();
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "took {:?} ({status:?})",
        sent.elapsed()
    );
    scene.assert_clean("Ctrl-C with stderr closed");
}

#[test]
fn a_stack_too_small_is_refused_before_any_data_is_written() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = Scene::new();
    let images = scene.images.path().to_str().unwrap().to_string();
    let out = scene
        .cmd(&[
            "run",
            "randread",
            "--stack",
            "ext4",
            "--size",
            "64m",
            "--images",
            &images,
            "--set",
            "size=256m",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the dataset needs 268435456") && err.contains("--size"),
        "{err}"
    );
    scene.assert_clean("a stack too small");
}

#[test]
fn two_runs_at_once_use_their_own_devices() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = Scene::new();
    let set = "readers=2,writers=1,data_size=64m,redo_size=8m,ramp_time=0,runtime=2s";
    let a = scene
        .run_on("ext4", set, &[])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let b = scene
        .run_on("ext4", set, &[])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(
        a.status.success() && b.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    scene.assert_clean("two concurrent runs");
}

#[test]
fn mem_limit_runs_in_a_cgroup_that_is_removed_afterwards() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    // Buffered random reads (direct=false: slob reads with O_DIRECT by default) over 256 MiB
    // with only 64 MiB of memory: the page cache cannot hold
    // the data, so most reads must reach the device.
    let v = scene.record(scene.run_on(
        "ext4",
        "readers=4,writers=0,data_size=256m,redo_size=8m,direct=false,runtime=4s",
        &["--mem-limit", "64m"],
    ));
    assert_eq!(v["stack"]["mem_limit_bytes"], 64 << 20);
    let hits = v["summary"]["reads_not_from_device_pct"].as_f64().unwrap();
    assert!(
        hits < 50.0,
        "with 64 MiB for 256 MiB of data, {hits}% of reads came from cache"
    );
    // The same run without the limit: the page cache takes in the whole dataset.
    let v = scene.record(scene.run_on(
        "ext4",
        "readers=4,writers=0,data_size=256m,redo_size=8m,direct=false,runtime=4s",
        &[],
    ));
    let unlimited = v["summary"]["reads_not_from_device_pct"].as_f64().unwrap();
    assert!(
        unlimited > 80.0,
        "without a limit only {unlimited}% of reads came from cache"
    );
    let cgroups = std::process::Command::new("sh")
        .args([
            "-c",
            "find /sys/fs/cgroup -maxdepth 4 -name 'bakeoff-*' -type d",
        ])
        .output()
        .unwrap();
    assert!(
        cgroups.stdout.is_empty(),
        "cgroup left: {}",
        String::from_utf8_lossy(&cgroups.stdout)
    );
    scene.assert_clean("a run with --mem-limit");
}

#[test]
fn a_killed_zfs_daemon_fails_the_run_clearly_and_teardown_completes() {
    let Some(_turn) = privileged_zfs_turn() else {
        return;
    };
    let scene = Scene::new();
    let json = scene.state.path().join("z.json");
    let child = scene
        .run_on(
            "zfs:recordsize=8k",
            "readers=2,writers=1,data_size=64m,redo_size=8m,runtime=60s",
            &["--json", json.to_str().unwrap()],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_mount(&scene, Duration::from_secs(60));
    // After the layout the pool is exported and re-imported (cold ARC): let the run start.
    std::thread::sleep(Duration::from_secs(3));
    let daemon = Command::new("pgrep")
        .args(["-x", "zfs-fuse"])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&daemon.stdout).trim().to_string();
    assert!(!pid.is_empty(), "the stack's zfs-fuse daemon runs");
    Command::new("kill").args(["-9", &pid]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["status"], "failed");
    let error = v["error"].as_str().unwrap();
    assert!(
        error.contains("zfs-fuse daemon") && error.contains("died"),
        "{error}"
    );
    assert!(
        v["summary"]["read_iops"].is_null(),
        "a failed run's figures are not results"
    );
    scene.assert_clean("a killed zfs-fuse daemon");
    let daemons = Command::new("pgrep")
        .args(["-x", "zfs-fuse"])
        .output()
        .unwrap();
    let live: Vec<String> = String::from_utf8_lossy(&daemons.stdout)
        .split_whitespace()
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            stat.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                .is_some_and(|s| s != "Z")
        })
        .map(str::to_string)
        .collect();
    assert!(live.is_empty(), "zfs-fuse left running: {live:?}");
}

#[test]
fn every_stack_type_runs_a_workload_and_leaves_nothing() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let dir = tempfile::tempdir().unwrap();
    let dir_spec = format!("dir={}", dir.path().display());
    for spec in [
        "raw",
        "ext4",
        "xfs",
        "btrfs:devices=2,profile=raid1",
        "zfs:recordsize=8k",
        "tmpfs:size=256m",
        &dir_spec,
    ] {
        let images = scene.images.path().to_str().unwrap().to_string();
        let mut cmd = scene.cmd(&[
            "run", "randrw", "--quiet", "--stack", spec, "--images", &images, "--size", "512m",
        ]);
        cmd.args(["--set", "size=64m,ramp_time=0,runtime=1s", "--remove-data"]);
        let v = scene.record(cmd);
        assert!(v["summary"]["read_iops"].as_f64().unwrap() > 0.0, "{spec}");
        assert!(v["summary"]["write_iops"].as_f64().unwrap() > 0.0, "{spec}");
        assert_eq!(v["stack"]["spec"], spec);
        scene.assert_clean(spec);
    }
}

#[test]
fn a_device_is_used_only_when_named_for_destruction_and_past_the_gate() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let root = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find(|l| l.split(' ').nth(4) == Some("/"))
        .and_then(|l| l.split(" - ").nth(1)?.split(' ').nth(1).map(str::to_string))
        .unwrap();
    let images = scene.images.path().to_str().unwrap().to_string();
    // Without --destroy-data-on: refused before the gate even looks.
    let out = scene
        .cmd(&[
            "stack", "create", "ext4", "--images", &images, "--device", &root,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--destroy-data-on"));
    // Named, but mounted as /: the gate refuses, and says why.
    let out = scene
        .cmd(&[
            "stack",
            "create",
            "ext4",
            "--images",
            &images,
            "--device",
            &root,
            "--destroy-data-on",
            &root,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("mounted"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    scene.assert_clean("refused devices");
}

/// The safety gate's refusal is one exit code, 5, whether a mounted loop device is named as
/// `run --target` or as `--device` (it was 3 as the target).
#[test]
fn a_mounted_loop_device_is_refused_with_5_as_target_and_as_device() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let stack = bakeoff_testkit::loop_device::LoopFs::new(64 << 20, "ext4", "noatime");
    let dev = stack.device.node();
    let images = scene.images.path().to_str().unwrap().to_string();
    let set = ["--set", "engine=null,size=8m,ramp_time=0,runtime=1s"];
    let as_target = scene
        .cmd(&["run", "randread", "--target", dev])
        .args(set)
        .output()
        .unwrap();
    let as_device = scene
        .cmd(&["run", "randread", "--stack", "ext4", "--images", &images])
        .args(["--device", dev, "--destroy-data-on", dev])
        .args(set)
        .output()
        .unwrap();
    for (how, out) in [("--target", as_target), ("--device", as_device)] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{how}: {err}");
        assert!(err.contains("mounted"), "{how}: {err}");
    }
    scene.assert_clean("a refused mounted loop device");
}
