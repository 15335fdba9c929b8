//! Plays one case: starts its bakeoff command, ends it as the case says, checks the exit, runs
//! `bakeoff cleanup` after a SIGKILL, and says what was left.

use super::draw::{Case, End, Work};
use super::left::Scope;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A case's directories: the images (and mounts) and the state (ledgers), its own.
pub struct Dirs {
    pub images: PathBuf,
    pub state: PathBuf,
}

/// How a case went, for the tally.
#[derive(Default)]
pub struct Outcome {
    /// A SIGKILL reached a live bakeoff (sent by the test, or by itself at a fault point).
    pub killed: bool,
    /// A SIGINT or SIGTERM reached a live bakeoff, which exited 130.
    pub interrupted: bool,
    /// The run ran out of space and said so.
    pub no_space: bool,
    /// What went wrong: a wrong exit, a message missing, something left.
    pub failures: Vec<String>,
}

fn bakeoff(dirs: &Dirs, args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"));
    c.env("BAKEOFF_STATE_DIR", &dirs.state)
        .env("BAKEOFF_DISTURBANCE_LIMIT", "0")
        .args(args);
    c
}

/// The `--set` of a short run of I/O workload `w`.
fn io_set(w: &str) -> &'static str {
    match w {
        "slob" => "readers=2,writers=1,data_size=64m,redo_size=8m,ramp_time=0,runtime=2s",
        "fileserver" => "nfiles=200,nthreads=4,ramp_time=0,runtime=2s",
        _ => "size=32m,ramp_time=0,runtime=2s",
    }
}

/// The bakeoff command of `case`.
pub fn command(case: &Case, dirs: &Dirs) -> Command {
    let images = dirs.images.to_string_lossy().into_owned();
    let at = ["--images", &images];
    match &case.work {
        Work::Io(w) => {
            let mut c = bakeoff(dirs, &["run", w, "--quiet", "--stack", &case.stack]);
            c.args(at).args(["--size", "512m", "--set", io_set(w)]);
            c
        }
        Work::Db(db) => {
            // A tmpfs is as large as its spec says: `--size` does not reach it (1 GiB), and
            // MariaDB's redo log alone preallocates 1 GiB.
            let stack = match case.stack.as_str() {
                "tmpfs" => "tmpfs:size=2g",
                other => other,
            };
            let mut c = bakeoff(dirs, &["run", "tpcc", "--quiet", "--stack", stack]);
            let mut set = format!("db={db},warehouses=1,terminals=2,runtime=2s,ramp_max=2s");
            // SQLite's WAL needs shared writable maps, which zfs-fuse does not give.
            if *db == "sqlite" && case.stack == "zfs" {
                set.push_str(",sqlite.journal_mode=delete");
            }
            // `--size auto`: a loop stack sized for the database's room.
            c.args(at).args(["--set", &set]);
            c
        }
        Work::Exec { instances } => {
            let mut c = bakeoff(dirs, &["exec", "--quiet", "--stack", &case.stack]);
            c.args(at)
                .args(["--size", "512m", "--parallel", &instances.to_string()]);
            let script = "dd if=/dev/urandom of=data bs=1M count=32 conv=fsync status=none \
                          && sync && sleep 2";
            c.args(["--", "sh", "-c", script]);
            c
        }
        Work::Fill { mib } => {
            let mut c = bakeoff(dirs, &["exec", "--quiet", "--stack", &case.stack]);
            c.args(at).args(["--size", &format!("{mib}m")]);
            c.args([
                "--",
                "sh",
                "-c",
                "dd if=/dev/urandom of=fill bs=1M status=none",
            ]);
            c
        }
        Work::Compare { workload, other } => {
            let out = dirs.state.join(format!("compare-{}", case.index));
            let mut c = bakeoff(dirs, &["compare", "--workload", workload]);
            c.args(["--stack", &case.stack, "--stack", other]).args(at);
            c.args(["--size", "512m", "--repeat", "1", "--set", io_set(workload)]);
            c.arg("--out").arg(out);
            c
        }
    }
}

