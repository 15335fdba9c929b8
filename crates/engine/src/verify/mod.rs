//! Data verification during a run (`verify=crc32c|sha256`): the blocks of each verified
//! fileset, the generation table of what the writes to them allow ([`table`]), the tally of
//! what was checked and found, and the final pass over every block after the run ([`pass`],
//! whose [`check_file`] any later checker of the files can call). The block format itself is
//! `bakeoff_core::verify`. Workers stamp and check blocks through a [`FilesetVerify`]
//! (`worker/verify.rs`); docs/verify.md says what is and is not detected.

mod pass;
pub mod table;

pub use pass::{check_file, FileCheck};

use crate::layout::{Dataset, Region};
use bakeoff_core::plan::{Algorithm, BlockGrid, Plan};
use bakeoff_core::record::verify::{VerifiedFileset, VerifyMismatch, VerifyRecord};
use bakeoff_core::verify::journal::{
    FilesetJournal, Journal, JournalFile, JournalSync, JournalWrite,
};
use bakeoff_core::verify::{Fault, HEADER_BYTES};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use table::Generations;

/// Mismatches described in the record (every one is counted).
pub const FIRST_KEPT: usize = 8;

/// Who found a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoundBy {
    /// A read during the run.
    Run,
    /// The final pass after the run.
    FinalPass,
    /// A check of a file outside a run ([`check_file`]).
    Check,
}

impl FoundBy {
    fn name(self) -> &'static str {
        match self {
            FoundBy::Run => "run",
            FoundBy::FinalPass => "final_pass",
            FoundBy::Check => "check",
        }
    }
}

/// A block found wrong: where, what was expected and what was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The file or device.
    pub path: PathBuf,
    /// The block's byte offset in it.
    pub offset: u64,
    /// Who found it.
    pub found_by: FoundBy,
    /// The checksum expected.
    pub algorithm: Algorithm,
    /// The oldest generation the block could hold.
    pub min_generation: u64,
    /// The newest generation any write to it made.
    pub max_generation: u64,
    /// What was wrong.
    pub fault: Fault,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let by = match self.found_by {
            FoundBy::Run => "a read during the run",
            FoundBy::FinalPass => "the final pass after the run",
            FoundBy::Check => "the check",
        };
        let generations = match (self.min_generation, self.max_generation) {
            (a, b) if a == b => format!("generation {a}"),
            (a, b) => format!("a generation from {a} to {b}"),
        };
        write!(
            f,
            "block at offset {} of {} (found by {by}): expected an intact block of offset {} \
             with {generations} and a valid {} checksum; found {}",
            self.offset,
            self.path.display(),
            self.offset,
            self.algorithm.name(),
            self.fault
        )
    }
}

impl Mismatch {
    /// The mismatch as the run record describes it.
    pub fn to_record(&self) -> VerifyMismatch {
        let header = self.fault.header();
        let computed = match &self.fault {
            Fault::Checksum { computed, .. } => Some(computed.to_string()),
            _ => None,
        };
        VerifyMismatch {
            path: self.path.display().to_string(),
            offset_bytes: self.offset,
            found_by: self.found_by.name().into(),
            fault: self.fault.kind().into(),
            expected_generation_min: self.min_generation,
            expected_generation_max: self.max_generation,
            found_offset_bytes: header.map(|h| h.offset),
            found_generation: header.map(|h| h.generation),
            stored_checksum: header.map(|h| h.checksum.to_string()),
            computed_checksum: computed,
            message: self.to_string(),
        }
    }
}

/// What a verified run counted, shared by its workers (each adds its own counts once, when
/// it ends; mismatches as they are found).
#[derive(Default)]
pub struct Tally {
    written: AtomicU64,
    reads_checked: AtomicU64,
    reads_raced: AtomicU64,
    mismatches: AtomicU64,
    first: Mutex<Vec<Mismatch>>,
}

impl Tally {
    /// Adds one worker's counts.
    pub fn add(&self, written: u64, checked: u64, raced: u64) {
        self.written.fetch_add(written, Ordering::Relaxed);
        self.reads_checked.fetch_add(checked, Ordering::Relaxed);
        self.reads_raced.fetch_add(raced, Ordering::Relaxed);
    }

    /// Counts mismatches found and not described.
    fn more_mismatches(&self, n: u64) {
        self.mismatches.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts a mismatch, keeping the first [`FIRST_KEPT`].
    pub fn found(&self, m: &Mismatch) {
        self.mismatches.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.len() < FIRST_KEPT {
            first.push(m.clone());
        }
    }
}

/// One file (or device region) of a verified fileset: its blocks are table entries
/// `first..first + blocks`.
struct FileBlocks {
    region: Region,
    first: usize,
    blocks: u64,
}

/// A verified fileset during a run: its blocks, their generations and the run's tally.
pub struct FilesetVerify {
    /// The checksum its blocks carry.
    pub algorithm: Algorithm,
    /// Where its blocks lie in each file.
    pub grid: BlockGrid,
    /// Its name.
    pub name: String,
    /// What the writes to each block allow it to hold.
    pub generations: Generations,
    files: Vec<FileBlocks>,
    /// The run's counts.
    pub tally: Arc<Tally>,
    /// The run keeps a journal of its writes and syncs (`--crash-states`).
    journaling: bool,
    /// Its workers' journals, added as they end.
    journal: Mutex<(Vec<JournalWrite>, Vec<JournalSync>)>,
}

impl FilesetVerify {
    fn new(name: &str, grid: BlockGrid, regions: &[Region], v: &Verifier) -> FilesetVerify {
        let mut first = 0usize;
        let files = regions
            .iter()
            .map(|r| {
                let blocks = grid.blocks_in(r.size);
                let f = FileBlocks {
                    region: r.clone(),
                    first,
                    blocks,
                };
                first += blocks as usize;
                f
            })
            .collect();
        FilesetVerify {
            algorithm: v.algorithm,
            grid,
            name: name.to_string(),
            generations: Generations::new(first),
            files,
            tally: v.tally.clone(),
            journaling: v.journaling,
            journal: Mutex::default(),
        }
    }

