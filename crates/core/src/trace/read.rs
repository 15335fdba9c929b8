//! The streaming reader: one chunk at a time, each checked (its CRC, every length against the
//! format's caps and against the bytes left, every id against the tables before it) before
//! anything is allocated or kept. [`read_trace`] refuses a file without its END;
//! [`read_trace_lenient`] keeps what was whole of a killed capture, for `trace show`.

use super::chunks::{Chunk, Chunks};
use super::codec::{self, kind, Defined, OpsState, FLAG_ANONYMIZED, FLAG_CPU_NS};
use super::codec::{MAX_IDS, MAX_NAME};
use super::error::TraceError;
use super::model::{
    FileEntry, FileKind, Footer, HandleEntry, Mark, PathEntry, Provenance, ThreadEntry, Trace,
};
use super::varint::Cursor;
use std::io::Read;
use std::path::Path;

/// A trace read as far as it was whole.
#[derive(Clone, Debug, PartialEq)]
pub struct LenientTrace {
    /// The tables, records and marks of every whole chunk. In a truncated trace the footer
    /// counts the records read and their time span, and has no losses or end sizes.
    pub trace: Trace,
    /// Where the file ended early (no END chunk), `None` for a complete trace.
    pub truncated_at: Option<u64>,
}

/// Reads a complete trace; a file without its END (a killed capture) is an error.
pub fn read_trace(input: impl Read) -> Result<Trace, TraceError> {
    let mut chunks = Chunks::start(input)?;
    let mut b = Builder::new(&mut chunks)?;
    loop {
        let chunk = chunks.next()?;
        if b.apply(&chunk, Mode::Records)? {
            chunks.trailer(chunk.offset)?;
            return Ok(b.trace);
        }
    }
}

/// Reads a trace as far as it is whole: a truncated file gives what came before the cut and
/// where the cut is; any other damage is still an error.
pub fn read_trace_lenient(input: impl Read) -> Result<LenientTrace, TraceError> {
    let mut chunks = Chunks::start(input)?;
    let mut b = Builder::new(&mut chunks)?;
    loop {
        let chunk = match chunks.next() {
            Err(TraceError::Truncated { offset }) => return Ok(b.cut(offset)),
            other => other?,
        };
        if b.apply(&chunk, Mode::Records)? {
            return match chunks.trailer(chunk.offset) {
                Err(TraceError::Truncated { offset }) => Ok(LenientTrace {
                    trace: b.trace,
                    truncated_at: Some(offset),
                }),
                other => other.map(|()| LenientTrace {
                    trace: b.trace,
                    truncated_at: None,
                }),
            };
        }
    }
}

/// Reads a complete trace file.
pub fn read_trace_file(path: &Path) -> Result<Trace, TraceError> {
    let file = std::fs::File::open(path).map_err(|e| TraceError::io(e).at_path(path))?;
    read_trace(std::io::BufReader::with_capacity(1 << 16, file)).map_err(|e| e.at_path(path))
}

/// Whether OPS chunks are decoded, or only counted (the summary).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Records,
    Counts,
}

/// A trace being put together from its chunks.
pub(super) struct Builder {
    pub trace: Trace,
    /// Records per thread (kept in both modes).
    pub counts: Vec<u64>,
    cpu: bool,
}

/// Checks a count of entries of at least `min_bytes` each against what the chunk has left.
fn check_len(what: &'static str, n: u64, min_bytes: u64, c: &Cursor) -> Result<(), TraceError> {
    match n.saturating_mul(min_bytes) <= c.remaining() as u64 {
        true => Ok(()),
        false => Err(TraceError::malformed(
            c.offset(),
            &format!("{what} over the chunk's size"),
        )),
    }
}

fn id(c: &mut Cursor, what: &'static str, defined: usize) -> Result<u32, TraceError> {
    let at = c.offset();
    let v = c.u64()?;
    if v >= defined as u64 {
        return Err(TraceError::Undefined {
            what,
            id: v,
            offset: at,
        });
    }
    Ok(v as u32)
}

