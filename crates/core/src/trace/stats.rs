//! What `bakeoff trace show` computes from a trace: totals, what was lost, each file and each
//! thread, size and offset histograms, a per-second series and the working sets. docs/
//! trace-analysis.md says what each figure means; `bakeoff_report::trace` renders them.

mod series;
mod threads;

#[cfg(test)]
pub(crate) mod build;
#[cfg(test)]
mod tests;

use super::classify::{self, FileClass, FileIo, O_APPEND, O_DIRECT, O_DSYNC, O_SYNC};
use super::model::{FileKind, LostCounts, Mark, OpCode, Provenance, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

pub use series::{Bucket, Histogram, Second};
pub(crate) use threads::mode;
pub use threads::ThreadStats;

/// The block size of the working sets: a database page.
pub const BLOCK: u64 = 8192;

/// Everything `trace show` prints about one trace.
#[derive(Clone, Debug, Serialize)]
pub struct TraceStats {
    /// The capture id, 32 hex digits.
    pub capture_id: String,
    /// The format's version, `major.minor`.
    pub format: String,
    /// Where and how it was captured.
    pub provenance: Provenance,
    /// Counts over the whole trace.
    pub totals: Totals,
    /// What the capture lost, by where (all 0 in a complete trace).
    pub lost: LostCounts,
    /// Calls on the traced files the trace does not hold (`mmap`, ...), by name.
    pub uncovered: Vec<Uncovered>,
    /// Each file, by file id.
    pub files: Vec<FileStats>,
    /// Each thread, by thread id.
    pub threads: Vec<ThreadStats>,
    /// Sizes of reads and writes, log2 buckets.
    pub sizes: Vec<Histogram>,
    /// Offsets of reads and writes, log2 buckets.
    pub offsets: Vec<Histogram>,
    /// One entry per second of the capture.
    pub seconds: Vec<Second>,
    /// Distinct blocks read, written, and either.
    pub working_set: WorkingSet,
    /// Named instants.
    pub marks: Vec<Mark>,
}

/// Counts over the whole trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// Records (calls) held.
    pub records: u64,
    /// Records by op name (`read`, `write`, `fsync`, ...).
    pub ops: BTreeMap<String, u64>,
    /// Calls that returned an error.
    pub failed: u64,
    /// Asynchronous calls (AIO, io_uring).
    pub async_ops: u64,
    /// Bytes the reads returned.
    pub bytes_read: u64,
    /// Bytes the writes wrote.
    pub bytes_written: u64,
    /// The capture's duration.
    pub duration_s: f64,
    /// Records per second of the capture.
    pub ops_per_s: f64,
    /// fsync and fdatasync calls per second.
    pub syncs_per_s: f64,
    /// Lost calls, all kinds together.
    pub lost: u64,
    /// Uncovered calls, all names together.
    pub uncovered: u64,
    /// Size of the trace file, when the caller knows it ([`TraceStats::with_file_size`]).
    pub trace_bytes: Option<u64>,
    /// Bytes of the trace file per record.
    pub bytes_per_record: Option<f64>,
}

/// Calls of one name the trace does not hold.
#[derive(Clone, Debug, Serialize)]
pub struct Uncovered {
    /// The call (`mmap`, `copy_file_range`).
    pub call: String,
    /// How many were seen.
    pub count: u64,
}

/// One file of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct FileStats {
    /// Its id.
    pub id: u32,
    /// `root/path`.
    pub path: String,
    /// File or directory.
    pub kind: FileKind,
    /// Log, data or other ([`classify`]).
    pub class: FileClass,
    /// Size at the start; `None` when created during the capture.
    pub start_size: Option<u64>,
    /// Size at the end; `None` when gone.
    pub end_size: Option<u64>,
    /// Reads of it.
    pub reads: u64,
    /// Writes of it.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Distinct 8 KiB blocks read or written, in bytes (its working set).
    pub working_set_bytes: u64,
    /// Share of its reads and writes that continued the previous one (docs/trace-analysis.md).
    pub seq_share: Option<f64>,
    /// fsync and fdatasync calls.
    pub syncs: u64,
    /// sync_file_range calls.
    pub flush_ranges: u64,
    /// Open flags its handles had: `O_DIRECT`, `O_DSYNC`, `O_SYNC`, `O_APPEND`.
    pub flags: Vec<String>,
}

/// Bytes of distinct 8 KiB blocks.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct WorkingSet {
    /// Blocks read.
    pub read_bytes: u64,
    /// Blocks written.
    pub written_bytes: u64,
    /// Blocks read or written.
    pub bytes: u64,
}

/// The flag names `trace show` prints of a handle's open flags.
pub fn flag_names(flags: u32) -> Vec<String> {
    let mut names = Vec::new();
    if flags & O_DIRECT != 0 {
        names.push("O_DIRECT");
    }
    if flags & O_SYNC == O_SYNC {
        names.push("O_SYNC");
    } else if flags & O_DSYNC != 0 {
        names.push("O_DSYNC");
    }
    if flags & O_APPEND != 0 {
        names.push("O_APPEND");
    }
    names.into_iter().map(String::from).collect()
}

/// Most bytes one read or write moves on Linux (`MAX_RW_COUNT`, 2 GiB − 4 KiB): a longer
/// length in a damaged trace must not make a loop over billions of blocks.
const MAX_IO_BYTES: u64 = 0x7fff_f000;

/// The blocks `[offset, offset + len)` touches.
pub(crate) fn blocks(offset: u64, len: u64) -> std::ops::RangeInclusive<u64> {
    let last = offset.saturating_add(len.clamp(1, MAX_IO_BYTES) - 1);
    offset / BLOCK..=last / BLOCK
}

