//! A worker's side of `verify=`: before a write its buffer gets the block's header with the
//! next generation, before a read the block's state is noted, and at completion the write is
//! counted out of the generation table or the block read is checked. Per I/O: atomics on the
//! block's two words and the checksum; no lock, allocation or formatting unless a block is
//! wrong (then the run fails).

use super::Worker;
use crate::engines::{Engine, IoReq};
use crate::shared::RunError;
use crate::verify::table::{ReadTicket, WriteTicket};
use crate::verify::FilesetVerify;
// The journal's clock is the write log's (the run's own is the TSC's, from its start).
use bakeoff_core::verify::journal::{JournalSync, JournalWrite};
use bakeoff_core::verify::{check, check_generation, stamp};
use bakeoff_probe::monotonic_ns;
use std::sync::Arc;

/// What a slot's I/O noted before it was issued.
#[derive(Clone, Copy, Default)]
struct Mark {
    /// The block's table entry; `None`: not verified.
    block: Option<usize>,
    write: WriteTicket,
    read: ReadTicket,
    /// A journalled write's `CLOCK_MONOTONIC` before it was issued.
    started_ns: u64,
}

/// A worker's journal under `--crash-states` (appended without a lock; handed to its
/// fileset when the worker ends).
#[derive(Default)]
struct WorkerJournal {
    writes: Vec<JournalWrite>,
    syncs: Vec<JournalSync>,
    /// The role's files are `O_DSYNC`/`O_SYNC`: a write is durable when it completes.
    durable: bool,
}

/// A worker's verification: its fileset's blocks, a mark per slot, and its counts (added to
/// the run's tally when it ends).
pub(crate) struct WorkerVerify {
    fileset: Arc<FilesetVerify>,
    marks: Vec<Mark>,
    written: u64,
    checked: u64,
    raced: u64,
    journal: Option<WorkerJournal>,
}

impl WorkerVerify {
    /// For a worker of `depth` slots on `fileset`; `sync_writes`: its files are opened
    /// `O_DSYNC` or `O_SYNC`.
    pub(crate) fn new(
        fileset: Arc<FilesetVerify>,
        depth: usize,
        sync_writes: bool,
    ) -> WorkerVerify {
        let journal = fileset.journaling().then(|| WorkerJournal {
            durable: sync_writes,
            ..WorkerJournal::default()
        });
        WorkerVerify {
            fileset,
            marks: vec![Mark::default(); depth],
            written: 0,
            checked: 0,
            raced: 0,
            journal,
        }
    }

    /// Adds this worker's counts (and journal) to the run's.
    pub(crate) fn finish(&mut self) {
        (self.fileset.tally).add(self.written, self.checked, self.raced);
        if let Some(j) = self.journal.take() {
            self.fileset.add_journal(j.writes, j.syncs);
        }
    }

    /// `CLOCK_MONOTONIC` now, if the run keeps a journal (a sync's call is read with it).
    pub(crate) fn journal_now(&self) -> Option<u64> {
        self.journal.as_ref().map(|_| monotonic_ns())
    }

    /// Journals a sync of `file` called at `called_ns` that has just returned.
    pub(crate) fn journal_sync(&mut self, file: u32, called_ns: u64) {
        if let Some(j) = self.journal.as_mut() {
            j.syncs.push(JournalSync {
                file,
                called_ns,
                returned_ns: monotonic_ns(),
            });
        }
    }
}

impl<E: Engine> Worker<E> {
    /// Before `req` is issued: a write's buffer is stamped (with its block's header and next
    /// generation under `verify=`, else with a counter so no layer can deduplicate it); a
    /// read's block state is noted.
    #[inline]
    pub(super) fn before_io(&mut self, req: &IoReq) {
        let Some(v) = self.verify.as_mut() else {
            if req.write {
                self.stamp_buffer(req.slot);
            }
            return;
        };
        let block = v.fileset.index(req.file, req.offset);
        let mark = &mut v.marks[req.slot as usize];
        *mark = Mark {
            block,
            ..Mark::default()
        };
        let Some(i) = block else {
            if req.write {
                self.stamp_buffer(req.slot);
            }
            return;
        };
        if req.write {
            if v.journal.is_some() {
                // Read before the generation is taken: the write's interval covers it.
                mark.started_ns = monotonic_ns();
            }
            mark.write = v.fileset.generations.start_write(i);
            let buf = &mut self.engine.buf_mut(req.slot)[..req.len as usize];
            stamp(buf, req.offset, mark.write.generation, v.fileset.algorithm);
            v.written += 1;
        } else {
            mark.read = v.fileset.generations.start_read(i);
        }
    }

    /// After `req` moved all its bytes: a write leaves the generation table's count of writes
    /// in flight; a read's block is checked, unless a write to it overlapped the read.
    #[inline]
    pub(super) fn after_io(&mut self, req: &IoReq) -> Result<(), RunError> {
        let Some(v) = self.verify.as_mut() else {
            return Ok(());
        };
        let mark = std::mem::take(&mut v.marks[req.slot as usize]);
        let Some(i) = mark.block else {
            return Ok(());
        };
        let table = &v.fileset.generations;
        if req.write {
            table.end_write(i, mark.write);
            if let Some(j) = v.journal.as_mut() {
                j.writes.push(JournalWrite {
                    block: i as u32,
                    generation: mark.write.generation,
                    started_ns: mark.started_ns,
                    completed_ns: monotonic_ns(),
                    durable: j.durable,
                });
            }
            return Ok(());
        }
        let Some((min, max)) = table.end_read(i, mark.read) else {
            v.raced += 1;
            return Ok(());
        };
        v.checked += 1;
        let block = &self.engine.buf_mut(req.slot)[..req.len as usize];
        let judged = check(block, req.offset, v.fileset.algorithm)
            .and_then(|h| check_generation(&h, min, max));
        match judged {
            Ok(()) => Ok(()),
            Err(fault) => {
                let m = v.fileset.mismatch(req.file, req.offset, (min, max), fault);
                Err(RunError::Verify(Box::new(m)))
            }
        }
    }
}
