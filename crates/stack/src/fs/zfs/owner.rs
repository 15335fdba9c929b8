//! Who a running zfs-fuse belongs to. There is one zfs-fuse per machine: a stack that finds one
//! it did not start names its owner — the bakeoff run (pid and command line) or kept stack
//! that started it, read from the owner file bakeoff writes beside the daemon's pid file — and
//! either refuses or, with `--wait`, waits for it to end. It never advises killing a daemon
//! another run is using: its pools would go with it.

use crate::error::StackError;
use crate::ledger::Ledger;
use crate::undo::Undo;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The owner file's name, beside the daemon's pid file in the stack's directory.
const OWNER_FILE: &str = "zfs-fuse.owner";
/// How often a waiting run says it is still waiting.
const STILL_WAITING: Duration = Duration::from_secs(60);

/// The bakeoff process that started a zfs-fuse, and for which stack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Owner {
    /// Its pid.
    pub pid: u32,
    /// Its command line.
    pub command: Vec<String>,
    /// The stack the daemon serves.
    pub stack: String,
}

impl Owner {
    /// This process, starting the daemon for `stack`.
    pub fn this_process(stack: &str) -> Owner {
        Owner {
            pid: std::process::id(),
            command: std::env::args().collect(),
            stack: stack.to_string(),
        }
    }

    /// Writes the owner file into the stack's directory `dir`, its removal in `ledger` first.
    pub fn write(&self, dir: &Path, ledger: &mut Ledger) -> Result<(), StackError> {
        let path = dir.join(OWNER_FILE);
        ledger.record(Undo::RemoveFile { path: path.clone() })?;
        let text = serde_json::to_string(self).expect("an owner serialises");
        std::fs::write(&path, text).map_err(StackError::io("writing", &path))
    }

    /// Whether the process that started the daemon still runs (the same pid with the same
    /// command line: a pid can be reused).
    fn alive(&self) -> bool {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        let args: Vec<String> = (cmdline.split(|b| *b == 0))
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        !args.is_empty() && args == self.command
    }
}

/// The `--pidfile` a daemon was started with, from its argv.
fn pidfile_of(pid: i32) -> Option<PathBuf> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let mut args = cmdline.split(|b| *b == 0);
    args.find(|a| *a == b"--pidfile")?;
    let path = args.next()?;
    Some(PathBuf::from(String::from_utf8_lossy(path).into_owned()))
}

