//! The ledger: every side effect is appended (and fsynced) to a JSON-lines file *before* it
//! happens, with its undo. Teardown undoes in reverse order; after a crash, `bakeoff cleanup`
//! replays the ledgers whose owner is gone. The owner holds an exclusive `flock` on its ledger
//! for its whole life, so a ledger whose lock can be taken belongs to a dead process.
//!
//! Layout under the state directory (`/var/lib/bakeoff`, or `$BAKEOFF_STATE_DIR`):
//! `ledger/<id>.jsonl` for running processes; `stacks/<name>.jsonl` for stacks kept with
//! `--keep`, which only `bakeoff stack destroy NAME` (or `cleanup --all`) undoes.

use crate::error::StackError;
use crate::exec::Exec;
use rustix::fs::{flock, FlockOperation};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How to undo one side effect. Every undo is idempotent: undoing what is already gone succeeds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "undo", rename_all = "snake_case")]
pub enum Undo {
    /// Remove a file (an image).
    RemoveFile { path: PathBuf },
    /// Remove an empty directory (a mount point, the stack's directory).
    RemoveDir { path: PathBuf },
    /// Detach every loop device backed by this file, clearing its read-only flag first.
    DetachLoop { backing: PathBuf },
    /// Unmount this path (lazily if it is busy).
    Unmount { path: PathBuf },
    /// Destroy this ZFS pool.
    DestroyPool { name: String },
    /// Stop this daemon: SIGTERM, then SIGKILL after 5 s; only if its executable still matches.
    StopDaemon { pid: i32, exe: String },
    /// Stop the daemon whose pid is in this file (recorded before it starts, so a crash between
    /// its start and the pid being known still stops it).
    StopDaemonByPidfile { pidfile: PathBuf, exe: String },
    /// SIGKILL this daemon if it is stopped: a stopped FUSE daemon hangs `umount` and `zpool`.
    KillIfStopped { pid: i32, exe: String },
    /// Write `value` back into a sysfs/procfs file.
    RestoreFile { path: PathBuf, value: String },
    /// Move our processes out of this cgroup and remove it.
    RemoveCgroup { path: PathBuf },
}

/// The state directory.
pub fn state_dir() -> PathBuf {
    std::env::var_os("BAKEOFF_STATE_DIR")
        .map_or_else(|| PathBuf::from("/var/lib/bakeoff"), PathBuf::from)
}

/// A ledger owned by this process.
pub struct Ledger {
    path: PathBuf,
    file: File,
    undos: Vec<Undo>,
}

fn create_dir(dir: &Path) -> Result<(), StackError> {
    std::fs::create_dir_all(dir).map_err(StackError::io("creating the state directory", dir))
}

impl Ledger {
    /// Starts a new ledger named `id` under `state/ledger/`.
    pub fn create(state: &Path, id: &str) -> Result<Ledger, StackError> {
        let dir = state.join("ledger");
        create_dir(&dir)?;
        let path = dir.join(format!("{id}.jsonl"));
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(StackError::io("creating ledger", &path))?;
        flock(&file, FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| StackError::io("locking ledger", &path)(e.into()))?;
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(StackError::io("syncing", &dir))?;
        Ok(Ledger {
            path,
            file,
            undos: Vec::new(),
        })
    }

    /// Records `undo` durably; call before doing what it undoes.
    pub fn record(&mut self, undo: Undo) -> Result<(), StackError> {
        let mut line = serde_json::to_string(&undo).expect("undo serialises");
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(StackError::io("writing ledger", &self.path))?;
        self.file
            .sync_data()
            .map_err(StackError::io("syncing ledger", &self.path))?;
        self.undos.push(undo);
        Ok(())
    }

    /// Where the ledger lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Undoes everything in reverse order; removes the ledger if every undo succeeded.
    /// Returns the failures (the ledger then stays for `bakeoff cleanup`).
    pub fn undo_all(mut self, exec: &mut Exec) -> Vec<String> {
        let failures = replay(&self.undos, exec);
        if failures.is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
        self.undos.clear();
        failures
    }

    /// Keeps the stack: moves the ledger to `state/stacks/<name>.jsonl` (still locked by us
    /// until we exit) so that cleanup of dead processes leaves it alone.
    pub fn keep_as(self, state: &Path, name: &str) -> Result<PathBuf, StackError> {
        let dir = state.join("stacks");
        create_dir(&dir)?;
        let to = dir.join(format!("{name}.jsonl"));
        std::fs::rename(&self.path, &to).map_err(StackError::io("keeping ledger", &to))?;
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(StackError::io("syncing", &dir))?;
        Ok(to)
    }
}

