//! File serving through the command line: fileserver with four client processes on an ext4
//! loop file system (every operation kind counted and timed, the merged counts the sum of the
//! clients', the dataset laid out once and reused, no client left running); Ctrl-C and kill -9
//! of the parent leave no client running; and every file-serving personality for 2 s on every
//! stack type (the metadata operations on each file system, zfs-fuse's included).

mod common;

use bakeoff_testkit::loop_device::LoopFs;
use bakeoff_testkit::{privileged_shared_turn, privileged_zfs_turn, serial};
use common::Scene;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// Small settings of each file-serving personality, for a 2 s run.
const PERSONALITIES: [(&str, &str); 4] = [
    ("fileserver", "nfiles=400,nthreads=4,meanfilesize=32k"),
    ("varmail", "nfiles=400,nthreads=4"),
    ("webserver", "nfiles=200,nthreads=8"),
    ("nfsmix", "rate_hint=5,threads=2"),
];

/// The operations of `v` (a run record or one client's), kind by kind.
fn counts(v: &Value) -> Vec<(String, u64)> {
    v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_string(),
                o["ops"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Processes running `bakeoff __client`.
fn clients_running() -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if cmdline.split(|b| *b == 0).any(|arg| arg == b"__client") {
            n += 1;
        }
    }
    n
}

#[test]
fn fileserver_with_four_clients_counts_every_operation_and_reuses_its_dataset() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let fs = LoopFs::new(1 << 30, "ext4", "");
    let set = "clients=4,nfiles=200,nthreads=2,meanfilesize=16k,ramp_time=0,runtime=2s";
    let run = |set| {
        common::run_json(&[
            "run",
            "fileserver",
            "--warm",
            "--target",
            &fs.target(),
            "--set",
            set,
        ])
    };
    let first = run(set);
    assert_eq!(first["status"], "completed", "{}", first["error"]);
    let kinds = [
        "create",
        "write_file",
        "close",
        "open",
        "append",
        "read_file",
        "delete",
        "stat",
    ];
    let merged = counts(&first);
    for kind in kinds {
        let op = first["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == kind);
        let op = op.unwrap_or_else(|| panic!("no {kind} in {merged:?}"));
        assert!(op["ops"].as_u64().unwrap() > 0, "{kind}");
        for p in op["lat"]["percentiles"].as_array().unwrap() {
            assert!(p["lat_ns"].as_u64().unwrap() > 0, "{kind}: {p}");
        }
    }
    let clients = first["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 4);
    for (kind, total) in &merged {
        let sum: u64 = clients
            .iter()
            .flat_map(counts)
            .filter(|(k, _)| k == kind)
            .map(|(_, n)| n)
            .sum();
        assert_eq!(*total, sum, "{kind}: merged {total}, clients {sum}");
    }
    for c in clients {
        assert!(c["pid"].as_u64().unwrap() > 0);
        assert!(c["cpu_user_us"].as_u64().unwrap() + c["cpu_system_us"].as_u64().unwrap() > 0);
    }
    // The clients are bakeoff's children: the CPU split counts them as bakeoff's.
    let clients_us: u64 = clients
        .iter()
        .map(|c| c["cpu_user_us"].as_u64().unwrap() + c["cpu_system_us"].as_u64().unwrap())
        .sum();
    let tool_us = first["cpu"]["split"]["tool_us"].as_f64().unwrap();
    assert!(
        tool_us >= 0.5 * clients_us as f64,
        "tool {tool_us} µs, clients {clients_us} µs"
    );
    assert_eq!(first["dataset"]["reused"], false);
    assert!(first["dataset"]["written_bytes"].as_u64().unwrap() > 0);

    let second = run(set);
    assert_eq!(second["status"], "completed", "{}", second["error"]);
    assert_eq!(
        second["dataset"]["reused"], true,
        "the same layout is reused"
    );
    let repaired = second["dataset"]["written_bytes"].as_u64().unwrap();
    let planned = second["dataset"]["planned_bytes"].as_u64().unwrap();
    assert!(
        repaired < planned,
        "only what the first run changed: {repaired} of {planned}"
    );
    assert_eq!(clients_running(), 0, "no client left running");
}

/// Runs every personality for 2 s on `stack`; each completes with operations counted.
fn personalities_on(scene: &Scene, stack: &str) {
    for (name, set) in PERSONALITIES {
        let set = format!("{set},ramp_time=0,runtime=2s");
        let args = [
            "run", name, "--warm", "--stack", stack, "--set", &set, "--size", "1g",
        ];
        let r = scene.run_json(&args);
        assert_eq!(
            r["status"], "completed",
            "{name} on {stack}: {}",
            r["error"]
        );
        let total: u64 = counts(&r).iter().map(|(_, n)| n).sum();
        assert!(total > 0, "{name} on {stack}: no operations");
    }
    assert_eq!(clients_running(), 0);
}

#[test]
fn every_file_serving_personality_runs_on_every_kernel_file_system() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = Scene::new();
    for stack in ["ext4", "xfs", "btrfs", "tmpfs"] {
        personalities_on(&scene, stack);
    }
}