    /// True if its workers journal their writes and syncs.
    pub fn journaling(&self) -> bool {
        self.journaling
    }

    /// Adds a worker's journal.
    pub fn add_journal(&self, writes: Vec<JournalWrite>, syncs: Vec<JournalSync>) {
        let mut j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        j.0.extend(writes);
        j.1.extend(syncs);
    }

    /// Its journal, taken (the workers have ended).
    fn take_journal(&self) -> FilesetJournal {
        let mut j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        let (writes, syncs) = std::mem::take(&mut *j);
        let files = (self.files.iter())
            .map(|f| JournalFile {
                path: f.region.path.clone(),
                base: f.region.base,
                size: f.region.size,
                first: f.first as u32,
                blocks: f.blocks as u32,
            })
            .collect();
        FilesetJournal {
            name: self.name.clone(),
            algorithm: self.algorithm,
            grid: self.grid,
            files,
            writes,
            syncs,
        }
    }

    /// The table entry of the block an I/O of file `file` at byte `offset` moves; `None` off
    /// the grid (the planner gives every I/O of a verified fileset a block of its grid).
    #[inline]
    pub fn index(&self, file: u32, offset: u64) -> Option<usize> {
        let f = self.files.get(file as usize)?;
        let rel = offset.checked_sub(f.region.base + self.grid.offset)?;
        let k = rel / self.grid.block_bytes;
        (rel % self.grid.block_bytes == 0 && k < f.blocks).then_some(f.first + k as usize)
    }

    /// Blocks over all its files.
    pub fn blocks(&self) -> u64 {
        self.files.iter().map(|f| f.blocks).sum()
    }

    /// The mismatch of the block at `offset` of file `file`, counted in the tally.
    #[cold]
    pub fn mismatch(&self, file: u32, offset: u64, range: (u64, u64), fault: Fault) -> Mismatch {
        let path = self.files.get(file as usize).map(|f| f.region.path.clone());
        let m = Mismatch {
            path: path.unwrap_or_default(),
            offset,
            found_by: FoundBy::Run,
            algorithm: self.algorithm,
            min_generation: range.0,
            max_generation: range.1,
            fault,
        };
        self.tally.found(&m);
        m
    }
}

/// The verification of one run: every verified fileset and the tally.
pub struct Verifier {
    algorithm: Algorithm,
    filesets: Vec<Option<Arc<FilesetVerify>>>,
    unverified: Vec<String>,
    tally: Arc<Tally>,
    journaling: bool,
}

impl Verifier {
    /// The verification of `plan` on `dataset`; `None` without `verify=`.
    pub fn new(plan: &Plan, dataset: &Dataset) -> Option<Verifier> {
        let algorithm = plan.verify?;
        let mut v = Verifier {
            algorithm,
            filesets: Vec::new(),
            unverified: Vec::new(),
            tally: Arc::new(Tally::default()),
            journaling: plan.journal.is_on(),
        };
        for (f, regions) in plan.filesets.iter().zip(&dataset.filesets) {
            let fileset = f
                .verify
                .map(|grid| FilesetVerify::new(&f.name, grid, regions, &v));
            if fileset.is_none() {
                v.unverified.push(f.name.clone());
            }
            v.filesets.push(fileset.map(Arc::new));
        }
        Some(v)
    }

    /// Fileset `i`'s blocks, if verified.
    pub fn fileset(&self, i: usize) -> Option<Arc<FilesetVerify>> {
        self.filesets.get(i).cloned().flatten()
    }

    /// Every verified fileset's journal, taken once the workers have ended (empty filesets'
    /// writes and syncs when the run kept none).
    pub fn journal(&self) -> Journal {
        let filesets = self.filesets.iter().flatten();
        Journal {
            filesets: filesets.map(|f| f.take_journal()).collect(),
        }
    }

    /// The first mismatch found, if any.
    pub fn first_mismatch(&self) -> Option<Mismatch> {
        let first = self.tally.first.lock().unwrap_or_else(|e| e.into_inner());
        first.first().cloned()
    }

    /// The record's `verify` section, with the final pass if it ran.
    pub fn record(
        &self,
        final_pass: Option<bakeoff_core::record::verify::FinalPass>,
    ) -> VerifyRecord {
        let verified = self.filesets.iter().flatten();
        let filesets: Vec<VerifiedFileset> = verified
            .map(|f| VerifiedFileset {
                name: f.name.clone(),
                block_bytes: f.grid.block_bytes,
                offset_bytes: f.grid.offset,
                blocks: f.blocks(),
            })
            .collect();
        let first = self.tally.first.lock().unwrap_or_else(|e| e.into_inner());
        let t = &self.tally;
        VerifyRecord {
            mode: self.algorithm.name().into(),
            header_bytes: HEADER_BYTES as u64,
            layout_blocks: filesets.iter().map(|f| f.blocks).sum(),
            filesets,
            unverified_filesets: self.unverified.clone(),
            blocks_written: t.written.load(Ordering::Relaxed),
            reads_checked: t.reads_checked.load(Ordering::Relaxed),
            reads_raced: t.reads_raced.load(Ordering::Relaxed),
            final_pass,
            mismatches: t.mismatches.load(Ordering::Relaxed),
            first_mismatches: first.iter().map(Mismatch::to_record).collect(),
        }
    }
}
