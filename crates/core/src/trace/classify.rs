//! File classes: which captured files are a log, which hold data, and which are neither. `trace
//! show` prints them, the fitter builds its filesets from them and the replay marks a log's
//! writes. Pure functions of a [`Trace`].
//!
//! * **log**: at least 90 % of its writes continue the previous write (in time order, whichever
//!   thread wrote), it is synced (fsync, fdatasync, sync_file_range or an `O_DSYNC`/`O_SYNC`
//!   handle), and it is rarely read (at most one read per ten writes);
//! * **data**: any other regular file with random reads or writes (less than half of its I/Os
//!   continue the previous one, or a single I/O);
//! * **other**: directories, files without reads or writes, and sequential files that are no
//!   log (a sort's temporary file, a sequential scan).
//!
//! An I/O *continues* the previous one of its kind (read or write) when it starts between that
//! one's start and its end: appending, or writing again the tail a log rewrites (a partial log
//! page written once more at the next commit).

use super::model::{FileId, FileKind, OpCode, Record, Trace};
use serde::{Deserialize, Serialize};

/// `O_DSYNC` on Linux (every architecture bakeoff builds for).
pub const O_DSYNC: u32 = 0o10000;
/// `O_SYNC` on Linux: includes the `O_DSYNC` bit.
pub const O_SYNC: u32 = 0o4010000;
/// `O_DIRECT` on x86-64 and aarch64.
pub const O_DIRECT: u32 = 0o40000;
/// `O_APPEND`.
pub const O_APPEND: u32 = 0o2000;

/// A file's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileClass {
    /// Sequential, synced writes, rarely read (a WAL, a redo log).
    Log,
    /// Random reads or writes (tables, indexes, data files).
    Data,
    /// Neither: left out of a fitted personality, still listed.
    Other,
}

impl FileClass {
    /// `log`, `data` or `other`.
    pub fn name(self) -> &'static str {
        match self {
            FileClass::Log => "log",
            FileClass::Data => "data",
            FileClass::Other => "other",
        }
    }
}

/// What one file saw, enough to classify it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileIo {
    /// Reads and writes of the file.
    pub reads: u64,
    /// Writes of the file.
    pub writes: u64,
    /// Reads that continued the previous read.
    pub seq_reads: u64,
    /// Writes that continued the previous write.
    pub seq_writes: u64,
    /// Reads that had a previous read (the first cannot be judged).
    pub read_pairs: u64,
    /// Writes that had a previous write.
    pub write_pairs: u64,
    /// fsync and fdatasync calls.
    pub syncs: u64,
    /// sync_file_range calls.
    pub ranges: u64,
    /// The open flags of its handles, together.
    pub flags: u32,
}

impl FileIo {
    /// Share of its reads and writes that continued the previous one of their kind.
    pub fn seq_share(&self) -> Option<f64> {
        share(
            self.seq_reads + self.seq_writes,
            self.read_pairs + self.write_pairs,
        )
    }

    /// Share of its writes that continued the previous write.
    pub fn write_seq_share(&self) -> Option<f64> {
        share(self.seq_writes, self.write_pairs)
    }

    /// Opened `O_DSYNC` or `O_SYNC`.
    pub fn dsync(&self) -> bool {
        self.flags & O_DSYNC != 0
    }
}

/// `part / whole`, `None` when `whole` is 0.
pub(crate) fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Whether an I/O at `offset` continues `prev` (`(start, end)` of the previous one).
pub fn continues(prev: (u64, u64), offset: u64) -> bool {
    prev.0 <= offset && offset <= prev.1
}

/// The file a record's handle names, if any.
pub fn file_of(trace: &Trace, r: &Record) -> Option<FileId> {
    let h = r.handle?;
    trace.handles.get(h as usize).map(|h| h.file)
}

/// Each file's [`FileIo`], by [`FileId`].
pub fn file_io(trace: &Trace) -> Vec<FileIo> {
    let mut io = vec![FileIo::default(); trace.files.len()];
    for h in &trace.handles {
        if let Some(f) = io.get_mut(h.file as usize) {
            f.flags |= h.flags;
        }
    }
    // Each file's reads and writes in start order, whichever thread made them.
    let mut calls: Vec<Vec<(u64, bool, u64, u64)>> = vec![Vec::new(); trace.files.len()];
    for r in trace.ops.iter().flatten() {
        let Some(file) = file_of(trace, r).filter(|f| (*f as usize) < io.len()) else {
            continue;
        };
        let f = &mut io[file as usize];
        match r.op {
            Some(OpCode::Read) | Some(OpCode::Write) => {
                let write = r.op == Some(OpCode::Write);
                calls[file as usize].push((r.start_ns, write, r.offset, r.len));
            }
            Some(OpCode::Fsync) | Some(OpCode::Fdatasync) => f.syncs += 1,
            Some(OpCode::SyncFileRange) => f.ranges += 1,
            _ => {}
        }
    }
    for (f, calls) in io.iter_mut().zip(&mut calls) {
        calls.sort_unstable_by_key(|c| c.0);
        let mut prev: [Option<(u64, u64)>; 2] = [None, None];
        for &(_, write, offset, len) in calls.iter() {
            let k = usize::from(write);
            let seq = prev[k].map(|p| continues(p, offset));
            let (n, pairs, seqs) = if write {
                (&mut f.writes, &mut f.write_pairs, &mut f.seq_writes)
            } else {
                (&mut f.reads, &mut f.read_pairs, &mut f.seq_reads)
            };
            *n += 1;
            if let Some(s) = seq {
                *pairs += 1;
                *seqs += u64::from(s);
            }
            prev[k] = Some((offset, offset.saturating_add(len)));
        }
    }
    io
}