fn size(c: &mut Cursor) -> Result<Option<u64>, TraceError> {
    let at = c.offset();
    match c.u128()? {
        0 => Ok(None),
        v => u64::try_from(v - 1)
            .map(Some)
            .map_err(|_| TraceError::malformed(at, "a size over 64 bits")),
    }
}

fn flag(c: &mut Cursor, what: &str) -> Result<bool, TraceError> {
    let at = c.offset();
    match c.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(TraceError::malformed(
            at,
            &format!("{what} that is neither 0 nor 1"),
        )),
    }
}

impl Builder {
    /// Reads the provenance, which must be the first chunk.
    pub fn new<R: Read>(chunks: &mut Chunks<R>) -> Result<Builder, TraceError> {
        let chunk = chunks.next()?;
        if chunk.kind != kind::PROVENANCE {
            return Err(TraceError::malformed(
                chunk.offset,
                "the first chunk is not the provenance",
            ));
        }
        let provenance: Provenance =
            serde_json::from_slice(&chunk.payload).map_err(|e| TraceError::Provenance {
                offset: chunk.offset,
                message: e.to_string(),
            })?;
        let flags = u32::from(provenance.anonymized) * FLAG_ANONYMIZED
            + u32::from(provenance.cpu_ns_recorded) * FLAG_CPU_NS;
        if chunks.flags & (FLAG_ANONYMIZED | FLAG_CPU_NS) != flags {
            return Err(TraceError::malformed(
                12,
                "header flags that contradict the provenance",
            ));
        }
        let trace = Trace::new(chunks.header, provenance);
        Ok(Builder {
            trace,
            counts: Vec::new(),
            cpu: flags & FLAG_CPU_NS != 0,
        })
    }

    /// Takes one chunk in; `true` at the END chunk.
    pub fn apply(&mut self, chunk: &Chunk, mode: Mode) -> Result<bool, TraceError> {
        let mut c = chunk.cursor();
        match chunk.kind {
            kind::PROVENANCE => {
                return Err(TraceError::malformed(chunk.offset, "a second provenance"))
            }
            kind::PATH | kind::FILE | kind::HANDLE | kind::THREAD => {
                while !c.is_empty() {
                    self.table_entry(chunk.kind, &mut c)?;
                }
            }
            kind::OPS => self.ops(&mut c, mode)?,
            kind::MARK => {
                let t_ns = c.u64()?;
                let name = c.string("a mark's name", MAX_NAME)?;
                self.trace.marks.push(Mark { t_ns, name });
            }
            kind::END => self.footer(&mut c)?,
            // A later minor version's chunk: its CRC held, its meaning is not ours.
            _ => return Ok(false),
        }
        if !c.is_empty() {
            return Err(TraceError::malformed(
                c.offset(),
                "bytes after the chunk's last entry",
            ));
        }
        Ok(chunk.kind == kind::END)
    }

