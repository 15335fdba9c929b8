//! Runs that share the machine's one zfs-fuse (root; in CI for real, in the ZFS turn): two runs
//! with the same daemon settings both use it, each with its own pool; a run asking for other
//! settings is refused naming the run that uses it, or with `--wait` waits for it; a user
//! killed with SIGKILL and `bakeoff cleanup` leave the daemon to the run still using it, and
//! the last user gone takes it down. Afterwards no zfs-fuse, pool, loop device or mount is left.

mod common;
use bakeoff_testkit::{privileged_zfs_turn, walk};
use common::Scene;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The registry of the shared zfs-fuse (`bakeoff_stack::sharing::ZFS_FUSE_DIR`).
const REGISTRY: &str = "/run/bakeoff/zfs-fuse";

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// zfs-fuse processes that run (zombies are gone already).
fn live_zfs_fuse() -> Vec<i32> {
    let out = Command::new("pgrep").args(["-x", "zfs-fuse"]).output();
    let text = out.map(|o| o.stdout).unwrap_or_default();
    String::from_utf8_lossy(&text)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|p| bakeoff_stack::daemon::alive(*p))
        .collect()
}

/// Loop devices over the scene's images, mounts under them, files left in them, ledgers,
/// users in the registry and running zfs-fuse daemons.
fn leftovers(scene: &Scene) -> Vec<String> {
    let root = scene.images.path().to_string_lossy().to_string();
    let mut left = Vec::new();
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let backing = std::fs::read_to_string(e.path().join("loop/backing_file"));
        if backing.is_ok_and(|b| b.starts_with(&root)) {
            left.push(format!("loop device {:?}", e.file_name()));
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    left.extend(
        mounts
            .lines()
            .filter(|l| l.contains(&root))
            .map(String::from),
    );
    left.extend(
        walk(scene.images.path())
            .iter()
            .map(|p| p.display().to_string()),
    );
    let ledgers = walk(&scene.state.path().join("ledger"));
    left.extend(ledgers.iter().map(|p| format!("ledger {}", p.display())));
    let users = walk(&PathBuf::from(REGISTRY).join("users"));
    left.extend(
        users
            .iter()
            .map(|p| format!("registry user {}", p.display())),
    );
    left.extend(live_zfs_fuse().iter().map(|p| format!("zfs-fuse pid {p}")));
    left
}

fn assert_clean(scene: &Scene, after: &str) {
    let start = Instant::now();
    // A daemon stopped by the last user is reaped a moment after its teardown returns.
    while !leftovers(scene).is_empty() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = leftovers(scene);
    assert!(left.is_empty(), "after {after}, left behind: {left:#?}");
}

/// `bakeoff run slob` on `stack`: small and short.
fn slob(scene: &Scene, stack: &str, json: &str) -> Command {
    let images = scene.images.path().to_str().unwrap();
    let json = scene.state.path().join(json);
    let mut c = scene.cmd(&[
        "run", "slob", "--quiet", "--stack", stack, "--images", images,
    ]);
    c.args(["--size", "512m", "--json", json.to_str().unwrap()]);
    c.args([
        "--set",
        "readers=2,writers=1,data_size=64m,redo_size=8m,ramp_time=0,runtime=2s",
    ]);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

fn record(scene: &Scene, json: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(scene.state.path().join(json)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A run that holds its zfs stack until told: `bakeoff exec` of a script that touches
/// `<name>.started` and waits for `<name>.go`.
struct Hold {
    child: Child,
    started: PathBuf,
    go: PathBuf,
}

impl Hold {
    fn spawn(scene: &Scene, stack: &str, name: &str) -> Hold {
        let started = scene.state.path().join(format!("{name}.started"));
        let go = scene.state.path().join(format!("{name}.go"));
        let script = format!(
            "touch {}; while [ ! -e {} ]; do sleep 0.1; done",
            started.display(),
            go.display()
        );
        let child = hold_cmd(scene, stack, &[], &script)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let hold = Hold { child, started, go };
        let since = Instant::now();
        while !hold.started.exists() {
            assert!(
                since.elapsed() < Duration::from_secs(60),
                "the run holding {stack} never started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        hold
    }

    /// Lets it finish; its output.
    fn release(self) -> Output {
        std::fs::write(&self.go, "").unwrap();
        self.child.wait_with_output().unwrap()
    }

    fn kill_9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// `bakeoff exec --warm --stack STACK EXTRA -- sh -c SCRIPT` in the scene.
fn hold_cmd(scene: &Scene, stack: &str, extra: &[&str], script: &str) -> Command {
    let images = scene.images.path().to_str().unwrap();
    let mut c = scene.cmd(&["exec", "--warm", "--quiet", "--stack", stack]);
    c.args(["--images", images]).args(extra);
    c.args(["--", "sh", "-c", script]);
    c
}

/// The case: two runs started 0.5 s apart with the same daemon settings both
/// succeed on one zfs-fuse, each on its own pool.
#[test]
fn two_runs_with_the_same_settings_share_one_zfs_fuse() {
    let Some(_turn) = privileged_zfs_turn() else {
        return;
    };
    let scene = Scene::new();
    let first = slob(&scene, "zfs:recordsize=8k", "a.json").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let second = slob(&scene, "zfs", "b.json").spawn().unwrap();
    let (first, second) = (
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(second.status.success(), "{}", stderr(&second));
    let (a, b) = (record(&scene, "a.json"), record(&scene, "b.json"));
    let pid = |r: &serde_json::Value| r["stack"]["daemons"][0]["pid"].as_i64();
    assert!(
        pid(&a).is_some() && pid(&a) == pid(&b),
        "one daemon: {a:#}\n{b:#}"
    );
    let shared = |r: &serde_json::Value| {
        let d = r["stack"]["properties"]["daemon"].as_str().unwrap_or("");
        d.starts_with("shared")
    };
    // Whichever reached its stack's build first started the daemon (on a busy machine, not
    // always the first started); the other shared it.
    assert!(
        shared(&a) != shared(&b),
        "one shares: {:#}\n{:#}",
        a["stack"],
        b["stack"]
    );
    let pool = |r: &serde_json::Value| r["stack"]["properties"]["pool"].clone();
    assert_ne!(pool(&a), pool(&b), "each run has its own pool");
    assert_eq!(a["status"], "completed");
    assert_eq!(b["status"], "completed");
    assert_clean(&scene, "two runs sharing zfs-fuse");
}

/// A second zfs run asking for other daemon settings while another run uses zfs-fuse: refused
/// naming that run (its pid and command line) and the setting that differs, never advised to
/// kill it; with `--wait` it says whom it waits for, waits, and runs once the first is done.
#[test]
fn other_settings_are_refused_naming_the_run_or_waited_for() {
    let Some(_turn) = privileged_zfs_turn() else {
        return;
    };
    let scene = Scene::new();
    let first = Hold::spawn(&scene, "zfs", "first");
    let owner = format!("bakeoff pid {}", first.child.id());
    let refused = hold_cmd(&scene, "zfs:arc=64m", &[], "true")
        .output()
        .unwrap();
    let err = stderr(&refused);
    let (second, lines) =
        common::db::spawn_watched(hold_cmd(&scene, "zfs:arc=64m", &["--wait"], "true"));
    let waited = std::panic::catch_unwind(|| {
        common::db::wait_for(&lines, "waiting for bakeoff", Duration::from_secs(60))
    });
    let first = first.release();
    let second = second.wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(3), "{err}");
    assert!(
        err.contains("in use by another bakeoff run") && err.contains(&owner),
        "{err}"
    );
    assert!(
        err.contains("exec --warm") && err.contains("--wait"),
        "{err}"
    );
    assert!(err.contains("arc_max") && err.contains("67108864"), "{err}");
    assert!(
        !err.contains("kill"),
        "never advise killing another run's daemon: {err}"
    );
    assert!(waited.is_ok(), "the waiting run said nothing");
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        second.status.success(),
        "the waiting run ran after the first: {}",
        stderr(&second)
    );
    assert_clean(&scene, "a run that waited for zfs-fuse");
}

/// A user of the shared daemon killed with SIGKILL: `bakeoff cleanup` removes its pool but
/// leaves the daemon to the run still using it, which succeeds; once the last user is killed
/// too, `bakeoff cleanup` stops the daemon.
#[test]
fn cleanup_after_a_killed_user_leaves_the_daemon_to_the_live_one() {
    let Some(_turn) = privileged_zfs_turn() else {
        return;
    };
    let scene = Scene::new();
    let first = Hold::spawn(&scene, "zfs", "first");
    let second = Hold::spawn(&scene, "zfs", "second");
    let daemon = live_zfs_fuse();
    assert_eq!(daemon.len(), 1, "one zfs-fuse for both runs: {daemon:?}");
    first.kill_9();
    let cleanup = scene.cmd(&["cleanup"]).output().unwrap();
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    assert_eq!(
        live_zfs_fuse(),
        daemon,
        "cleanup stopped a daemon a live run uses"
    );
    let pools = Command::new("zpool")
        .args(["list", "-H", "-o", "name"])
        .output()
        .unwrap();
    let pools = String::from_utf8_lossy(&pools.stdout).trim().to_string();
    assert_eq!(
        pools.lines().count(),
        1,
        "the killed run's pool is gone: {pools}"
    );
    let out = second.release();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_clean(&scene, "a killed user, cleanup, and the other run's end");
    // The last user killed: cleanup takes the daemon down with its pool.
    Hold::spawn(&scene, "zfs", "last").kill_9();
    assert_eq!(live_zfs_fuse().len(), 1, "a killed run leaves its daemon");
    let cleanup = scene.cmd(&["cleanup"]).output().unwrap();
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    assert_clean(&scene, "the last user killed and cleanup");
}