/// Reads the undos of a ledger file; a torn last line (a crash mid-append) is ignored.
pub fn read_undos(path: &Path) -> Result<Vec<Undo>, StackError> {
    let text = std::fs::read_to_string(path).map_err(StackError::io("reading ledger", path))?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// Runs `undos` in reverse order, returning what failed.
pub fn replay(undos: &[Undo], exec: &mut Exec) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, u) in undos.iter().rev().enumerate() {
        if i == 1 {
            fault_point("teardown");
        }
        if let Err(e) = perform(u, exec) {
            failures.push(format!("{u:?}: {e}"));
        }
    }
    failures
}

/// Test hook for fault injection: if `BAKEOFF_FAULT_AT` names this phase, the process kills
/// itself with SIGKILL here, as a crash or `kill -9` would (reliability plan F1).
pub fn fault_point(phase: &str) {
    if std::env::var("BAKEOFF_FAULT_AT").as_deref() == Ok(phase) {
        let me = rustix::process::getpid();
        let _ = rustix::process::kill_process(me, rustix::process::Signal::KILL);
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

/// Ledgers under `state/ledger` whose owner is gone (their lock can be taken).
pub fn stale_ledgers(state: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(state.join("ledger")) else {
        return Vec::new();
    };
    let mut stale: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| lockable(p))
        .collect();
    stale.sort();
    stale
}

/// Kept stacks: name and ledger path.
pub fn kept_stacks(state: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(state.join("stacks")) else {
        return Vec::new();
    };
    let mut kept: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| Some((p.file_stem()?.to_string_lossy().into_owned(), p)))
        .collect();
    kept.sort();
    kept
}

fn lockable(path: &Path) -> bool {
    File::open(path).is_ok_and(|f| flock(&f, FlockOperation::NonBlockingLockExclusive).is_ok())
}

/// Replays one ledger file (stale or kept) and removes it if everything was undone.
pub fn replay_file(path: &Path, exec: &mut Exec) -> Result<Vec<String>, StackError> {
    let file = File::open(path).map_err(StackError::io("opening ledger", path))?;
    flock(&file, FlockOperation::NonBlockingLockExclusive).map_err(|_| {
        StackError::Environment(format!(
            "{} is in use by a running bakeoff; let it finish first",
            path.display()
        ))
    })?;
    let failures = replay(&read_undos(path)?, exec);
    if failures.is_empty() {
        let _ = std::fs::remove_file(path);
    }
    Ok(failures)
}

/// Carries out one undo.
pub fn perform(undo: &Undo, exec: &mut Exec) -> Result<(), String> {
    match undo {
        Undo::RemoveFile { path } => remove(std::fs::remove_file(path), path),
        Undo::RemoveDir { path } => remove(std::fs::remove_dir(path), path),
        Undo::DetachLoop { backing } => detach_loops(backing, exec),
        Undo::Unmount { path } => unmount(path, exec),
        Undo::DestroyPool { name } => destroy_pool(name, exec),
        Undo::StopDaemon { pid, exe } => crate::daemon::stop(*pid, exe),
        Undo::StopDaemonByPidfile { pidfile, exe } => match std::fs::read_to_string(pidfile) {
            Ok(t) => t
                .trim()
                .parse()
                .map_or(Ok(()), |pid| crate::daemon::stop(pid, exe)),
            Err(_) => Ok(()),
        },
        Undo::KillIfStopped { pid, exe } => {
            crate::daemon::kill_if_stopped(*pid, exe);
            Ok(())
        }
        Undo::RestoreFile { path, value } => {
            std::fs::write(path, value).map_err(|e| format!("{}: {e}", path.display()))
        }
        Undo::RemoveCgroup { path } => crate::cgroup::remove(path),
    }
}