    fn table_entry(&mut self, k: u8, c: &mut Cursor) -> Result<(), TraceError> {
        let t = &mut self.trace;
        let (what, next) = match k {
            kind::PATH => ("the path table", t.paths.len()),
            kind::FILE => ("the file table", t.files.len()),
            kind::HANDLE => ("the handle table", t.handles.len()),
            _ => ("the thread table", t.threads.len()),
        };
        let at = c.offset();
        let entry_id = c.u64()?;
        if entry_id >= MAX_IDS {
            return Err(TraceError::TooLong {
                what,
                len: entry_id + 1,
                limit: MAX_IDS,
                offset: at,
            });
        }
        if entry_id != next as u64 {
            let text = format!("entry {entry_id} of {what} where entry {next} comes next");
            return Err(TraceError::malformed(at, &text));
        }
        match k {
            kind::PATH => {
                let root = c.u32()?;
                let root = u16::try_from(root)
                    .map_err(|_| TraceError::malformed(at, "a root over 65535"))?;
                let path = c.string("a path", MAX_NAME)?;
                t.paths.push(PathEntry { root, path });
            }
            kind::FILE => {
                let path = id(c, "path", t.paths.len())?;
                let kind = if flag(c, "a file kind")? {
                    FileKind::Dir
                } else {
                    FileKind::File
                };
                let (start_size, end_size) = (size(c)?, size(c)?);
                t.files.push(FileEntry {
                    path,
                    kind,
                    start_size,
                    end_size,
                });
            }
            kind::HANDLE => {
                let file = id(c, "file", t.files.len())?;
                let flags = c.u32()?;
                let implicit = flag(c, "an implicit flag")?;
                t.handles.push(HandleEntry {
                    file,
                    flags,
                    implicit,
                });
            }
            _ => {
                let (tid, tgid) = (c.u32()?, c.u32()?);
                let comm = c.string("a thread's name", MAX_NAME)?;
                t.threads.push(ThreadEntry { tid, tgid, comm });
                t.ops.push(Vec::new());
                self.counts.push(0);
            }
        }
        Ok(())
    }

    fn ops(&mut self, c: &mut Cursor, mode: Mode) -> Result<(), TraceError> {
        let thread = id(c, "thread", self.trace.threads.len())? as usize;
        let base_ns = c.u64()?;
        let count = c.u64()?;
        // A record is at least its op byte, its start and its duration.
        check_len("a record count", count, 3, c)?;
        self.counts[thread] += count;
        if mode == Mode::Counts {
            // The summary trusts the count (the CRC held) and leaves the records undecoded.
            *c = Cursor::new(&[], c.offset());
            return Ok(());
        }
        let defined = Defined {
            paths: self.trace.paths.len() as u64,
            handles: self.trace.handles.len() as u64,
        };
        let mut state = OpsState::new(base_ns);
        let ops = &mut self.trace.ops[thread];
        // What a chunk of the writer's size holds; a larger count grows as records decode.
        ops.reserve(count.min(1024) as usize);
        for _ in 0..count {
            ops.push(codec::decode(c, &mut state, self.cpu, defined)?);
        }
        Ok(())
    }

    fn footer(&mut self, c: &mut Cursor) -> Result<(), TraceError> {
        let mut v = [0u64; 8];
        for x in &mut v {
            *x = c.u64()?;
        }
        let f = &mut self.trace.footer;
        [f.ops, f.duration_ns] = [v[0], v[1]];
        let l = &mut f.lost;
        [l.ring_full, l.pending_full, l.user_read_failed] = [v[2], v[3], v[4]];
        [l.async_truncated, l.unmatched_exit, l.unfinished_at_end] = [v[5], v[6], v[7]];
        let n = c.u64()?;
        check_len("a count of uncovered calls", n, 2, c)?;
        for _ in 0..n {
            let name = c.string("an uncovered call's name", MAX_NAME)?;
            f.uncovered.push((name, c.u64()?));
        }
        let n = c.u64()?;
        check_len("a count of end sizes", n, 2, c)?;
        for _ in 0..n {
            let file = id(c, "file", self.trace.files.len())?;
            let end = size(c)?;
            self.trace.footer.end_sizes.push((file, end));
            self.trace.files[file as usize].end_size = end;
        }
        Ok(())
    }

    /// What a truncated file held, with a footer made from its records.
    fn cut(mut self, offset: u64) -> LenientTrace {
        let ops = self.trace.ops.iter().flatten();
        self.trace.footer = Footer {
            ops: self.trace.record_count(),
            duration_ns: ops.map(|r| r.end_ns()).max().unwrap_or(0),
            ..Footer::default()
        };
        LenientTrace {
            trace: self.trace,
            truncated_at: Some(offset),
        }
    }
}
