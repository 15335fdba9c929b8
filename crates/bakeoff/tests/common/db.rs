//! What the database tests share (`databases.rs`, `tpch.rs`): whether PostgreSQL can run here,
//! a scene the `postgres` user can reach, runs and their records, and what a run left behind
//! (servers, socket directories, loop devices, mounts).

use super::Scene;
use bakeoff_testkit::command::sh;
use bakeoff_testkit::{privileged, require};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// True if PostgreSQL servers can be started here; under CI=true, false is a failure.
pub fn postgres() -> bool {
    if !privileged() {
        return false;
    }
    let found = bakeoff_db::postgres::Binaries::find(None);
    let what = match &found {
        Err(e) => format!("PostgreSQL ({e})"),
        Ok(_) => String::new(),
    };
    require(found.is_ok(), &what)
}

/// True if MariaDB servers and sysbench can run here; under CI=true, false is a failure.
pub fn mariadb() -> bool {
    if !privileged() {
        return false;
    }
    let found = bakeoff_db::mariadb::Binaries::find();
    let sysbench = std::path::Path::new(bakeoff_db::sysbench::PROGRAM).exists();
    let what = match (&found, sysbench) {
        (Err(e), _) => format!("MariaDB ({e})"),
        (Ok(_), false) => "sysbench (the Debian package sysbench)".to_string(),
        (Ok(_), true) => String::new(),
    };
    require(found.is_ok() && sysbench, &what)
}

/// True where crash states can be recorded (the write log is a FUSE file system); says why not.
pub fn fuse() -> bool {
    require(std::path::Path::new("/dev/fuse").exists(), "/dev/fuse")
}

/// A scene whose images the `postgres` user can reach (a temporary directory is private).
pub fn db_scene() -> Scene {
    let scene = Scene::new();
    let open = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(scene.images.path(), open).unwrap();
    scene
}

impl Scene {
    /// `bakeoff run WORKLOAD --stack STACK --images ... --set SET EXTRA...`.
    pub fn db_run(&self, workload: &str, stack: &str, set: &str, extra: &[&str]) -> Command {
        let images = self.images.path().to_str().unwrap().to_string();
        let mut c = self.cmd(&["run", workload, "--stack", stack, "--images", &images]);
        c.args(["--size", "1g", "--set", set]).args(extra);
        c
    }

    /// Runs to completion with `--json` and returns the run record.
    pub fn db_record(&self, mut cmd: Command) -> serde_json::Value {
        let json = self.state.path().join("run.json");
        let out = cmd
            .arg("--quiet")
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        let text = std::fs::read_to_string(&json).unwrap();
        std::fs::remove_file(&json).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Nothing of the run is left: no server, loop device or mount of ours, and its images
    /// directory empty.
    pub fn assert_nothing_left(&self) {
        let left = self.db_leftovers();
        assert!(left.is_empty(), "{left:?}");
        let files: Vec<_> = std::fs::read_dir(self.images.path()).unwrap().collect();
        assert!(files.is_empty(), "{files:?}");
    }

    /// What of the run is left: servers whose data is under our images, our loop devices and
    /// mounts, PostgreSQL socket directories created since `since`.
    pub fn db_leftovers(&self) -> Vec<String> {
        let root = self.images.path().to_string_lossy().to_string();
        let mut left: Vec<String> = servers()
            .into_iter()
            .filter(|args| args.contains(&root))
            .map(|args| format!("server: {args}"))
            .collect();
        let losetup = sh("losetup", &["-a"]);
        left.extend(
            (losetup.lines())
                .filter(|l| l.contains(&root))
                .map(|l| format!("loop: {l}")),
        );
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        left.extend(
            (mounts.lines())
                .filter(|l| l.contains(&root))
                .map(|l| format!("mount: {l}")),
        );
        left
    }
}

/// The command lines of the running PostgreSQL and MariaDB servers (`postgres -D ...`,
/// `mariadbd --defaults-file=...`).
pub fn servers() -> Vec<String> {
    let out = Command::new("ps").args(["-eo", "args="]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            (l.contains("postgres") && l.contains(" -D "))
                || (l.contains("mariadbd") && l.contains("--defaults-file"))
        })
        .map(str::to_string)
        .collect()
}

/// Socket directories of servers bakeoff started (`/tmp/bakeoff-pg-*`, `/tmp/bakeoff-my-*`).
pub fn socket_dirs() -> Vec<String> {
    std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("bakeoff-pg-") || n.starts_with("bakeoff-my-"))
        .collect()
}

/// The socket directories of the run of process `pid`: a server is named for its stack, and a
/// stack for its process (`ext4-PID-0`). Another test's servers, beside this one, are not its.
pub fn socket_dirs_of(pid: u32) -> Vec<String> {
    let mark = format!("-{pid}-");
    socket_dirs()
        .into_iter()
        .filter(|d| d.contains(&mark))
        .collect()
}

/// Spawns `cmd` with its standard error read line by line into a channel.
pub fn spawn_watched(mut cmd: Command) -> (Child, Receiver<String>) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for a line of standard error containing `text`, or panics after `limit`.
pub fn wait_for(lines: &Receiver<String>, text: &str, limit: Duration) {
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < limit {
        match lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains(text) => return,
            Ok(line) => seen.push(line),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(_) => break,
        }
    }
    panic!("no line with {text:?} within {limit:?}; saw: {seen:#?}");
}

pub fn signal(child: &Child, sig: &str) {
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args([sig, &pid])
        .status()
        .unwrap()
        .success());
}

/// A JSON number, or a panic naming what it was.
pub fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Asserts the command exited with `code`, showing its standard error if not.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Scene {
    /// After the run of process `killed` was killed: `bakeoff cleanup` succeeds and leaves no
    /// server, loop device, mount, or socket directory of that run.
    pub fn assert_cleanup_leaves_nothing(&self, killed: u32, what: &str) {
        assert_exit(&self.cmd(&["cleanup"]).output().unwrap(), 0);
        let left = self.db_leftovers();
        assert!(left.is_empty(), "after {what} and cleanup: {left:#?}");
        let sockets = socket_dirs_of(killed);
        assert!(sockets.is_empty(), "socket directories left: {sockets:?}");
    }
}