/// The owner of the zfs-fuse `pid`, if bakeoff started it (its owner file is readable).
fn owner_of(pid: i32) -> Option<Owner> {
    let dir = pidfile_of(pid)?.parent()?.to_path_buf();
    let text = std::fs::read_to_string(dir.join(OWNER_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Why the zfs-fuse `pid` (command line `cmd`) cannot serve this stack, naming its owner.
/// `live` is whether its owner is a running bakeoff that `--wait` can wait for.
fn refusal(pid: i32, cmd: &str, owner: Option<&Owner>) -> (String, bool) {
    match owner {
        Some(o) if o.alive() => (
            format!(
                "zfs-fuse (pid {pid}) is in use by another bakeoff run: pid {}, `{}`, for its \
                 stack {}; there is one zfs-fuse per machine and a run does not share it with \
                 another. Run this again when that run has finished, or add --wait to wait for it",
                o.pid,
                o.command.join(" "),
                o.stack
            ),
            true,
        ),
        Some(o) => (
            format!(
                "zfs-fuse (pid {pid}) serves the stack {}, started by bakeoff pid {} (`{}`), \
                 which has ended: the stack was kept (`bakeoff stack destroy {}` ends it) or its \
                 run was killed (`bakeoff cleanup` ends it)",
                o.stack,
                o.pid,
                o.command.join(" "),
                o.stack
            ),
            false,
        ),
        None => (
            format!(
                "zfs-fuse is already running (pid {pid}: `{cmd}`), started outside bakeoff: its \
                 ARC and cache settings are unknown and its pools are not ours; stop it \
                 (`zpool export -a`, then `systemctl stop zfs-fuse`) and run this again"
            ),
            false,
        ),
    }
}

/// Returns once no zfs-fuse runs (`running` lists them). Otherwise, without `wait`, refuses
/// naming the daemon's owner; with `wait` (the flag raised by Ctrl-C), waits while its owner is
/// a running bakeoff, saying so on stderr when it starts and every minute after.
pub fn wait_until_free(
    running: &dyn Fn() -> Vec<(i32, String)>,
    wait: Option<&Arc<AtomicBool>>,
) -> Result<(), StackError> {
    wait_with(running, &owner_of, wait)
}

/// [`wait_until_free`], with the owner of a daemon found by `owner_of`.
fn wait_with(
    running: &dyn Fn() -> Vec<(i32, String)>,
    owner_of: &dyn Fn(i32) -> Option<Owner>,
    wait: Option<&Arc<AtomicBool>>,
) -> Result<(), StackError> {
    let started = Instant::now();
    let mut said = None::<Instant>;
    loop {
        let Some((pid, cmd)) = running().into_iter().next() else {
            return Ok(());
        };
        let owner = owner_of(pid);
        let (why, live) = refusal(pid, &cmd, owner.as_ref());
        let Some(stop) = wait.filter(|_| live) else {
            return Err(StackError::Environment(why));
        };
        if stop.load(Ordering::Relaxed) {
            return Err(StackError::Interrupted(format!(
                "interrupted while waiting for zfs-fuse (pid {pid}) of another bakeoff run"
            )));
        }
        if said.is_none_or(|t| t.elapsed() >= STILL_WAITING) {
            let o = owner.as_ref().expect("a live owner");
            let minutes = started.elapsed().as_secs() / 60;
            eprintln!(
                "bakeoff: waiting for bakeoff pid {} (`{}`) to finish with zfs-fuse (pid {pid}, \
                 stack {}){}",
                o.pid,
                o.command.join(" "),
                o.stack,
                match minutes {
                    0 => String::new(),
                    m => format!(": {m} min so far"),
                }
            );
            said = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_owner_is_named_and_never_told_to_be_killed() {
        let me = Owner::this_process("zfs-1-0");
        let (why, live) = refusal(42, "zfs-fuse --pidfile x", Some(&me));
        assert!(live, "{why}");
        assert!(
            why.contains(&format!("pid {}", std::process::id())),
            "{why}"
        );
        assert!(why.contains("zfs-1-0") && why.contains("--wait"), "{why}");
        assert!(!why.contains("kill"), "{why}");
        let gone = Owner {
            pid: u32::MAX,
            ..me.clone()
        };
        let (why, live) = refusal(42, "zfs-fuse", Some(&gone));
        assert!(
            !live && why.contains("bakeoff stack destroy zfs-1-0"),
            "{why}"
        );
        assert!(!why.contains("kill "), "{why}");
    }

    #[test]
    fn the_owner_is_read_beside_the_daemons_pid_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::create(dir.path(), "t").unwrap();
        let me = Owner::this_process("zfs-1-0");
        me.write(dir.path(), &mut ledger).unwrap();
        let text = std::fs::read_to_string(dir.path().join(OWNER_FILE)).unwrap();
        assert_eq!(serde_json::from_str::<Owner>(&text).unwrap(), me);
        assert!(me.alive());
        // This test runs without --pidfile: not a daemon bakeoff started.
        assert_eq!(owner_of(std::process::id() as i32), None);
    }

    #[test]
    fn a_run_waits_while_the_owner_runs_and_stops_on_ctrl_c() {
        let daemon = || vec![(7, "zfs-fuse --pidfile /x/zfs-fuse.pid".to_string())];
        let live = |_| Some(Owner::this_process("zfs-1-0"));
        let stop = Arc::new(AtomicBool::new(false));
        // Without --wait: refused at once, naming the owner.
        let e = wait_with(&daemon, &live, None).unwrap_err().to_string();
        assert!(e.contains("in use by another bakeoff run"), "{e}");
        // With --wait: it waits until the daemon is gone.
        let calls = std::cell::Cell::new(0);
        let goes_away = || {
            calls.set(calls.get() + 1);
            if calls.get() < 3 {
                daemon()
            } else {
                Vec::new()
            }
        };
        let started = Instant::now();
        wait_with(&goes_away, &live, Some(&stop)).unwrap();
        assert_eq!(calls.get(), 3);
        assert!(started.elapsed() >= Duration::from_millis(900));
        // Ctrl-C ends the wait.
        stop.store(true, Ordering::Relaxed);
        let e = wait_with(&daemon, &live, Some(&stop)).unwrap_err();
        assert!(matches!(e, StackError::Interrupted(_)), "{e}");
        // A daemon of a run that has ended is not waited for: it would never go.
        let ended = |_| {
            Some(Owner {
                pid: u32::MAX,
                ..Owner::this_process("zfs-1-0")
            })
        };
        stop.store(false, Ordering::Relaxed);
        let e = wait_with(&daemon, &ended, Some(&stop))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bakeoff stack destroy zfs-1-0"), "{e}");
    }
}