/// The bytes a read or write moved: its result, 0 when it failed.
pub(crate) fn done(result: i64) -> u64 {
    u64::try_from(result).unwrap_or(0)
}

/// The capture's duration: the footer's, or the last call's end when the footer has none.
pub(crate) fn duration_ns(trace: &Trace) -> u64 {
    let last = trace.ops.iter().flatten().map(|r| r.end_ns()).max();
    match trace.footer.duration_ns {
        0 => last.unwrap_or(0),
        d => d,
    }
}

impl TraceStats {
    /// The statistics of `trace`.
    pub fn of(trace: &Trace) -> TraceStats {
        let io = classify::file_io(trace);
        let duration = duration_ns(trace);
        let duration_s = duration as f64 / 1e9;
        let totals = totals(trace, duration_s);
        let (files, working_set) = files(trace, &io);
        let footer = &trace.footer;
        TraceStats {
            capture_id: trace.header.capture_id_hex(),
            format: format!("{}.{}", trace.header.major, trace.header.minor),
            provenance: trace.provenance.clone(),
            totals,
            lost: footer.lost,
            uncovered: (footer.uncovered.iter())
                .map(|(call, count)| Uncovered {
                    call: call.clone(),
                    count: *count,
                })
                .collect(),
            files,
            threads: threads::of(trace, duration_s),
            sizes: series::histograms(trace, |r| r.len),
            offsets: series::histograms(trace, |r| r.offset),
            seconds: series::seconds(trace, duration),
            working_set,
            marks: trace.marks.clone(),
        }
    }

    /// The same, with the trace file's size and bytes per record filled in.
    pub fn with_file_size(mut self, bytes: u64) -> TraceStats {
        self.totals.trace_bytes = Some(bytes);
        self.totals.bytes_per_record =
            (self.totals.records > 0).then(|| bytes as f64 / self.totals.records as f64);
        self
    }
}

fn totals(trace: &Trace, duration_s: f64) -> Totals {
    let mut t = Totals {
        duration_s,
        lost: trace.footer.lost.total(),
        uncovered: trace.footer.uncovered.iter().map(|(_, n)| n).sum(),
        ..Totals::default()
    };
    let mut syncs = 0u64;
    for r in trace.ops.iter().flatten() {
        let Some(op) = r.op else { continue };
        t.records += 1;
        *t.ops.entry(op.name().to_string()).or_default() += 1;
        t.failed += u64::from(r.result < 0);
        t.async_ops += u64::from(r.is_async);
        match op {
            OpCode::Read => t.bytes_read += done(r.result),
            OpCode::Write => t.bytes_written += done(r.result),
            OpCode::Fsync | OpCode::Fdatasync => syncs += 1,
            _ => {}
        }
    }
    if duration_s > 0.0 {
        t.ops_per_s = t.records as f64 / duration_s;
        t.syncs_per_s = syncs as f64 / duration_s;
    }
    t
}

/// Each file's figures, and the working sets of the whole trace.
fn files(trace: &Trace, io: &[FileIo]) -> (Vec<FileStats>, WorkingSet) {
    let n = trace.files.len();
    let (mut bytes_read, mut bytes_written) = (vec![0u64; n], vec![0u64; n]);
    let mut touched: Vec<HashSet<u64>> = vec![HashSet::new(); n];
    let (mut read, mut written) = (HashSet::new(), HashSet::new());
    for r in trace.ops.iter().flatten() {
        let (Some(op @ (OpCode::Read | OpCode::Write)), Some(f)) =
            (r.op, classify::file_of(trace, r))
        else {
            continue;
        };
        let Some(set) = touched.get_mut(f as usize) else {
            continue;
        };
        let (bytes, blocks_of_kind) = match op {
            OpCode::Read => (&mut bytes_read, &mut read),
            _ => (&mut bytes_written, &mut written),
        };
        // What moved, not what was asked: a read at the end of a file touches what it read.
        let moved = done(r.result);
        bytes[f as usize] += moved;
        if moved == 0 {
            continue;
        }
        for b in blocks(r.offset, moved) {
            set.insert(b);
            blocks_of_kind.insert((f, b));
        }
    }
    let files = (trace.files.iter().enumerate())
        .map(|(i, entry)| FileStats {
            id: i as u32,
            path: path_of(trace, entry.path),
            kind: entry.kind,
            class: match entry.kind {
                FileKind::Dir => FileClass::Other,
                FileKind::File => classify::classify(&io[i]),
            },
            start_size: entry.start_size,
            end_size: entry.end_size,
            reads: io[i].reads,
            writes: io[i].writes,
            bytes_read: bytes_read[i],
            bytes_written: bytes_written[i],
            working_set_bytes: touched[i].len() as u64 * BLOCK,
            seq_share: io[i].seq_share(),
            syncs: io[i].syncs,
            flush_ranges: io[i].ranges,
            flags: flag_names(io[i].flags),
        })
        .collect();
    let both = read.union(&written).count() as u64;
    let ws = WorkingSet {
        read_bytes: read.len() as u64 * BLOCK,
        written_bytes: written.len() as u64 * BLOCK,
        bytes: both * BLOCK,
    };
    (files, ws)
}

/// `root/path` of a path id (`?` for an id the trace does not define).
pub fn path_of(trace: &Trace, id: u32) -> String {
    let Some(p) = trace.paths.get(id as usize) else {
        return "?".into();
    };
    match trace.provenance.roots.get(usize::from(p.root)) {
        Some(root) => format!("{}/{}", root.name, p.path),
        None => format!("root{}/{}", p.root, p.path),
    }
}

/// `2026-11-18 12:34:56 UTC` of Unix seconds (the capture's start, in headers).
pub fn utc_text(unix_s: u64) -> String {
    let (days, secs) = (unix_s / 86_400, unix_s % 86_400);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01 (never negative here).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
}
