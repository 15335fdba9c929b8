//! The trace writer: a [`TraceSink`] that streams a trace file (docs/trace.md). Tables go out as
//! chunks before the first chunk that could use them; each thread's records are buffered and
//! written as one OPS chunk at 4 KiB of encoding or when a record starts a second or more after
//! the chunk's first, so a capture that stops at any point leaves a file that is whole up to
//! its last chunk.

use super::codec::{self, kind, OpsState, FLAG_ANONYMIZED, FLAG_CPU_NS, HEADER_LEN, MAX_IDS};
use super::codec::{MAX_CHUNK, MAX_NAME, TRAILER_MAGIC};
use super::model::{
    FileEntry, FileId, FileKind, Footer, HandleEntry, HandleId, Header, Mark, PathEntry, PathId,
    Provenance, Record, ThreadEntry, ThreadId, Trace, TraceSink, MAGIC,
};
use super::varint::{put_bytes, put_u128, put_u64};
use std::io::{self, Write};

/// Encoded records of one thread at which its chunk is written.
const OPS_FLUSH_BYTES: usize = 4096;
/// How far after a chunk's first record a record starts a new chunk.
const OPS_FLUSH_NS: u64 = 1_000_000_000;
/// Pending table entries at which they are written without waiting for a record.
const TABLE_FLUSH_BYTES: usize = 64 << 10;

/// One thread's records not written yet.
struct Pending {
    buf: Vec<u8>,
    count: u64,
    base_ns: u64,
    state: OpsState,
}

/// Writes a trace file through [`TraceSink`]; call [`TraceSink::finish`] to complete it.
pub struct TraceWriter<W: Write> {
    out: W,
    header: [u8; HEADER_LEN],
    cpu: bool,
    written: u64,
    chunks: u64,
    // Pending table entries, written in this order (each kind refers only to earlier kinds).
    tables: [(u8, Vec<u8>); 4],
    defined: [u64; 4],
    threads: Vec<Pending>,
    finished: bool,
}

const PATHS: usize = 0;
const FILES: usize = 1;
const HANDLES: usize = 2;
const THREADS: usize = 3;

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

impl<W: Write> TraceWriter<W> {
    /// Writes the header and the provenance to `out`.
    pub fn new(out: W, header: &Header, provenance: &Provenance) -> io::Result<TraceWriter<W>> {
        let flags = u32::from(provenance.anonymized) * FLAG_ANONYMIZED
            + u32::from(provenance.cpu_ns_recorded) * FLAG_CPU_NS;
        let mut bytes = [0u8; HEADER_LEN];
        bytes[..8].copy_from_slice(&MAGIC);
        bytes[8..10].copy_from_slice(&header.major.to_le_bytes());
        bytes[10..12].copy_from_slice(&header.minor.to_le_bytes());
        bytes[12..16].copy_from_slice(&flags.to_le_bytes());
        bytes[16..].copy_from_slice(&header.capture_id);
        let tables = [kind::PATH, kind::FILE, kind::HANDLE, kind::THREAD].map(|k| (k, Vec::new()));
        let mut w = TraceWriter {
            out,
            header: bytes,
            cpu: provenance.cpu_ns_recorded,
            written: 0,
            chunks: 0,
            tables,
            defined: [0; 4],
            threads: Vec::new(),
            finished: false,
        };
        w.out.write_all(&bytes)?;
        w.written = HEADER_LEN as u64;
        let json = serde_json::to_vec(provenance).map_err(io::Error::other)?;
        w.chunk(kind::PROVENANCE, &json)?;
        Ok(w)
    }

    /// Writes every buffered table entry and record, and flushes the output: the file is then
    /// a valid trace up to here, short only of its END (what Ctrl-C leaves).
    pub fn flush_all(&mut self) -> io::Result<()> {
        self.flush_tables()?;
        for thread in 0..self.threads.len() {
            self.flush_thread(thread)?;
        }
        self.out.flush()
    }

    /// The output, as it is (call [`TraceSink::finish`] or [`TraceWriter::flush_all`] first).
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Bytes written to the output so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// One chunk: kind, length, payload, crc32 of the three (the first chunk's also covers the
    /// header, which has no checksum of its own).
    fn chunk(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        if payload.len() as u64 > MAX_CHUNK {
            return Err(invalid(format!("a trace chunk of {} bytes", payload.len())));
        }
        let len = (payload.len() as u32).to_le_bytes();
        let mut crc = crc32fast::Hasher::new();
        if self.chunks == 0 {
            crc.update(&self.header);
        }
        crc.update(&[kind]);
        crc.update(&len);
        crc.update(payload);
        self.out.write_all(&[kind])?;
        self.out.write_all(&len)?;
        self.out.write_all(payload)?;
        self.out.write_all(&crc.finalize().to_le_bytes())?;
        self.written += (codec::CHUNK_HEAD + payload.len() + codec::CHUNK_CRC) as u64;
        self.chunks += 1;
        Ok(())
    }

