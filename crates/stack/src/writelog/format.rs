//! The write log's bytes (docs/durability.md, "The write log"): a versioned header naming the
//! images, then one little-endian record per write, zeroed range and flush, in the order the
//! recorder saw them, and an end record once the recorder finished. Every record carries a
//! CRC-32 of its bytes, so a cut or a flipped byte is an error naming its offset, never a
//! different history. Written as a stream ([`LogWriter`]) and read as one
//! ([`super::LogReader`], in `read.rs`): nothing of the data stays in memory.

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;

/// The first eight bytes of every write log.
pub const MAGIC: [u8; 8] = *b"BKWRLOG\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

pub(super) const KIND_WRITE: u8 = 1;
pub(super) const KIND_FLUSH: u8 = 2;
pub(super) const KIND_ZERO: u8 = 3;
pub(super) const KIND_END: u8 = 4;
/// kind (u8), image (u32), seq (u64), time (u64): the part every record starts with.
pub(super) const COMMON: usize = 21;
/// The largest write a record may hold: FUSE hands over at most 16 MiB at once, so a larger
/// length is a damaged record, refused before its data is read.
pub const MAX_WRITE_BYTES: u32 = 64 << 20;

/// One image the log covers, as it was when logging began.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageInfo {
    /// Its file name in the recorder's backing directory (`disk0.img`).
    pub name: String,
    /// Its size in bytes.
    pub size_bytes: u64,
}

/// What a record did, without its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `len` bytes written at `offset`; the data sits at byte `data_at` of the log.
    Write { offset: u64, len: u32, data_at: u64 },
    /// `len` bytes at `offset` made to read as zeros (a discard or write-zeroes: the loop
    /// driver punches or zeroes the range of its file).
    Zero { offset: u64, len: u64 },
    /// A flush of the image (the loop driver's fsync of its file): every write the recorder
    /// saw before it is durable.
    Flush,
}

/// One record: its number in the log (0, 1, 2, ...), when the recorder handled it, the image
/// (an index into the header's images) and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its place in the log, counted from 0 without gaps.
    pub seq: u64,
    /// When the recorder handled it, on `CLOCK_MONOTONIC` ([`monotonic_ns`]): never earlier
    /// than the record before it.
    pub time_ns: u64,
    /// Index of its image in the header.
    pub image: u32,
    /// What it did.
    pub op: Op,
}

/// Why a log could not be read, and where.
#[derive(Debug)]
pub struct LogError {
    /// The log file.
    pub path: PathBuf,
    /// The byte of the log where the problem is (a record's first byte).
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let (path, offset) = (self.path.display(), self.offset);
        write!(f, "write log {path}: {} (at byte {offset})", self.what)
    }
}

impl std::error::Error for LogError {}

/// Writes a log as a stream. Records are numbered in the order they are written.
pub struct LogWriter<W: Write> {
    out: W,
    next_seq: u64,
    bytes: u64,
    last_ns: u64,
}

impl<W: Write> LogWriter<W> {
    /// Starts a log over `images` on `out`, writing its header.
    pub fn new(mut out: W, images: &[ImageInfo]) -> io::Result<LogWriter<W>> {
        let header = encode_header(images)?;
        out.write_all(&header)?;
        Ok(LogWriter {
            out,
            next_seq: 0,
            bytes: header.len() as u64,
            last_ns: 0,
        })
    }

    /// Records a write of `data` at `offset` of image `image`; returns its seq.
    pub fn write(&mut self, image: u32, offset: u64, data: &[u8]) -> io::Result<u64> {
        let len = u32::try_from(data.len())
            .ok()
            .filter(|&l| l <= MAX_WRITE_BYTES)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a write over 64 MiB"))?;
        let mut head = self.common(KIND_WRITE, image);
        head.extend_from_slice(&offset.to_le_bytes());
        head.extend_from_slice(&len.to_le_bytes());
        self.emit(&head, data)
    }

    /// Records that `len` bytes at `offset` now read as zeros; returns its seq.
    pub fn zero(&mut self, image: u32, offset: u64, len: u64) -> io::Result<u64> {
        let mut head = self.common(KIND_ZERO, image);
        head.extend_from_slice(&offset.to_le_bytes());
        head.extend_from_slice(&len.to_le_bytes());
        self.emit(&head, &[])
    }

    /// Records a flush of image `image`; returns its seq.
    pub fn flush(&mut self, image: u32) -> io::Result<u64> {
        let head = self.common(KIND_FLUSH, image);
        self.emit(&head, &[])
    }

    /// Writes the end record (its seq is the number of records before it) and flushes `out`;
    /// returns `out` and the log's size in bytes.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        let head = self.common(KIND_END, 0);
        self.emit(&head, &[])?;
        self.out.flush()?;
        Ok((self.out, self.bytes))
    }

    /// Bytes written so far, header included.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.next_seq
    }

    fn common(&mut self, kind: u8, image: u32) -> Vec<u8> {
        // The clock of every thread of the process; never behind the record before.
        self.last_ns = monotonic_ns().max(self.last_ns);
        let mut head = Vec::with_capacity(COMMON + 16);
        head.push(kind);
        head.extend_from_slice(&image.to_le_bytes());
        head.extend_from_slice(&self.next_seq.to_le_bytes());
        head.extend_from_slice(&self.last_ns.to_le_bytes());
        head
    }

    fn emit(&mut self, head: &[u8], data: &[u8]) -> io::Result<u64> {
        let mut crc = crc32fast::Hasher::new();
        crc.update(head);
        crc.update(data);
        self.out.write_all(head)?;
        self.out.write_all(data)?;
        self.out.write_all(&crc.finalize().to_le_bytes())?;
        self.bytes += (head.len() + data.len() + 4) as u64;
        self.next_seq += 1;
        Ok(self.next_seq - 1)
    }
}

fn encode_header(images: &[ImageInfo]) -> io::Result<Vec<u8>> {
    let mut h = MAGIC.to_vec();
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes());
    h.extend_from_slice(&(images.len() as u32).to_le_bytes());
    for image in images {
        let name = image.name.as_bytes();
        let len = u16::try_from(name.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "an image name too long"))?;
        h.extend_from_slice(&len.to_le_bytes());
        h.extend_from_slice(name);
        h.extend_from_slice(&image.size_bytes.to_le_bytes());
    }
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    Ok(h)
}

/// `CLOCK_MONOTONIC` in nanoseconds, the clock a database client notes its acknowledged commits
/// on (`bakeoff_db`'s `monotonic_ns`), so a record's time says which commits were acknowledged
/// before it.
pub use bakeoff_probe::monotonic_ns;
