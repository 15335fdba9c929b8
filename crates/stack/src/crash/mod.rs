//! Crash states: the disk images a power cut could leave, built from a write log
//! ([`crate::writelog`]) and the images as they were when logging began. The model
//! (docs/durability.md, "Crash states"): at a crash point, everything up to each image's last
//! flush before it is durable; of the writes issued after that flush, any subset persisted (and
//! so any order, since writes not separated by a flush may land in any subset), each applied in
//! the order it was issued; a write of several sectors may persist in part, torn at the
//! device's sector boundaries; a sector is atomic.
//!
//! States are cheap descriptions ([`CrashState`]: which writes persisted, which torn), made by
//! [`generate`] from a [`LogIndex`] with a printed seed; [`Materialiser`] turns one into image
//! files on demand.

mod generate;
mod materialise;

pub use generate::{generate, state_at};
pub use materialise::{Base, Materialiser};

use crate::writelog::{Entry, ImageInfo, LogError, LogReader, Op};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A log without its data: every record's number, image and range, and where its data is.
#[derive(Clone, Debug)]
pub struct LogIndex {
    /// The log file.
    pub path: PathBuf,
    /// The images it covers.
    pub images: Vec<ImageInfo>,
    /// Its records in order (`entries[i].seq == i`).
    pub entries: Vec<Entry>,
    /// When the recorder finished (the end record's time, `CLOCK_MONOTONIC`).
    pub end_ns: u64,
}

impl LogIndex {
    /// Reads the whole log at `path`, checking every record; a log that is cut, damaged or
    /// unfinished is an error naming the offset.
    pub fn read(path: &Path) -> Result<LogIndex, LogError> {
        let mut reader = LogReader::open(path)?;
        let mut entries = Vec::new();
        let mut data = Vec::new();
        while let Some(entry) = reader.next(&mut data)? {
            entries.push(entry);
        }
        Ok(LogIndex {
            path: path.to_path_buf(),
            images: reader.images().to_vec(),
            end_ns: reader.end_ns().unwrap_or(0),
            entries,
        })
    }

    /// The moment of a power cut at `crash_point`, on `CLOCK_MONOTONIC`: just before the first
    /// record not issued was handled (or when the recorder finished, for the whole log). A
    /// commit acknowledged at or before it must survive: its flush was handled before that
    /// record, so it is in every state at this crash point.
    pub fn crash_ns(&self, crash_point: u64) -> u64 {
        match self.entries.get(crash_point as usize) {
            Some(first_lost) => first_lost.time_ns.saturating_sub(1),
            None => self.end_ns,
        }
    }

    /// Leaves out the records after the first `records`: what followed the window the states
    /// are drawn from (a teardown's unmount or `zpool destroy` is no power cut). The end moment
    /// becomes the first record left out's.
    pub fn end_at(&mut self, records: u64) {
        if let Some(first_out) = self.entries.get(records as usize) {
            self.end_ns = first_out.time_ns.saturating_sub(1);
            self.entries.truncate(records as usize);
        }
    }

    /// The bytes a record changes, as `(offset, len)`; `None` for a flush.
    pub fn range(entry: &Entry) -> Option<(u64, u64)> {
        match entry.op {
            Op::Write { offset, len, .. } => Some((offset, u64::from(len))),
            Op::Zero { offset, len } => Some((offset, len)),
            Op::Flush => None,
        }
    }
}

/// How the crash states are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CrashOptions {
    /// How many states to make (fewer when the log allows fewer distinct ones).
    pub states: usize,
    /// The seed: the same log, options and seed give the same states.
    pub seed: u64,
    /// The device's sector size, 512 or 4096: a sector persists whole or not at all.
    pub sector_bytes: u32,
    /// Whether a write of several sectors may persist in part.
    pub torn: bool,
    /// Crash points are drawn after this many records (the window that matters: a run after
    /// its mkfs and load); 0 draws them anywhere in the log.
    pub from_record: u64,
}

impl CrashOptions {
    /// Checks the sector size and the count.
    pub fn check(&self) -> Result<(), String> {
        if ![512, 4096].contains(&self.sector_bytes) {
            return Err(format!(
                "sector size {} bytes: 512 or 4096",
                self.sector_bytes
            ));
        }
        if self.states == 0 {
            return Err("0 crash states: ask for at least one".into());
        }
        Ok(())
    }
}

/// Which of the writes issued since the last flush a state keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateKind {
    /// Only what was flushed: none of them.
    Flushed,
    /// Everything issued up to the crash point, none torn.
    Issued,
    /// A random subset, some maybe torn.
    Subset,
}

/// Bytes `at..at + len` of a write, counted from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Part {
    /// First byte, from the write's start.
    pub at: u64,
    /// Bytes.
    pub len: u64,
}

/// A write (or zeroed range) that persisted after the last flush.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Persisted {
    /// Its record.
    pub seq: u64,
    /// `None`: all of it; else the parts that persisted (torn at sector boundaries).
    pub torn: Option<Vec<Part>>,
}

/// One image in a crash state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ImageState {
    /// The image's last flush before the crash point: every change to it up to this record is
    /// durable. `None`: it was not flushed, only the base is.
    pub durable_through: Option<u64>,
    /// Writes issued to it after that flush and before the crash point.
    pub pending: u64,
    /// Those that persisted, in the order they were issued.
    pub persisted: Vec<Persisted>,
}

/// A state a power cut could leave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrashState {
    /// Its number among the states made (0, 1, ...).
    pub number: usize,
    /// Records `0..crash_point` were issued before the power went.
    pub crash_point: u64,
    /// When the power went ([`LogIndex::crash_ns`]): every commit acknowledged at or before
    /// this `CLOCK_MONOTONIC` time must be in the state.
    pub crash_ns: u64,
    /// How it was drawn.
    pub kind: StateKind,
    /// Each image, in the log's order.
    pub images: Vec<ImageState>,
}

impl CrashState {
    /// Writes that persisted after the last flush, over all images.
    pub fn persisted(&self) -> usize {
        self.images.iter().map(|i| i.persisted.len()).sum()
    }

    /// Writes that persisted in part.
    pub fn torn(&self) -> usize {
        let all = self.images.iter().flat_map(|i| &i.persisted);
        all.filter(|p| p.torn.is_some()).count()
    }
}

#[cfg(test)]
mod tests;