fn remove(r: std::io::Result<()>, path: &Path) -> Result<(), String> {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("{}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Loop devices whose backing file is `backing` (from sysfs, so a deleted image still matches).
pub fn loops_backed_by(backing: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let want = backing.to_string_lossy().to_string();
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .filter(|n| {
            std::fs::read_to_string(format!("/sys/block/{n}/loop/backing_file"))
                .is_ok_and(|b| b.trim().trim_end_matches(" (deleted)") == want)
        })
        .collect()
}

fn detach_loops(backing: &Path, exec: &mut Exec) -> Result<(), String> {
    for name in loops_backed_by(backing) {
        let dev = format!("/dev/{name}");
        // A read-only flag survives detach and would poison the next user of this loop device.
        exec.try_run("blockdev", &["--setrw", &dev]);
        exec.run("losetup", &["-d", &dev])
            .map_err(|e| e.to_string())?;
    }
    // A loop device still held for a moment (a just-unmounted file system) is only marked for
    // auto-clear by `losetup -d`: wait until it is really gone, so teardown means gone.
    let start = std::time::Instant::now();
    while !loops_backed_by(backing).is_empty() {
        if start.elapsed() > std::time::Duration::from_secs(10) {
            return Err(format!(
                "{} is still attached: {:?}",
                backing.display(),
                loops_backed_by(backing)
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

fn is_mounted(path: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let p = path.to_string_lossy();
    bakeoff_probe::parse_mountinfo(&mounts)
        .iter()
        .any(|m| m.mount_point == p)
}

fn unmount(path: &Path, exec: &mut Exec) -> Result<(), String> {
    while is_mounted(path) {
        let p = path.to_string_lossy();
        if !exec.try_run("umount", &[&p]) {
            // Busy (a killed run's files still open) or a dead FUSE daemon: detach it lazily.
            exec.run("umount", &["-l", &p]).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn destroy_pool(name: &str, exec: &mut Exec) -> Result<(), String> {
    if !crate::exec::installed("zpool") {
        return Ok(());
    }
    let listed = exec
        .run("zpool", &["list", "-H", "-o", "name"])
        .unwrap_or_default();
    if !listed.lines().any(|l| l.trim() == name) {
        return Ok(());
    }
    // zfs-fuse releases a dataset a moment after its unmount (later still after O_DIRECT
    // opens through FUSE): retry "busy" for a while.
    let start = std::time::Instant::now();
    loop {
        match exec.run("zpool", &["destroy", "-f", name]) {
            Ok(_) => return Ok(()),
            Err(e)
                if e.to_string().contains("busy")
                    && start.elapsed() < std::time::Duration::from_secs(20) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(250))
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_and_replay_in_reverse() {
        let state = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let dir = work.path().join("d");
        let file = dir.join("f");
        let mut ledger = Ledger::create(state.path(), "t1").unwrap();
        ledger
            .record(Undo::RemoveDir { path: dir.clone() })
            .unwrap();
        std::fs::create_dir(&dir).unwrap();
        ledger
            .record(Undo::RemoveFile { path: file.clone() })
            .unwrap();
        std::fs::write(&file, b"x").unwrap();
        assert_eq!(read_undos(ledger.path()).unwrap().len(), 2);
        assert!(
            stale_ledgers(state.path()).is_empty(),
            "our own ledger is locked, not stale"
        );
        let failures = ledger.undo_all(&mut Exec::default());
        assert!(failures.is_empty(), "{failures:?}");
        assert!(!dir.exists(), "file removed before its directory");
        assert_eq!(
            std::fs::read_dir(state.path().join("ledger"))
                .unwrap()
                .count(),
            0
        );
    }

    #[test]
    fn a_dead_owners_ledger_is_stale_and_a_torn_line_is_ignored() {
        let state = tempfile::tempdir().unwrap();
        let path = state.path().join("ledger/dead.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let gone = state.path().join("gone");
        std::fs::write(&gone, b"x").unwrap();
        let line = serde_json::to_string(&Undo::RemoveFile { path: gone.clone() }).unwrap();
        std::fs::write(&path, format!("{line}\n{{\"undo\":\"remove_fi")).unwrap();
        assert_eq!(stale_ledgers(state.path()), vec![path.clone()]);
        let failures = replay_file(&path, &mut Exec::default()).unwrap();
        assert!(failures.is_empty() && !gone.exists() && !path.exists());
    }

    #[test]
    fn undoing_what_is_gone_succeeds() {
        let mut exec = Exec::default();
        let nothing = PathBuf::from("/nonexistent/bakeoff-undo-test");
        for u in [
            Undo::RemoveFile {
                path: nothing.clone(),
            },
            Undo::RemoveDir {
                path: nothing.clone(),
            },
            Undo::DetachLoop {
                backing: nothing.clone(),
            },
            Undo::Unmount {
                path: nothing.clone(),
            },
        ] {
            assert!(perform(&u, &mut exec).is_ok(), "{u:?}");
        }
    }
}