    fn flush_tables(&mut self) -> io::Result<()> {
        for i in 0..self.tables.len() {
            if !self.tables[i].1.is_empty() {
                let (kind, payload) = (self.tables[i].0, std::mem::take(&mut self.tables[i].1));
                self.chunk(kind, &payload)?;
            }
        }
        Ok(())
    }

    fn flush_thread(&mut self, thread: usize) -> io::Result<()> {
        if self.threads[thread].count == 0 {
            return Ok(());
        }
        // Tables before the records that name them.
        self.flush_tables()?;
        let p = &mut self.threads[thread];
        let mut payload = Vec::with_capacity(p.buf.len() + 24);
        put_u64(&mut payload, thread as u64);
        put_u64(&mut payload, p.base_ns);
        put_u64(&mut payload, p.count);
        payload.extend_from_slice(&p.buf);
        p.buf.clear();
        p.count = 0;
        self.chunk(kind::OPS, &payload)
    }

    /// Adds an entry to table `t`, returning its id.
    fn table_entry(&mut self, t: usize, entry: &[u8]) -> io::Result<u32> {
        self.check_open()?;
        let id = self.defined[t];
        if id >= MAX_IDS {
            return Err(invalid(format!(
                "more than {MAX_IDS} entries in a trace table"
            )));
        }
        put_u64(&mut self.tables[t].1, id);
        self.tables[t].1.extend_from_slice(entry);
        self.defined[t] += 1;
        if self.tables[t].1.len() >= TABLE_FLUSH_BYTES {
            self.flush_tables()?;
        }
        Ok(id as u32)
    }

    fn check_open(&self) -> io::Result<()> {
        match self.finished {
            true => Err(invalid("a trace written to after its end".into())),
            false => Ok(()),
        }
    }

    fn check_id(&self, t: usize, what: &str, id: u64) -> io::Result<()> {
        match id < self.defined[t] {
            true => Ok(()),
            false => Err(invalid(format!(
                "a trace entry names {what} {id}, not defined yet"
            ))),
        }
    }

    /// Checks what a record names, so that the writer never writes a file its reader refuses.
    fn check_record(&self, thread: ThreadId, r: &Record) -> io::Result<()> {
        self.check_id(THREADS, "thread", u64::from(thread))?;
        if let Some(h) = r.handle {
            self.check_id(HANDLES, "handle", u64::from(h))?;
        }
        if let Some(op) = r.op.filter(|op| codec::arg_is_path(*op)) {
            self.check_id(PATHS, "path", r.arg)?;
            if op == super::model::OpCode::Rename {
                self.check_id(PATHS, "path", r.arg2)?;
            }
        }
        Ok(())
    }
}

fn check_name(what: &str, name: &str) -> io::Result<()> {
    match name.len() as u64 <= MAX_NAME {
        true => Ok(()),
        false => Err(invalid(format!(
            "{what} of {} bytes, over {MAX_NAME}",
            name.len()
        ))),
    }
}

/// A size as stored: 0 for none, else the size plus one.
pub(super) fn put_size(out: &mut Vec<u8>, size: Option<u64>) {
    put_u128(out, size.map_or(0, |s| u128::from(s) + 1));
}

impl<W: Write> TraceSink for TraceWriter<W> {
    fn path(&mut self, entry: PathEntry) -> io::Result<PathId> {
        check_name("a path", &entry.path)?;
        let mut e = Vec::new();
        put_u64(&mut e, u64::from(entry.root));
        put_bytes(&mut e, entry.path.as_bytes());
        self.table_entry(PATHS, &e)
    }

    fn file(&mut self, entry: FileEntry) -> io::Result<FileId> {
        self.check_id(PATHS, "path", u64::from(entry.path))?;
        let mut e = Vec::new();
        put_u64(&mut e, u64::from(entry.path));
        e.push(u8::from(entry.kind == FileKind::Dir));
        put_size(&mut e, entry.start_size);
        put_size(&mut e, entry.end_size);
        self.table_entry(FILES, &e)
    }

