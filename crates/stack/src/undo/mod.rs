//! Every undo action in one place: how each entry of the ledger ([`Undo`], in [`entry`]) is
//! carried out (image files, loop devices, mounts, pools, daemons, sysfs knobs, cgroups). Every
//! undo is idempotent: undoing what is already gone succeeds, so a ledger can be replayed after a
//! crash at any point, and again.

pub mod entry;
pub use self::entry::{StopBy, Undo};

use crate::exec::{Cmd, Exec};
use crate::process::{alive, exe_of, pid_in, state};
use crate::sharing::Registry;
use rustix::process::{kill_process, Pid, Signal};
use std::path::Path;
use std::time::{Duration, Instant};

/// Carries out one undo.
pub fn perform(undo: &Undo, exec: &mut Exec) -> Result<(), String> {
    match undo {
        Undo::RemoveFile { path } => remove(std::fs::remove_file(path), path),
        Undo::RemoveDir { path } => remove(std::fs::remove_dir(path), path),
        Undo::RemoveDirAndFiles { path } => remove_dir_and_files(path),
        Undo::DetachLoop { backing } => detach_loops(backing, exec),
        Undo::Unmount { path } => unmount(path, exec),
        Undo::DestroyPool { name } => destroy_pool(name, exec),
        Undo::StopDaemon { pid, exe, stop } => stop_daemon(*pid, exe, stop, exec),
        Undo::StopDaemonByPidfile { pidfile, exe, stop } => match pid_in(pidfile) {
            Some(pid) => stop_daemon(pid, exe, stop, exec),
            None => Ok(()),
        },
        Undo::LeaveShared { dir, user, last } => leave_shared(dir, user, last, exec),
        Undo::KillIfStopped { pid, exe } => {
            kill_if_stopped(*pid, exe);
            Ok(())
        }
        Undo::RestoreFile { path, value } => {
            std::fs::write(path, value).map_err(|e| format!("{}: {e}", path.display()))
        }
        Undo::RemoveCgroup { path } => remove_cgroup(path),
        Undo::KillCgroup { path } => crate::command_group::kill_and_remove(path),
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

fn remove_dir_and_files(dir: &Path) -> Result<(), String> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        other => other.map_err(|e| format!("{}: {e}", dir.display()))?,
    };
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        // symlink_metadata: a symlink to a directory is removed as a link, never followed.
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir {
            return Err(format!(
                "{} holds the directory {}: not removing a tree",
                dir.display(),
                path.display()
            ));
        }
        remove(std::fs::remove_file(&path), &path)?;
    }
    remove(std::fs::remove_dir(dir), dir)
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
    let start = Instant::now();
    while !loops_backed_by(backing).is_empty() {
        if start.elapsed() > Duration::from_secs(10) {
            return Err(format!(
                "{} is still attached: {:?}",
                backing.display(),
                loops_backed_by(backing)
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
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
    exec.run_retrying_busy("zpool", &["destroy", "-f", name], Duration::from_secs(20))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Stops `pid` if it still runs `exe`: by its stop command first if it has one, then SIGTERM,
/// then SIGKILL after a grace period. A pid that is gone or reused by another program is left
/// alone.
pub fn stop_daemon(pid: i32, exe: &str, stop: &StopBy, exec: &mut Exec) -> Result<(), String> {
    if exe_of(pid).as_deref() != Some(exe) || !alive(pid) {
        return Ok(());
    }
    // Once it is exiting its executable is no longer readable, but it is not gone: zfs-fuse's
    // hundred threads take a moment, and it holds its lock until the last one ends. A pid
    // reused meanwhile would show another executable.
    let ours = || alive(pid) && exe_of(pid).is_none_or(|e| e == exe);
    if let StopBy::Command { argv, user } = stop {
        if let Some((program, args)) = argv.split_first() {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            // Its failure is not final: the signals below still stop the daemon.
            let _ = exec.run_cmd(&Cmd::new(program, &args).user(*user));
            wait_while(ours, STOP_GRACE);
        }
    }
    let Some(p) = Pid::from_raw(pid) else {
        return Ok(());
    };
    for signal in [Signal::TERM, Signal::KILL] {
        if !ours() {
            return Ok(());
        }
        let _ = kill_process(p, signal);
        wait_while(ours, STOP_GRACE);
    }
    match ours() {
        true => Err(format!("process {pid} ({exe}) did not stop")),
        false => Ok(()),
    }
}

/// Leaves the registry in `dir` as `user`; the last user carries out `last` (stops the daemon)
/// holding the registry's lock, so that nobody joins what is being stopped, and clears the
/// registry.
fn leave_shared(dir: &Path, user: &str, last: &[Undo], exec: &mut Exec) -> Result<(), String> {
    let registry = Registry::lock(dir).map_err(|e| e.to_string())?;
    if !registry.leave(user) {
        return Ok(());
    }
    let failed: Vec<String> = (last.iter())
        .filter_map(|u| perform(u, exec).err())
        .collect();
    if !failed.is_empty() {
        return Err(failed.join("; "));
    }
    registry.reset();
    Ok(())
}

/// How long a daemon gets to exit after each way of stopping it.
const STOP_GRACE: Duration = Duration::from_secs(5);

fn wait_while(condition: impl Fn() -> bool, limit: Duration) {
    let start = Instant::now();
    while condition() && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGKILLs `pid` if it is stopped (state T) and still runs `exe`.
pub fn kill_if_stopped(pid: i32, exe: &str) {
    let stopped = matches!(state(pid), Some('T' | 't'));
    if stopped && exe_of(pid).as_deref() == Some(exe) {
        if let Some(p) = Pid::from_raw(pid) {
            let _ = kill_process(p, Signal::KILL);
        }
    }
}

/// Moves every process out of the cgroup at `path` (to its parent) and removes it.
pub fn remove_cgroup(path: &Path) -> Result<(), String> {
    if !path.exists() {
        return Ok(());
    }
    let parent_procs = path
        .parent()
        .map(|p| p.join("cgroup.procs"))
        .ok_or("cgroup has no parent")?;
    let procs = std::fs::read_to_string(path.join("cgroup.procs")).unwrap_or_default();
    for pid in procs.split_whitespace() {
        let _ = std::fs::write(&parent_procs, pid);
    }
    std::fs::remove_dir(path).map_err(|e| format!("removing cgroup {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

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
            Undo::RemoveDirAndFiles {
                path: nothing.clone(),
            },
            Undo::KillCgroup {
                path: nothing.clone(),
            },
        ] {
            assert!(perform(&u, &mut exec).is_ok(), "{u:?}");
        }
    }

    #[test]
    fn a_directory_goes_with_its_files_but_never_with_a_subdirectory() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("socket");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(".s.PGSQL.5432.lock"), b"123").unwrap();
        std::os::unix::fs::symlink(scratch.path(), dir.join("link")).unwrap();
        let undo = Undo::RemoveDirAndFiles { path: dir.clone() };
        perform(&undo, &mut Exec::default()).unwrap();
        assert!(
            !dir.exists() && scratch.path().exists(),
            "a link is not followed"
        );
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let err = perform(&undo, &mut Exec::default()).unwrap_err();
        assert!(err.contains("not removing a tree"), "{err}");
        assert!(dir.join("sub").exists());
    }
}
