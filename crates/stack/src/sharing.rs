//! A per-machine resource several bakeoff runs use at once (the one zfs-fuse daemon a machine
//! has): who uses it, kept in a directory of its own that outlives any one run.
//!
//! The directory holds `lock` (an `flock` taken for every look and change, so starting,
//! joining and leaving never race), `state.json` (what the resource is: the daemon's settings
//! and who started it) and `users/<token>.json`, one file per user. A user is a running bakeoff
//! process (its pid with the same command line: a pid can be reused) or a stack kept with
//! `--keep` (while its kept ledger exists); a file whose user is gone is ignored and removed.
//! The last user to leave stops the resource: [`Registry::leave`] says when that is.

use crate::error::StackError;
use crate::process::command_line;
use rustix::fs::{flock, FlockOperation};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The directory of the zfs-fuse daemon bakeoff runs share (on the `/run` tmpfs: a reboot
/// ends the daemon and its users alike).
pub const ZFS_FUSE_DIR: &str = "/run/bakeoff/zfs-fuse";

/// One user of a shared resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// Its file name in `users/`: unique per stack.
    pub token: String,
    /// The bakeoff process.
    pub pid: u32,
    /// Its command line.
    pub command: Vec<String>,
    /// The stack that uses the resource.
    pub stack: String,
    /// The ledger of a stack kept with `--keep`: it uses the resource while this file exists.
    #[serde(default)]
    pub kept: Option<PathBuf>,
}

impl User {
    /// This process, using the resource for `stack`.
    pub fn this_process(stack: &str) -> User {
        let pid = std::process::id();
        User {
            token: format!("{pid}-{stack}").replace(['/', '\0'], "_"),
            pid,
            command: std::env::args().collect(),
            stack: stack.to_string(),
            kept: None,
        }
    }

    /// Whether it still uses the resource: a kept stack while its ledger exists, else while
    /// its process runs (the same pid with the same command line).
    pub fn live(&self) -> bool {
        match &self.kept {
            Some(ledger) => ledger.exists(),
            None => command_line(self.pid as i32).is_some_and(|c| c == self.command),
        }
    }

    /// Whether it is this process (a second stack of the same run).
    pub fn is_this_process(&self) -> bool {
        self.kept.is_none() && self.pid == std::process::id()
    }

    /// `bakeoff pid 123 (`bakeoff run slob ...`), stack zfs-123-0`, or the kept stack.
    pub fn describe(&self) -> String {
        match &self.kept {
            Some(_) => format!(
                "the kept stack {} (`bakeoff stack destroy {}` ends it)",
                self.stack, self.stack
            ),
            None => format!(
                "bakeoff pid {} (`{}`), stack {}",
                self.pid,
                self.command.join(" "),
                self.stack
            ),
        }
    }
}

/// The registry of a shared resource, locked while this value lives.
pub struct Registry {
    dir: PathBuf,
    _lock: File,
}

impl Registry {
    /// Takes the registry's lock in `dir` (made if missing), waiting while another process
    /// holds it (a start takes seconds at most).
    pub fn lock(dir: &Path) -> Result<Registry, StackError> {
        let users = dir.join("users");
        std::fs::create_dir_all(&users).map_err(StackError::io("creating", &users))?;
        let path = dir.join("lock");
        let file = (OpenOptions::new().create(true).truncate(false).write(true))
            .open(&path)
            .map_err(StackError::io("opening", &path))?;
        flock(&file, FlockOperation::LockExclusive)
            .map_err(|e| StackError::io("locking", &path)(e.into()))?;
        Ok(Registry {
            dir: dir.to_path_buf(),
            _lock: file,
        })
    }