    fn handle(&mut self, entry: HandleEntry) -> io::Result<HandleId> {
        self.check_id(FILES, "file", u64::from(entry.file))?;
        let mut e = Vec::new();
        put_u64(&mut e, u64::from(entry.file));
        put_u64(&mut e, u64::from(entry.flags));
        e.push(u8::from(entry.implicit));
        self.table_entry(HANDLES, &e)
    }

    fn thread(&mut self, entry: ThreadEntry) -> io::Result<ThreadId> {
        check_name("a thread's name", &entry.comm)?;
        let mut e = Vec::new();
        put_u64(&mut e, u64::from(entry.tid));
        put_u64(&mut e, u64::from(entry.tgid));
        put_bytes(&mut e, entry.comm.as_bytes());
        let id = self.table_entry(THREADS, &e)?;
        let state = OpsState::new(0);
        self.threads.push(Pending {
            buf: Vec::new(),
            count: 0,
            base_ns: 0,
            state,
        });
        Ok(id)
    }

    fn op(&mut self, thread: ThreadId, record: &Record) -> io::Result<()> {
        self.check_open()?;
        self.check_record(thread, record)?;
        let t = thread as usize;
        let p = &self.threads[t];
        if p.count > 0 && record.start_ns.wrapping_sub(p.base_ns) >= OPS_FLUSH_NS {
            self.flush_thread(t)?;
        }
        let (cpu, p) = (self.cpu, &mut self.threads[t]);
        if p.count == 0 {
            p.base_ns = record.start_ns;
            p.state = OpsState::new(record.start_ns);
        }
        codec::encode(&mut p.buf, &mut p.state, record, cpu)?;
        p.count += 1;
        if p.buf.len() >= OPS_FLUSH_BYTES {
            self.flush_thread(t)?;
        }
        Ok(())
    }

    fn mark(&mut self, mark: Mark) -> io::Result<()> {
        self.check_open()?;
        check_name("a mark's name", &mark.name)?;
        let mut payload = Vec::new();
        put_u64(&mut payload, mark.t_ns);
        put_bytes(&mut payload, mark.name.as_bytes());
        self.chunk(kind::MARK, &payload)
    }

    fn finish(&mut self, footer: Footer) -> io::Result<()> {
        self.check_open()?;
        for (file, _) in &footer.end_sizes {
            self.check_id(FILES, "file", u64::from(*file))?;
        }
        for (name, _) in &footer.uncovered {
            check_name("an uncovered call's name", name)?;
        }
        self.flush_all()?;
        let end_at = self.written;
        self.chunk(kind::END, &footer_payload(&footer))?;
        self.out.write_all(&TRAILER_MAGIC)?;
        self.out.write_all(&end_at.to_le_bytes())?;
        self.written += codec::TRAILER_LEN as u64;
        self.finished = true;
        self.out.flush()
    }
}

fn footer_payload(f: &Footer) -> Vec<u8> {
    let mut out = Vec::new();
    let l = &f.lost;
    let counts = [
        f.ops,
        f.duration_ns,
        l.ring_full,
        l.pending_full,
        l.user_read_failed,
    ];
    for v in counts
        .into_iter()
        .chain([l.async_truncated, l.unmatched_exit, l.unfinished_at_end])
    {
        put_u64(&mut out, v);
    }
    put_u64(&mut out, f.uncovered.len() as u64);
    for (name, count) in &f.uncovered {
        put_bytes(&mut out, name.as_bytes());
        put_u64(&mut out, *count);
    }
    put_u64(&mut out, f.end_sizes.len() as u64);
    for (file, size) in &f.end_sizes {
        put_u64(&mut out, u64::from(*file));
        put_size(&mut out, *size);
    }
    out
}

/// Writes a whole in-memory trace to `out` (tests, and tools that make traces), returning it.
pub fn write_trace<W: Write>(trace: &Trace, out: W) -> io::Result<W> {
    let mut w = TraceWriter::new(out, &trace.header, &trace.provenance)?;
    for p in &trace.paths {
        w.path(p.clone())?;
    }
    for f in &trace.files {
        w.file(f.clone())?;
    }
    for h in &trace.handles {
        w.handle(h.clone())?;
    }
    for t in &trace.threads {
        w.thread(t.clone())?;
    }
    for (thread, ops) in trace.ops.iter().enumerate() {
        for r in ops {
            w.op(thread as ThreadId, r)?;
        }
    }
    for m in &trace.marks {
        w.mark(m.clone())?;
    }
    w.finish(trace.footer.clone())?;
    Ok(w.into_inner())
}
