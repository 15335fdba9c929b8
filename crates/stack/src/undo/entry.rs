//! The entries of the undo log: how each side effect bakeoff records in the ledger is undone,
//! as data (what the ledger file holds, one JSON line each). [`super::perform`] carries them out.

use crate::exec::RunAs;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How a daemon is stopped at teardown.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum StopBy {
    /// SIGTERM, then SIGKILL after a grace period.
    #[default]
    Signal,
    /// This command first (`pg_ctl stop -D DIR -m fast`, as `user`); signals if the daemon
    /// still runs after it.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
        /// Who runs it.
        user: Option<RunAs>,
    },
}

/// How to undo one side effect. Every undo is idempotent: undoing what is already gone succeeds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "undo", rename_all = "snake_case")]
pub enum Undo {
    /// Remove a file (an image).
    RemoveFile { path: PathBuf },
    /// Remove an empty directory (a mount point, the stack's directory).
    RemoveDir { path: PathBuf },
    /// Remove the files directly in this directory, then the directory (a database server's
    /// socket directory, where a killed server leaves its socket and lock file). Never recurses:
    /// a subdirectory makes the undo fail rather than delete a tree.
    RemoveDirAndFiles { path: PathBuf },
    /// Detach every loop device backed by this file, clearing its read-only flag first.
    DetachLoop { backing: PathBuf },
    /// Unmount this path (lazily if it is busy).
    Unmount { path: PathBuf },
    /// Destroy this ZFS pool.
    DestroyPool { name: String },
    /// Stop this daemon as `stop` says (signals by default: SIGTERM, then SIGKILL after 5 s);
    /// only if its executable still matches.
    StopDaemon {
        pid: i32,
        exe: String,
        #[serde(default)]
        stop: StopBy,
    },
    /// Stop the daemon whose pid is in this file (recorded before it starts, so a crash between
    /// its start and the pid being known still stops it).
    StopDaemonByPidfile {
        pidfile: PathBuf,
        exe: String,
        #[serde(default)]
        stop: StopBy,
    },
    /// Leave the users of a per-machine resource several runs share (`crate::sharing`: the
    /// zfs-fuse daemon), its registry in `dir`, this stack as `user`; the last to leave
    /// carries out `last` (stops the daemon) and clears the registry.
    LeaveShared {
        dir: PathBuf,
        user: String,
        last: Vec<Undo>,
    },
    /// SIGKILL this daemon if it is stopped: a stopped FUSE daemon hangs `umount` and `zpool`.
    KillIfStopped { pid: i32, exe: String },
    /// Write `value` back into a sysfs/procfs file.
    RestoreFile { path: PathBuf, value: String },
    /// Move our processes out of this cgroup and remove it.
    RemoveCgroup { path: PathBuf },
    /// Kill every process in this cgroup v2 (a command tree run on the stack: `bakeoff exec`,
    /// a recipe's phase) and remove it.
    KillCgroup { path: PathBuf },
}