    /// The registry's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn user_file(&self, token: &str) -> PathBuf {
        self.dir.join("users").join(format!("{token}.json"))
    }

    /// The users still using the resource; the files of those gone are removed.
    pub fn users(&self) -> Vec<User> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("users")) else {
            return Vec::new();
        };
        let mut users = Vec::new();
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            match serde_json::from_str::<User>(&text) {
                Ok(u) if u.live() => users.push(u),
                // A torn or foreign file, or a user gone: nobody uses the resource through it.
                _ => drop(std::fs::remove_file(&path)),
            }
        }
        users.sort_by_key(|u| u.pid);
        users
    }

    /// Adds `user` (written whole, then renamed: a crash leaves no torn file).
    pub fn join(&self, user: &User) -> Result<(), StackError> {
        let path = self.user_file(&user.token);
        let tmp = path.with_extension("tmp");
        let text = serde_json::to_string(user).expect("a user serialises");
        std::fs::write(&tmp, text).map_err(StackError::io("writing", &tmp))?;
        std::fs::rename(&tmp, &path).map_err(StackError::io("renaming", &path))
    }

    /// Marks the user `token` as a stack kept with `--keep`, whose ledger is now `ledger`.
    pub fn keep(&self, token: &str, ledger: &Path) -> Result<(), StackError> {
        let path = self.user_file(token);
        let text = std::fs::read_to_string(&path).map_err(StackError::io("reading", &path))?;
        let mut user: User = serde_json::from_str(&text)
            .map_err(|e| StackError::Environment(format!("{}: {e}", path.display())))?;
        user.kept = Some(ledger.to_path_buf());
        self.join(&user)
    }

    /// Removes the user `token`; true when no user is left, so the caller stops the resource.
    pub fn leave(&self, token: &str) -> bool {
        let _ = std::fs::remove_file(self.user_file(token));
        self.users().is_empty()
    }

    /// Forgets every user and the state: a new resource starts (the one they used is gone).
    pub fn reset(&self) {
        if let Ok(entries) = std::fs::read_dir(self.dir.join("users")) {
            for e in entries.filter_map(|e| e.ok()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let _ = std::fs::remove_file(self.dir.join("state.json"));
    }

    /// What the resource is, as its starter wrote it with [`Registry::set_state`].
    pub fn state<T: for<'de> Deserialize<'de>>(&self) -> Option<T> {
        let text = std::fs::read_to_string(self.dir.join("state.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes what the resource is.
    pub fn set_state<T: Serialize>(&self, state: &T) -> Result<(), StackError> {
        let path = self.dir.join("state.json");
        let text = serde_json::to_string(state).expect("a state serialises");
        std::fs::write(&path, text).map_err(StackError::io("writing", &path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_come_and_go_and_the_gone_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let reg = Registry::lock(dir.path()).unwrap();
        let me = User::this_process("zfs-1-0");
        assert!(me.live() && me.is_this_process());
        reg.join(&me).unwrap();
        let gone = User {
            token: "dead".into(),
            pid: u32::MAX,
            ..me.clone()
        };
        reg.join(&gone).unwrap();
        assert_eq!(reg.users(), vec![me.clone()]);
        assert!(
            !reg.user_file("dead").exists(),
            "a gone user's file is removed"
        );
        // A kept stack is a user while its ledger exists, whoever made it.
        let ledger = dir.path().join("kept.jsonl");
        std::fs::write(&ledger, "").unwrap();
        let kept = User {
            token: "kept".into(),
            pid: u32::MAX,
            ..me.clone()
        };
        reg.join(&kept).unwrap();
        reg.keep("kept", &ledger).unwrap();
        assert_eq!(reg.users().len(), 2);
        assert!(reg.users()[1]
            .describe()
            .contains("bakeoff stack destroy zfs-1-0"));
        assert!(!reg.leave(&me.token), "the kept stack still uses it");
        std::fs::remove_file(&ledger).unwrap();
        assert!(reg.users().is_empty());
        reg.set_state(&"daemon".to_string()).unwrap();
        assert_eq!(reg.state::<String>().as_deref(), Some("daemon"));
        reg.join(&me).unwrap();
        reg.reset();
        assert!(reg.users().is_empty() && reg.state::<String>().is_none());
    }

    #[test]
    fn the_lock_excludes_another_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let held = Registry::lock(dir.path()).unwrap();
        let file = File::open(dir.path().join("lock")).unwrap();
        assert!(flock(&file, FlockOperation::NonBlockingLockExclusive).is_err());
        drop(held);
        assert!(flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok());
    }
}
