//! The journal of a verified run under `--crash-states`: when each block write was issued and
//! completed, and when each sync was called and returned, in `CLOCK_MONOTONIC` nanoseconds
//! (the clock the write log stamps its records with, so a crash state's instant applies). From
//! it, [`FilesetJournal::expected_at`] says what each block must hold after a power cut at a
//! given instant: what a crash state's check reads back (docs/verify.md, "After a crash").
//!
//! The rule: a sync of a file that *returned* before the crash makes durable every write to
//! that file that *completed* before the sync was *called* (POSIX `fsync`), and a write of an
//! `O_DSYNC`/`O_SYNC` file is durable when it completes. The newest durable write to a block
//! (by generation) is the block's floor, except that a write in flight at the same time as it
//! (their intervals overlap) may have reached the device after it, so the floor drops to the
//! oldest of those. The ceiling is the newest write issued before the crash.

use super::{Algorithm, BlockGrid};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// One write of a verified block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JournalWrite {
    /// The block's index in its fileset (over all its files, as [`JournalFile::first`] says).
    pub block: u32,
    /// The generation its header carries.
    pub generation: u64,
    /// Read before the write was issued.
    pub started_ns: u64,
    /// Read after it completed.
    pub completed_ns: u64,
    /// Durable at completion (`O_DSYNC` or `O_SYNC`).
    pub durable: bool,
}

/// One `fsync`/`fdatasync` of a file of the fileset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JournalSync {
    /// The file's index in the fileset.
    pub file: u32,
    /// Read before the call.
    pub called_ns: u64,
    /// Read after it returned.
    pub returned_ns: u64,
}

/// A file of a verified fileset: where its blocks are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalFile {
    /// Its path during the run.
    pub path: PathBuf,
    /// Where its region starts in the file (a device's region; 0 for a file).
    pub base: u64,
    /// The region's bytes.
    pub size: u64,
    /// Its first block's index in the fileset.
    pub first: u32,
    /// Its blocks.
    pub blocks: u32,
}

/// A verified fileset's writes and syncs over the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilesetJournal {
    /// The fileset's name.
    pub name: String,
    /// The checksum its blocks carry.
    pub algorithm: Algorithm,
    /// Where the blocks lie in each file.
    pub grid: BlockGrid,
    /// Its files, in order.
    pub files: Vec<JournalFile>,
    /// Every block write, in no particular order.
    pub writes: Vec<JournalWrite>,
    /// Every sync, in no particular order.
    pub syncs: Vec<JournalSync>,
}

/// What each block of a fileset must hold after a crash at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// Per block, the generations it may hold: `(floor, ceiling)`.
    pub ranges: Vec<(u64, u64)>,
    /// Per block, whether a durable write set its floor (a block below it lost an
    /// acknowledged write; one without such a write may hold any generation it was given).
    pub acknowledged: Vec<bool>,
}

impl FilesetJournal {
    /// Blocks over all its files.
    pub fn blocks(&self) -> usize {
        self.files.iter().map(|f| f.blocks as usize).sum()
    }

    /// The file block `block` lies in.
    fn file_of(&self, block: u32) -> Option<u32> {
        let i = self.files.partition_point(|f| f.first + f.blocks <= block);
        (i < self.files.len()).then_some(i as u32)
    }

    /// Per file, the instant before which a completed write is durable after a crash at
    /// `crash_ns`: the call of the newest sync that returned by then.
    fn sync_cutoffs(&self, crash_ns: u64) -> Vec<Option<u64>> {
        let mut cutoff = vec![None; self.files.len()];
        for s in self.syncs.iter().filter(|s| s.returned_ns <= crash_ns) {
            if let Some(c) = cutoff.get_mut(s.file as usize) {
                *c = Some(c.map_or(s.called_ns, |c: u64| c.max(s.called_ns)));
            }
        }
        cutoff
    }

    /// What every block must hold after a power cut at `crash_ns` (see the module).
    pub fn expected_at(&self, crash_ns: u64) -> Expected {
        let n = self.blocks();
        let cutoff = self.sync_cutoffs(crash_ns);
        let issued = || self.writes.iter().filter(|w| w.started_ns < crash_ns);
        let mut ceiling = vec![0u64; n];
        let mut newest_durable: Vec<Option<JournalWrite>> = vec![None; n];
        for w in issued().filter(|w| (w.block as usize) < n) {
            let b = w.block as usize;
            ceiling[b] = ceiling[b].max(w.generation);
            let synced = (self.file_of(w.block))
                .and_then(|f| cutoff[f as usize])
                .is_some_and(|c| w.completed_ns <= c);
            let durable = synced || (w.durable && w.completed_ns <= crash_ns);
            if durable && newest_durable[b].is_none_or(|d| d.generation < w.generation) {
                newest_durable[b] = Some(*w);
            }
        }
        let mut floor: Vec<u64> = newest_durable
            .iter()
            .map(|d| d.map_or(0, |d| d.generation))
            .collect();
        for w in issued().filter(|w| (w.block as usize) < n) {
            let b = w.block as usize;
            let Some(d) = newest_durable[b] else { continue };
            let overlaps = w.started_ns < d.completed_ns && d.started_ns < w.completed_ns;
            if overlaps {
                floor[b] = floor[b].min(w.generation);
            }
        }
        Expected {
            ranges: floor.into_iter().zip(ceiling).collect(),
            acknowledged: newest_durable.iter().map(Option::is_some).collect(),
        }
    }

