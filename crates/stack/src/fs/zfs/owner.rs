//! Who a running zfs-fuse belongs to, and whether a stack may use it. There is one zfs-fuse
//! per machine, and bakeoff runs share it: the daemon bakeoff starts keeps its pid file and its
//! registry ([`crate::sharing`]: its settings, who started it, who uses it) in
//! [`ZFS_FUSE_DIR`]. A stack that asks for the settings the daemon runs with uses it (its own
//! pool on its own devices); one that asks for others is refused naming the runs that use the
//! daemon and the settings that differ, or with `--wait` waits until they are done. A daemon
//! started outside bakeoff is refused: its settings and pools are unknown. Nothing here ever
//! advises killing a daemon another run is using: its pools would go with it.

use crate::error::StackError;
pub use crate::sharing::ZFS_FUSE_DIR;
use crate::sharing::{Registry, User};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a waiting run says it is still waiting.
const STILL_WAITING: Duration = Duration::from_secs(60);
/// The pid file of the daemon runs share, in the registry's directory.
pub const PIDFILE: &str = "zfs-fuse.pid";

/// What the registry says of the zfs-fuse bakeoff started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DaemonState {
    /// Its pid.
    pub pid: i32,
    /// The settings flags it was started with (what sharing compares).
    pub flags: Vec<String>,
    /// What those settings amount to (`arc_max`, `vdev_cache`, `prefetch`, ...).
    pub settings: BTreeMap<String, String>,
    /// The stack it was started for.
    pub started_for: String,
}

/// What a stack asking for zfs-fuse finds.
#[derive(Debug)]
pub enum Found {
    /// No zfs-fuse runs: start one.
    Nothing,
    /// The zfs-fuse bakeoff started runs with the settings asked for: use it.
    Same(DaemonState),
    /// A zfs-fuse that cannot serve this stack: why, and whether `--wait` can wait for it
    /// (the runs using it are other live bakeoff processes, which will end).
    Refused {
        /// The message, naming the daemon, its users and what to do.
        why: String,
        /// Whom a waiting run waits for, if anyone.
        waits_for: Option<String>,
    },
}

/// The `--pidfile` in a daemon's command line (as `zfs-fuse --pidfile FILE ...`).
fn pidfile_in(cmd: &str) -> Option<PathBuf> {
    let mut args = cmd.split_whitespace();
    args.find(|a| *a == "--pidfile")?;
    args.next().map(PathBuf::from)
}

/// What the stack asking for `flags` (amounting to `settings`) finds, given the running
/// zfs-fuse daemons (pid and command line) and the registry, locked.
pub fn examine(
    registry: &Registry,
    running: &[(i32, String)],
    flags: &[String],
    settings: &BTreeMap<String, String>,
) -> Found {
    let Some((pid, cmd)) = running.first() else {
        return Found::Nothing;
    };
    let pid = *pid;
    let ours = pidfile_in(cmd).as_deref() == Some(&registry.dir().join(PIDFILE));
    let state = (registry.state::<DaemonState>()).filter(|s| ours && s.pid == pid);
    let Some(state) = state else {
        return Found::Refused {
            why: format!(
                "zfs-fuse is already running (pid {pid}: `{cmd}`), started outside bakeoff: \
                 its ARC and cache settings are unknown and its pools are not ours; stop it \
                 (`zpool export -a`, then `systemctl stop zfs-fuse`) and run this again"
            ),
            waits_for: None,
        };
    };
    if state.flags == flags {
        return Found::Same(state);
    }
    let users = registry.users();
    let differ = differences(&state.settings, settings);
    refusal(pid, &state, &users, &differ)
}

