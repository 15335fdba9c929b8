//! Group commit for `syncs=merge`: a database whose syncs of its log are slow commits more
//! transactions with each (PostgreSQL made 0.53 WAL syncs a transaction on ext4, 0.33 on
//! btrfs), where a replay of the capturing stack's syncs would make them all. Here a thread's
//! sync of a file takes the file's sync lock, as a backend takes PostgreSQL's WAL write lock,
//! and is not made when a sync that began after every write to the file done before this
//! thread asked has finished meanwhile: those writes are durable already. Only regular files'
//! syncs merge, and only after the file's first sync: a directory's sync makes its entries
//! durable, which no write counts, and a file's first sync may be for what the capture did not
//! see (writes before it began, or through a mapping).

use super::io::Issuer;
use super::state::Replay;
use bakeoff_core::trace::{FileId, OpCode, Record};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

impl Replay {
    /// Makes call `r` on `file` through `issuer`; with syncs=merge a successful sync of a file
    /// goes through the file's group, and one another thread's sync made for it counts as
    /// made, with result 0.
    pub(super) fn issue(&self, issuer: &mut Issuer, r: &Record, file: Option<FileId>) -> i64 {
        let sync = matches!(r.op, Some(OpCode::Fsync | OpCode::Fdatasync)) && r.result == 0;
        match (&self.sync_groups, file) {
            (Some(groups), Some(f)) if sync => match groups.sync(f, || issuer.issue(self, r, file))
            {
                Synced::Made(got) => got,
                Synced::Merged => {
                    self.counts.syncs_merged.fetch_add(1, Ordering::Relaxed);
                    0
                }
            },
            _ => issuer.issue(self, r, file),
        }
    }

    /// Call `r`, thread `thread`'s call `i`, has finished as captured: with syncs=merge, a
    /// write or a change of size is counted for its file's next sync (nothing is looked up
    /// otherwise: this runs after every call).
    pub(super) fn finished(&self, r: &Record, thread: usize, i: usize) {
        let Some(groups) = &self.sync_groups else {
            return;
        };
        let changed = matches!(
            r.op,
            Some(OpCode::Write | OpCode::Ftruncate | OpCode::Fallocate)
        );
        if let (true, Some(f)) = (changed, self.loaded.program.threads[thread].files[i]) {
            groups.wrote(f);
        }
    }
}

/// One file's writes done and how many of them a finished sync made durable.
#[derive(Default)]
struct FileSyncs {
    /// Writes and size changes of the file finished so far (every thread's).
    writes_done: AtomicU64,
    /// The sync lock, holding how many of the first writes are durable (none before the
    /// file's first sync).
    durable: Mutex<Option<u64>>,
}

/// Every regular file's syncs, by file id (`None`: another kind of file).
pub struct SyncGroups {
    files: Vec<Option<FileSyncs>>,
}

/// How a thread's sync went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synced {
    /// The thread made it; its result.
    Made(i64),
    /// Another thread's sync had made the writes durable: not made.
    Merged,
}

impl SyncGroups {
    /// The state of files whose kinds `regular` says (true: a regular file), none written.
    pub fn new(regular: impl Iterator<Item = bool>) -> SyncGroups {
        SyncGroups {
            files: regular.map(|r| r.then(FileSyncs::default)).collect(),
        }
    }

    /// A write to `file`, or a change of its size, has finished.
    pub fn wrote(&self, file: u32) {
        if let Some(Some(f)) = self.files.get(file as usize) {
            f.writes_done.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Makes the writes to `file` finished so far durable: by `make` (the sync call, returning
    /// its result) under the file's sync lock, unless a sync that began after all of them
    /// finished while this thread waited for the lock.
    pub fn sync(&self, file: u32, make: impl FnOnce() -> i64) -> Synced {
        let Some(Some(f)) = self.files.get(file as usize) else {
            return Synced::Made(make());
        };
        let needed = f.writes_done.load(Ordering::Acquire);
        let mut durable = f.durable.lock().unwrap_or_else(|e| e.into_inner());
        if durable.is_some_and(|d| d >= needed) {
            return Synced::Merged;
        }
        // Every write counted now finished before the sync begins: it makes them durable.
        let covered = f.writes_done.load(Ordering::Acquire);
        let got = make();
        if got == 0 {
            *durable = Some(durable.unwrap_or(0).max(covered));
        }
        Synced::Made(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_is_merged_only_when_a_finished_sync_began_after_every_write_before_it() {
        let groups = SyncGroups::new([true, true, false].into_iter());
        let mut made = 0;
        let mut sync = |file| {
            groups.sync(file, || {
                made += 1;
                0
            })
        };
        assert_eq!(sync(0), Synced::Made(0), "a file's first sync is made");
        assert_eq!(sync(0), Synced::Merged, "no write since the last sync");
        groups.wrote(0);
        assert_eq!(
            sync(0),
            Synced::Made(0),
            "a write the last sync did not cover"
        );
        assert_eq!(sync(0), Synced::Merged);
        groups.wrote(1);
        assert_eq!(sync(0), Synced::Merged, "another file's write");
        assert_eq!(sync(1), Synced::Made(0));
        assert_eq!(
            sync(2),
            Synced::Made(0),
            "a directory's sync is always made"
        );
        assert_eq!(sync(2), Synced::Made(0));
        assert_eq!(made, 5);
    }

    #[test]
    fn a_failed_sync_makes_nothing_durable() {
        let groups = SyncGroups::new([true].into_iter());
        groups.wrote(0);
        assert_eq!(groups.sync(0, || -5), Synced::Made(-5));
        assert_eq!(groups.sync(0, || 0), Synced::Made(0), "still to be made");
    }
}