#[test]
fn every_file_serving_personality_runs_on_zfs() {
    let Some(_turn) = privileged_zfs_turn() else {
        return;
    };
    personalities_on(&Scene::new(), "zfs");
}

/// Waits up to `secs` for `clients_running()` to be `n`.
fn until_clients(n: usize, secs: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while clients_running() != n {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

#[test]
fn ctrl_c_stops_every_client_and_a_killed_parent_leaves_none_running() {
    let _turn = serial();
    let dir = common::tmp();
    let set = "clients=2,nfiles=60,nthreads=1,meanfilesize=8k,runtime=60s";
    for (signal, code) in [("-INT", Some(130)), ("-KILL", None)] {
        let mut run = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
            .args([
                "run",
                "fileserver",
                "--warm",
                "--quiet",
                "--set",
                set,
                "--target",
            ])
            .arg(dir.path())
            .spawn()
            .unwrap();
        assert!(until_clients(2, 30), "the clients started");
        std::thread::sleep(Duration::from_millis(500));
        let pid = run.id().to_string();
        Command::new("kill").args([signal, &pid]).status().unwrap();
        let status = run.wait().unwrap();
        assert_eq!(status.code(), code, "kill {signal}: {status}");
        assert!(
            until_clients(0, 10),
            "kill {signal}: a client is still running"
        );
    }
}

#[test]
fn a_tree_needs_a_file_system() {
    let scene = Scene::new();
    let out = scene
        .cmd(&["run", "fileserver", "--stack", "raw", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a raw stack is a block device"), "{err}");
    let args = [
        "run",
        "slob",
        "--stack",
        "xfs",
        "--log-stack",
        "ext4",
        "--dry-run",
    ];
    let out = scene
        .cmd(&args)
        .args(["--set", "clients=2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not supported with clients"), "{err}");
}

/// Client processes that outgrow `--mem-limit` are what the kernel's OOM killer takes, not
/// bakeoff (the clients raise their own `oom_score_adj`): the run fails naming the limit,
/// and the stack is torn down. Before, 16 nfsmix clients under 256 MiB made bakeoff itself the
/// largest process of the cgroup; it was killed, and left its pool and loop device behind.
#[test]
fn clients_that_outgrow_the_memory_limit_fail_the_run_naming_it() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let scene = Scene::new();
    let json = scene.state.path().join("oom.json");
    // 8 clients of about 14 MiB of their own each, under 48 MiB.
    let set = "clients=8,rate_hint=5,threads=2,ramp_time=0,runtime=5s";
    let out = scene
        .cmd(&[
            "run",
            "nfsmix",
            "--stack",
            "ext4",
            "--size",
            "1g",
            "--mem-limit",
            "48m",
        ])
        .args(["--set", set, "--json", json.to_str().unwrap(), "--images"])
        .arg(scene.images.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(4),
        "bakeoff survives to say: {stderr}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["status"], "failed");
    let error = v["error"].as_str().unwrap();
    assert!(
        error.contains("the memory limit (48 MiB") && error.contains("raise mem_limit"),
        "{error}"
    );
    assert!(stderr.contains("the memory limit (48 MiB"), "{stderr}");
    assert_eq!(clients_running(), 0, "no client left running");
    // The stack is gone: nothing attached or mounted from its images, its cgroup removed.
    let images = scene.images.path().to_string_lossy().to_string();
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    assert!(!String::from_utf8_lossy(&loops.stdout).contains(&images));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&images), "a mount under {images} is left");
    let named = error.split("the memory limit (48 MiB, ").nth(1);
    let cgroup = named.and_then(|s| s.split(')').next());
    let cgroup = cgroup.unwrap_or_else(|| panic!("no cgroup named in {error}"));
    assert!(!std::path::Path::new(cgroup).exists(), "{cgroup} is left");
}