/// The settings that differ: `arc_max 104857600 (running) vs 67108864 (this stack)`.
fn differences(running: &BTreeMap<String, String>, asked: &BTreeMap<String, String>) -> String {
    let none = String::from("(unset)");
    let keys = running.keys().chain(asked.keys());
    let mut seen: Vec<&String> = keys.collect();
    seen.sort();
    seen.dedup();
    let differ: Vec<String> = seen
        .into_iter()
        .filter(|k| running.get(*k) != asked.get(*k))
        .map(|k| {
            let (r, a) = (
                running.get(k).unwrap_or(&none),
                asked.get(k).unwrap_or(&none),
            );
            format!("{k} {r} (running) vs {a} (this stack)")
        })
        .collect();
    differ.join(", ")
}

/// Why the daemon `pid` (started as `state` says) cannot serve a stack asking for other
/// settings (`differ`), naming its `users`.
fn refusal(pid: i32, state: &DaemonState, users: &[User], differ: &str) -> Found {
    let same = "Runs share one zfs-fuse only when its settings agree (arc, vdev_cache, \
                prefetch, FUSE mount options).";
    if let Some(me) = users.iter().find(|u| u.is_this_process()) {
        let why = format!(
            "zfs-fuse (pid {pid}) already runs for another zfs stack of this run ({}) with \
             `{}`, and this stack asks for other settings: {differ}; there is one zfs-fuse per \
             machine, so give both stacks the same arc, vdev_cache, prefetch and mount options",
            me.stack,
            state.flags.join(" ")
        );
        return Found::Refused {
            why,
            waits_for: None,
        };
    }
    let runs: Vec<String> = (users.iter().filter(|u| u.kept.is_none()))
        .map(User::describe)
        .collect();
    let kept: Vec<String> = (users.iter().filter(|u| u.kept.is_some()))
        .map(User::describe)
        .collect();
    if !runs.is_empty() {
        let whom = runs.join("; and ");
        let why = format!(
            "zfs-fuse (pid {pid}) is in use by another bakeoff run: {whom}; it runs with other \
             settings than this stack asks for: {differ}. {same} Run this again when that run \
             has finished, give this stack the same settings, or add --wait to wait for it"
        );
        let waits_for = format!("{whom} to finish with zfs-fuse (pid {pid}; {differ})");
        return Found::Refused {
            why,
            waits_for: Some(waits_for),
        };
    }
    let why = match kept.is_empty() {
        false => format!(
            "zfs-fuse (pid {pid}) serves {}, with other settings than this stack asks for: \
             {differ}. {same}",
            kept.join("; and ")
        ),
        true => format!(
            "zfs-fuse (pid {pid}) was started by bakeoff for the stack {}, whose run has ended \
             without stopping it (killed: `bakeoff cleanup` ends it), and runs with other \
             settings than this stack asks for: {differ}. {same}",
            state.started_for
        ),
    };
    Found::Refused {
        why,
        waits_for: None,
    }
}

/// A run's wait for the zfs-fuse of other runs: says whom it waits for when it starts and
/// every minute after.
#[derive(Default)]
pub struct Waiting {
    started: Option<Instant>,
    said: Option<Instant>,
}

impl Waiting {
    /// Refuses with `why` unless `waits_for` names live runs and `wait` (the flag raised by
    /// Ctrl-C) is given; then says so on stderr when due and sleeps a moment before the
    /// caller looks again.
    pub fn wait_or_refuse(
        &mut self,
        why: String,
        waits_for: Option<String>,
        wait: Option<&Arc<AtomicBool>>,
    ) -> Result<(), StackError> {
        let (Some(whom), Some(stop)) = (waits_for, wait) else {
            return Err(StackError::Environment(why));
        };
        if stop.load(Ordering::Relaxed) {
            return Err(StackError::Interrupted(format!(
                "interrupted while waiting for {whom}"
            )));
        }
        let started = *self.started.get_or_insert_with(Instant::now);
        if self.said.is_none_or(|t| t.elapsed() >= STILL_WAITING) {
            let minutes = started.elapsed().as_secs() / 60;
            let so_far = match minutes {
                0 => String::new(),
                m => format!(" ({m} min so far)"),
            };
            eprintln!("bakeoff: waiting for {whom}{so_far}");
            self.said = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(500));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