    /// Blocks that had a write made durable by the end of the run: what a crash can lose.
    pub fn acknowledged_blocks(&self) -> u64 {
        let end = self.expected_at(u64::MAX);
        end.acknowledged.iter().filter(|&&a| a).count() as u64
    }
}

/// Every verified fileset's journal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Journal {
    /// One per verified fileset.
    pub filesets: Vec<FilesetJournal>,
}

impl Journal {
    /// Blocks that had a write made durable by the end of the run, over every fileset.
    pub fn acknowledged_blocks(&self) -> u64 {
        self.filesets.iter().map(|f| f.acknowledged_blocks()).sum()
    }
}

/// Where a run hands its journal back (`Plan::journal`): off unless made with
/// [`JournalSink::on`]; clones share it. Not part of the plan's identity or its JSON.
#[derive(Clone, Default)]
pub struct JournalSink(Option<Arc<Mutex<Option<Journal>>>>);

impl JournalSink {
    /// A sink the run fills.
    pub fn on() -> JournalSink {
        JournalSink(Some(Arc::new(Mutex::new(None))))
    }

    /// True if the run is to keep a journal.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// The run's journal is `journal`.
    pub fn put(&self, journal: Journal) {
        if let Some(slot) = &self.0 {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(journal);
        }
    }

    /// The journal the run put, once.
    pub fn take(&self) -> Option<Journal> {
        let slot = self.0.as_ref()?;
        slot.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl PartialEq for JournalSink {
    /// Plans are equal whatever their sinks.
    fn eq(&self, _: &JournalSink) -> bool {
        true
    }
}

impl std::fmt::Debug for JournalSink {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(if self.is_on() {
            "JournalSink(on)"
        } else {
            "JournalSink(off)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(writes: Vec<JournalWrite>, syncs: Vec<JournalSync>) -> FilesetJournal {
        let grid = BlockGrid {
            block_bytes: 8192,
            offset: 0,
        };
        let file = |i: u32| JournalFile {
            path: PathBuf::from(format!("f{i}")),
            base: 0,
            size: 4 * 8192,
            first: 4 * i,
            blocks: 4,
        };
        FilesetJournal {
            name: "data".into(),
            algorithm: Algorithm::Crc32c,
            grid,
            files: vec![file(0), file(1)],
            writes,
            syncs,
        }
    }

    fn write(block: u32, generation: u64, started_ns: u64, completed_ns: u64) -> JournalWrite {
        JournalWrite {
            block,
            generation,
            started_ns,
            completed_ns,
            durable: false,
        }
    }

    fn sync(file: u32, called_ns: u64, returned_ns: u64) -> JournalSync {
        JournalSync {
            file,
            called_ns,
            returned_ns,
        }
    }

    #[test]
    fn a_write_is_required_once_a_sync_called_after_it_returned() {
        let j = journal(
            vec![write(1, 1, 10, 20), write(1, 2, 40, 50)],
            vec![sync(0, 30, 35)],
        );
        // Before the sync returned: nothing is required; the first write may be there.
        let e = j.expected_at(33);
        assert_eq!((e.ranges[1], e.acknowledged[1]), ((0, 1), false));
        // After it: generation 1 at least; the second write was issued by 45, so 2 may be too.
        let e = j.expected_at(45);
        assert_eq!((e.ranges[1], e.acknowledged[1]), ((1, 2), true));
        // Blocks never written hold the layout's generation.
        assert_eq!((e.ranges[0], e.acknowledged[0]), ((0, 0), false));
    }

    #[test]
    fn a_sync_covers_its_own_file_only_and_writes_completed_before_its_call() {
        // Block 5 is file 1's; the sync is file 0's. Block 2's write completed after the call.
        let writes = vec![write(5, 1, 10, 20), write(2, 1, 25, 40)];
        let e = journal(writes, vec![sync(0, 30, 50)]).expected_at(60);
        assert_eq!((e.ranges[5], e.acknowledged[5]), ((0, 1), false));
        assert_eq!((e.ranges[2], e.acknowledged[2]), ((0, 1), false));
    }

    #[test]
    fn a_write_in_flight_beside_the_durable_one_lowers_the_floor() {
        // Generations 1 and 2 overlap; both completed before the sync's call: either may have
        // reached the device last. Generation 3 came after both and was not synced.
        let writes = vec![
            write(0, 1, 10, 30),
            write(0, 2, 20, 25),
            write(0, 3, 60, 70),
        ];
        let e = journal(writes.clone(), vec![sync(0, 40, 50)]).expected_at(80);
        assert_eq!(e.ranges[0], (1, 3));
        let apart = vec![write(0, 1, 10, 15), write(0, 2, 20, 25)];
        let e = journal(apart, vec![sync(0, 40, 50)]).expected_at(80);
        assert_eq!(e.ranges[0], (2, 2));
    }

    #[test]
    fn an_o_dsync_write_is_durable_when_it_completes() {
        let mut w = write(3, 1, 10, 20);
        w.durable = true;
        let j = journal(vec![w], Vec::new());
        assert_eq!(j.expected_at(15).ranges[3], (0, 1));
        assert_eq!(j.expected_at(25).ranges[3], (1, 1));
        assert_eq!(j.acknowledged_blocks(), 1);
    }

    #[test]
    fn writes_issued_after_the_crash_are_not_in_the_ceiling() {
        let j = journal(
            vec![write(0, 1, 10, 20), write(0, 2, 30, 40)],
            vec![sync(0, 22, 25)],
        );
        assert_eq!(j.expected_at(28).ranges[0], (1, 1));
        assert_eq!(j.acknowledged_blocks(), 1);
    }
}
