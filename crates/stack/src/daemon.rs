//! Daemons a stack owns: zfs-fuse, started by the ZFS driver, and (later) database servers,
//! started by callers on a live stack (`Stack::start_daemon`). Each is typed (name,
//! pid, executable, command line), started through the ledger (its stop recorded before it
//! starts), checked ([`Daemon::check`]: the stack's health and a run's failure cause cover it)
//! and stopped at teardown by its undo (`Undo::StopDaemon`).

use crate::error::StackError;
use crate::exec::{Cmd, Exec};
use crate::ledger::Ledger;
pub use crate::process::{alive, exe_of, pid_in, state};
pub use crate::undo::StopBy;
use crate::undo::Undo;
pub use bakeoff_core::record::DaemonInfo;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A daemon a stack owns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Daemon {
    /// Name, pid, executable and command line (what the run record shows).
    pub info: DaemonInfo,
    /// How teardown stops it.
    pub stop: StopBy,
}

impl Daemon {
    /// Process id.
    pub fn pid(&self) -> i32 {
        self.info.pid
    }

    /// What it is (`zfs-fuse`).
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// Ok while the process runs its executable and is neither stopped (`kill -STOP`: a stopped
    /// FUSE daemon hangs every access) nor a zombie; else what happened (`died`, `was stopped`).
    pub fn check(&self) -> Result<(), String> {
        let pid = self.pid();
        if exe_of(pid).as_deref() != Some(self.info.exe.as_str()) || !alive(pid) {
            return Err("died".into());
        }
        match state(pid) {
            Some('T' | 't') => Err("was stopped".into()),
            _ => Ok(()),
        }
    }
}

/// How to start a daemon that detaches itself and writes its pid into a file.
#[derive(Clone, Debug)]
pub struct DaemonStart {
    /// What it is (`zfs-fuse`, `postgres`).
    pub name: String,
    /// Its executable, canonical (as `/proc/PID/exe` shows it): a pid found running another
    /// program is never signalled.
    pub exe: PathBuf,
    /// The command that starts it (the daemon itself, or `pg_ctl start`).
    pub command: Cmd,
    /// Where it writes its pid (the first line: `postmaster.pid` has more after it).
    pub pidfile: PathBuf,
    /// How to stop it.
    pub stop: StopBy,
    /// How long it may take to write its pid.
    pub ready_within: Duration,
    /// Where the start command writes the pid of the process it leaves running (`$!`), when it
    /// detaches one: a daemon that exits before writing its pid file (a failed recovery, a bad
    /// option) is then noticed at once rather than after `ready_within`.
    pub launched: Option<PathBuf>,
}

/// Starts a daemon: records its stop first (by pid file, so a crash between its start and its
/// pid being known still stops it), runs the start command, waits for the pid, and records the
/// stop by pid.
pub fn start(
    spec: DaemonStart,
    ledger: &mut Ledger,
    exec: &mut Exec,
) -> Result<Daemon, StackError> {
    let exe = spec.exe.to_string_lossy().into_owned();
    ledger.record(Undo::RemoveFile {
        path: spec.pidfile.clone(),
    })?;
    ledger.record(Undo::StopDaemonByPidfile {
        pidfile: spec.pidfile.clone(),
        exe: exe.clone(),
        stop: spec.stop.clone(),
    })?;
    let daemon = launch(&spec, exec)?;
    ledger.record(Undo::StopDaemon {
        pid: daemon.pid(),
        exe,
        stop: spec.stop,
    })?;
    Ok(daemon)
}

/// Runs the start command and waits for the pid, recording nothing: for a daemon whose stop
/// the caller records itself (a zfs-fuse several runs share, stopped by the last to leave).
pub fn launch(spec: &DaemonStart, exec: &mut Exec) -> Result<Daemon, StackError> {
    exec.run_cmd(&spec.command).map_err(|e| {
        StackError::Environment(format!("{e}: the {} daemon did not start", spec.name))
    })?;
    let pid = wait_for_pid(spec)?;
    Ok(Daemon {
        info: DaemonInfo {
            name: spec.name.clone(),
            pid,
            exe: spec.exe.to_string_lossy().into_owned(),
            args: spec.command.argv(),
        },
        stop: spec.stop.clone(),
    })
}

/// The daemon's pid once its pid file names a process that runs its executable (a pid file
/// written before an `exec` names a shell for a moment).
fn wait_for_pid(spec: &DaemonStart) -> Result<i32, StackError> {
    let start = Instant::now();
    let exe = spec.exe.to_string_lossy();
    loop {
        let pid = pid_in(&spec.pidfile);
        if let Some(pid) = pid.filter(|&p| exe_of(p).as_deref() == Some(&*exe)) {
            return Ok(pid);
        }
        let launched = spec.launched.as_deref().and_then(pid_in);
        if let Some(gone) = launched.filter(|&p| !alive(p)) {
            return Err(StackError::Environment(format!(
                "{} exited (pid {gone}) before it wrote its pid to {}",
                spec.name,
                spec.pidfile.display()
            )));
        }
        if start.elapsed() > spec.ready_within {
            let what = match pid {
                Some(pid) => format!("its pid file names pid {pid}, which does not run {exe}"),
                None => format!("it wrote no pid to {}", spec.pidfile.display()),
            };
            return Err(StackError::Environment(format!(
                "{} did not start within {} s: {what}",
                spec.name,
                spec.ready_within.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_is_checked_by_its_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let exe = exe_of(pid).unwrap();
        let daemon = Daemon {
            info: DaemonInfo {
                name: "sleep".into(),
                pid,
                exe: exe.clone(),
                args: vec![exe.clone(), "30".into()],
            },
            stop: StopBy::Signal,
        };
        assert_eq!(daemon.check(), Ok(()));
        let other = Daemon {
            info: DaemonInfo {
                exe: "/usr/sbin/zfs-fuse".into(),
                ..daemon.info.clone()
            },
            stop: StopBy::Signal,
        };
        assert!(other.check().is_err(), "a pid running another program");
        let p = rustix::process::Pid::from_raw(pid).unwrap();
        rustix::process::kill_process(p, rustix::process::Signal::STOP).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while state(pid) != Some('T') && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(daemon.check(), Err("was stopped".into()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(daemon.check(), Err("died".into()));
    }

    #[test]
    fn the_pid_is_the_first_complete_line_of_the_pid_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("postmaster.pid");
        assert_eq!(pid_in(&file), None);
        std::fs::write(&file, "123").unwrap();
        assert_eq!(pid_in(&file), None, "a line still being written");
        std::fs::write(&file, "123\n/var/lib/pg/data\n").unwrap();
        assert_eq!(pid_in(&file), Some(123));
    }
}