/// Waits for `child` until `limit`; `None` if it still runs.
fn wait_until(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if start.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send(child: &Child, sig: rustix::process::Signal) {
    let pid = i32::try_from(child.id()).ok();
    if let Some(pid) = pid.and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

/// Plays `case` in `dirs`; `zfs` says the ZFS lock is held (zfs-fuse is then checked too).
pub fn play(case: &Case, dirs: &Dirs, zfs: bool) -> Outcome {
    let err_path = dirs.state.join("stderr");
    let mut cmd = command(case, dirs);
    if let End::FaultAt(point) = case.end {
        cmd.env("BAKEOFF_FAULT_AT", point);
    }
    let err_file = std::fs::File::create(&err_path).expect("the case's stderr file");
    let mut child = (cmd.stdout(Stdio::null()).stderr(err_file))
        .spawn()
        .expect("bakeoff starts");
    let pid = child.id();
    let mut out = Outcome::default();
    let status = end(case, &mut child, &mut out);
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let tail: String = (stderr
        .lines()
        .rev()
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev())
    .collect::<Vec<_>>()
    .join("\n    ");
    match status {
        None => out.failures.push(format!(
            "bakeoff did not end within its limit and was killed; stderr:\n    {tail}"
        )),
        Some(status) => check_exit(case, status, &stderr, &dirs.images, &mut out, &tail),
    }
    let scope = Scope {
        images: &dirs.images,
        state: &dirs.state,
        pid,
        zfs,
    };
    let needs_cleanup = out.killed || status.is_none_or(|s| s.signal().is_some());
    if needs_cleanup {
        cleanup(dirs, "after the kill", &mut out);
    }
    let left = scope.leftovers();
    if !left.is_empty() {
        out.failures.push(format!("left behind: {left:#?}"));
        // Put the machine back for the next case and say what even cleanup could not undo.
        cleanup(dirs, "after the leak", &mut out);
        let still = scope.leftovers();
        if !still.is_empty() {
            out.failures
                .push(format!("still left after cleanup: {still:#?}"));
        }
    }
    let _ = std::fs::remove_dir_all(dirs.state.join(format!("compare-{}", case.index)));
    out
}

/// Ends the case as drawn; the exit status, `None` if bakeoff had to be killed after its limit.
fn end(case: &Case, child: &mut Child, out: &mut Outcome) -> Option<ExitStatus> {
    use rustix::process::Signal;
    let limit = Duration::from_secs(240);
    let (delay, sig) = match case.end {
        End::Kill(d) => (d, Signal::KILL),
        End::Int(d) => (d, Signal::INT),
        End::Term(d) => (d, Signal::TERM),
        End::FaultAt(_) | End::NoSpace => {
            let status = wait_until(child, limit);
            out.killed = status.is_some_and(|s| s.signal() == Some(9));
            return status.or_else(|| kill_and_reap(child));
        }
    };
    if let Some(early) = wait_until(child, delay) {
        return Some(early);
    }
    send(child, sig);
    out.killed = sig == Signal::KILL;
    wait_until(child, limit).or_else(|| kill_and_reap(child))
}

fn kill_and_reap(child: &mut Child) -> Option<ExitStatus> {
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Whether the exit is the one `case` should end with.
fn check_exit(
    case: &Case,
    status: ExitStatus,
    stderr: &str,
    images: &Path,
    out: &mut Outcome,
    tail: &str,
) {
    let wrong = |what: &str| format!("{what}, but it ended with {status}; stderr:\n    {tail}");
    match (&case.end, status.code()) {
        // Killed at the drawn moment, or it had finished before: either is fine.
        (End::Kill(_), _) if out.killed => {}
        (End::Kill(_), Some(0)) => {}
        (End::Kill(_), _) => out
            .failures
            .push(wrong("the run should succeed before its kill")),
        (End::FaultAt(p), _) if !out.killed => out
            .failures
            .push(wrong(&format!("the fault point {p} should SIGKILL it"))),
        (End::FaultAt(p), _) if stderr.contains("bakeoff: error:") => out.failures.push(wrong(
            &format!("the run should reach its fault point {p} without failing first"),
        )),
        (End::FaultAt(_), _) => {}
        (End::Int(_) | End::Term(_), Some(0)) => {}
        (End::Int(_) | End::Term(_), Some(130)) => {
            let name = if matches!(case.end, End::Int(_)) {
                "SIGINT"
            } else {
                "SIGTERM"
            };
            if stderr.contains(&format!("interrupted by {name}")) {
                out.interrupted = true;
            } else {
                out.failures
                    .push(wrong(&format!("exit 130 should name {name}")));
            }
        }
        (End::Int(_) | End::Term(_), _) => out.failures.push(wrong("expected exit 130")),
        (End::NoSpace, Some(7)) => {
            let names_where = stderr.contains(&*images.to_string_lossy());
            if stderr.contains("No space left on device") && names_where {
                out.no_space = true;
            } else {
                out.failures
                    .push(wrong("a full stack should be named, with its path"));
            }
        }
        (End::NoSpace, _) => out
            .failures
            .push(wrong("expected exit 7 (the command failed)")),
    }
}

/// `bakeoff cleanup`, which must succeed.
pub fn cleanup(dirs: &Dirs, when: &str, out: &mut Outcome) {
    let c = bakeoff(dirs, &["cleanup"])
        .output()
        .expect("bakeoff cleanup starts");
    if !c.status.success() {
        out.failures.push(format!(
            "bakeoff cleanup {when} ended with {}: {}",
            c.status,
            String::from_utf8_lossy(&c.stderr)
        ));
    }
}

/// A short normal run on `stack` after the case: it must succeed and leave nothing.
pub fn next_run(stack: &str, dirs: &Dirs, zfs: bool, out: &mut Outcome) {
    let images = dirs.images.to_string_lossy().into_owned();
    let mut c = bakeoff(dirs, &["run", "randrw", "--quiet", "--stack", stack]);
    c.args(["--images", &images, "--size", "512m"]);
    c.args(["--set", "size=16m,ramp_time=0,runtime=1s"]);
    let child = c
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bakeoff starts");
    let pid = child.id();
    let done = child.wait_with_output().expect("bakeoff ends");
    if !done.status.success() {
        out.failures.push(format!(
            "the next normal run on {stack} failed ({}): {}",
            done.status,
            String::from_utf8_lossy(&done.stderr)
        ));
    }
    let scope = Scope {
        images: &dirs.images,
        state: &dirs.state,
        pid,
        zfs,
    };
    let left = scope.leftovers();
    if !left.is_empty() {
        out.failures
            .push(format!("the next normal run left behind: {left:#?}"));
        cleanup(dirs, "after the next run", out);
    }
}
