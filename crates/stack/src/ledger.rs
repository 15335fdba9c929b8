//! The ledger, a journal: every side effect is appended (and fsynced) to a JSON-lines file
//! *before* it happens, with its undo ([`crate::undo`] holds the undo actions). Teardown undoes in reverse order; after a crash, `bakeoff cleanup`
//! replays the ledgers whose owner is gone. The owner holds an exclusive `flock` on its ledger
//! for its whole life, so a ledger whose lock can be taken belongs to a dead process.
//!
//! Layout under the state directory (`/var/lib/bakeoff`, or `$BAKEOFF_STATE_DIR`):
//! `ledger/<id>.jsonl` for running processes; `stacks/<name>.jsonl` for stacks kept with
//! `--keep`, which only `bakeoff stack destroy NAME` (or `cleanup --all`) undoes.

use crate::error::StackError;
use crate::exec::Exec;
use crate::undo::Undo;
use rustix::fs::{flock, FlockOperation};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

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
            crate::faults::fault_point("teardown");
        }
        if let Err(e) = crate::undo::perform(u, exec) {
            failures.push(format!("{u:?}: {e}"));
        }
    }
    failures
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
}