/// The class of a regular file that saw `io` (a directory is [`FileClass::Other`]).
pub fn classify(io: &FileIo) -> FileClass {
    let synced = io.syncs + io.ranges > 0 || io.dsync();
    let sequential_writes = io.write_seq_share().is_some_and(|s| s >= 0.9);
    if io.writes > 0 && sequential_writes && synced && io.reads * 10 <= io.writes {
        return FileClass::Log;
    }
    if io.reads + io.writes == 0 {
        return FileClass::Other;
    }
    match io.seq_share() {
        Some(s) if s >= 0.5 => FileClass::Other,
        _ => FileClass::Data,
    }
}

/// The class of each file of `trace`, by [`FileId`].
pub fn classify_files(trace: &Trace) -> Vec<FileClass> {
    let io = file_io(trace);
    (trace.files.iter().zip(&io))
        .map(|(entry, io)| match entry.kind {
            FileKind::Dir => FileClass::Other,
            FileKind::File => classify(io),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::stats::build::Build;

    #[test]
    fn a_synced_appended_file_is_a_log_random_io_is_data() {
        let mut b = Build::new();
        let wal = b.file("pg_wal/0001", 1 << 20, 0);
        let table = b.file("base/1/1259", 1 << 20, 0);
        let scan = b.file("base/1/tmp", 1 << 20, 0);
        let dir = b.dir("base/1");
        let t = b.thread(1, "postgres");
        for i in 0..20u64 {
            // A partial page written again, then the next page: both continue the log.
            b.write(t, wal, i * 8192, 8192);
            b.write(t, wal, i * 8192 + 4096, 4096);
            b.fdatasync(t, wal);
            b.read(t, table, (i * 7919 % 128) * 8192, 8192);
            b.read(t, scan, i * 8192, 8192);
        }
        b.fsync(t, dir);
        let trace = b.finish();
        let classes = classify_files(&trace);
        assert_eq!(classes[wal as usize], FileClass::Log);
        assert_eq!(classes[table as usize], FileClass::Data);
        assert_eq!(classes[scan as usize], FileClass::Other);
        assert_eq!(classes[dir as usize], FileClass::Other);
    }

    #[test]
    fn an_unsynced_or_often_read_sequential_file_is_no_log() {
        let mut b = Build::new();
        let unsynced = b.file("a", 1 << 20, 0);
        let read_back = b.file("b", 1 << 20, 0);
        let dsync = b.file("c", 1 << 20, O_DSYNC);
        let t = b.thread(1, "db");
        for i in 0..10u64 {
            b.write(t, unsynced, i * 4096, 4096);
            b.write(t, read_back, i * 4096, 4096);
            b.read(t, read_back, i * 4096, 4096);
            b.write(t, dsync, i * 4096, 4096);
        }
        b.fsync(t, read_back);
        let trace = b.finish();
        let classes = classify_files(&trace);
        assert_eq!(classes[unsynced as usize], FileClass::Other);
        assert_eq!(classes[read_back as usize], FileClass::Other);
        assert_eq!(classes[dsync as usize], FileClass::Log, "O_DSYNC is synced");
    }

    #[test]
    fn the_log_is_judged_across_threads_in_time_order() {
        // Two backends each write the next part of the log: neither thread alone appends.
        let mut b = Build::new();
        let wal = b.file("wal", 1 << 20, 0);
        let (t1, t2) = (b.thread(1, "a"), b.thread(2, "b"));
        for i in 0..10u64 {
            let t = if i % 2 == 0 { t1 } else { t2 };
            b.write(t, wal, i * 4096, 4096);
            b.fdatasync(t, wal);
        }
        let io = file_io(&b.finish());
        assert_eq!(
            (io[0].writes, io[0].write_pairs, io[0].seq_writes),
            (10, 9, 9)
        );
        assert_eq!(classify(&io[0]), FileClass::Log);
    }
}
