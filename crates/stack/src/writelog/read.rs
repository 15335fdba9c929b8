//! Reading a write log as a stream ([`super::format`] has its layout), checking every record:
//! a cut, a flipped byte or a missing end is an error naming the byte offset.

use super::format::{
    Entry, ImageInfo, LogError, Op, COMMON, KIND_END, KIND_FLUSH, KIND_WRITE, KIND_ZERO, MAGIC,
    MAX_WRITE_BYTES, VERSION,
};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Reads a log as a stream, checking every record.
pub struct LogReader<R: Read> {
    input: R,
    path: PathBuf,
    images: Vec<ImageInfo>,
    at: u64,
    next_seq: u64,
    last_ns: u64,
    ended: bool,
}

impl LogReader<std::io::BufReader<std::fs::File>> {
    /// Opens the log at `path` and reads its header.
    pub fn open(path: &Path) -> Result<Self, LogError> {
        let file = std::fs::File::open(path).map_err(|e| LogError {
            path: path.to_path_buf(),
            offset: 0,
            what: format!("cannot be opened: {e}"),
        })?;
        LogReader::new(std::io::BufReader::with_capacity(1 << 20, file), path)
    }
}

impl<R: Read> LogReader<R> {
    /// Reads the header from `input`; `path` names the log in errors.
    pub fn new(input: R, path: &Path) -> Result<LogReader<R>, LogError> {
        let mut reader = LogReader {
            input,
            path: path.to_path_buf(),
            images: Vec::new(),
            at: 0,
            next_seq: 0,
            last_ns: 0,
            ended: false,
        };
        reader.images = reader.header()?;
        Ok(reader)
    }

    /// The images the log covers.
    pub fn images(&self) -> &[ImageInfo] {
        &self.images
    }

    /// When the recorder finished (the end record's time), once it was read.
    pub fn end_ns(&self) -> Option<u64> {
        self.ended.then_some(self.last_ns)
    }

    /// The next record, with a write's data in `data` (cleared otherwise); `None` after the
    /// end record. A log that stops without its end record, or inside a record, is an error.
    pub fn next(&mut self, data: &mut Vec<u8>) -> Result<Option<Entry>, LogError> {
        data.clear();
        if self.ended {
            return Ok(None);
        }
        let start = self.at;
        let mut common = [0u8; COMMON];
        let got = self.fill(&mut common)?;
        if got == 0 {
            let what = "ends without its end record: the recorder did not finish (killed?)";
            return Err(self.error(start, what.into()));
        }
        self.need(got, COMMON, start)?;
        let (kind, image, seq) = (common[0], le32(&common[1..5]), le64(&common[5..13]));
        let time_ns = le64(&common[13..21]);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&common);
        if seq != self.next_seq {
            let what = format!("record {} is numbered {seq}", self.next_seq);
            return Err(self.error(start, what));
        }
        let op = self.op(kind, image, start, &mut crc, data)?;
        let mut sum = [0u8; 4];
        let got = self.fill(&mut sum)?;
        self.need(got, 4, start)?;
        if le32(&sum) != crc.finalize() {
            return Err(self.error(start, format!("record {seq} fails its checksum")));
        }
        if time_ns < self.last_ns {
            return Err(self.error(
                start,
                format!("record {seq} is earlier than the one before"),
            ));
        }
        self.next_seq += 1;
        self.last_ns = time_ns;
        let Some(op) = op else {
            return self.end(start).map(|()| None);
        };
        Ok(Some(Entry {
            seq,
            time_ns,
            image,
            op,
        }))
    }

    /// Reads what follows a record's common part; `None` for the end record.
    fn op(
        &mut self,
        kind: u8,
        image: u32,
        start: u64,
        crc: &mut crc32fast::Hasher,
        data: &mut Vec<u8>,
    ) -> Result<Option<Op>, LogError> {
        if kind != KIND_END && image as usize >= self.images.len() {
            let what = format!(
                "record {} names image {image} of {}",
                self.next_seq,
                self.images.len()
            );
            return Err(self.error(start, what));
        }
        let fixed = match kind {
            KIND_WRITE => 12,
            KIND_ZERO => 16,
            KIND_FLUSH | KIND_END => 0,
            other => return Err(self.error(start, format!("unknown record kind {other}"))),
        };
        let mut buf = [0u8; 16];
        let got = self.fill(&mut buf[..fixed])?;
        self.need(got, fixed, start)?;
        crc.update(&buf[..fixed]);
        Ok(Some(match kind {
            KIND_WRITE => {
                let (offset, len) = (le64(&buf[..8]), le32(&buf[8..12]));
                if len > MAX_WRITE_BYTES {
                    let what = format!("record {} claims a write of {len} bytes", self.next_seq);
                    return Err(self.error(start, what));
                }
                let data_at = self.at;
                data.resize(len as usize, 0);
                let got = self.fill(data)?;
                self.need(got, len as usize, start)?;
                crc.update(data);
                Op::Write {
                    offset,
                    len,
                    data_at,
                }
            }
            KIND_ZERO => Op::Zero {
                offset: le64(&buf[..8]),
                len: le64(&buf[8..16]),
            },
            KIND_FLUSH => Op::Flush,
            _ => return Ok(None),
        }))
    }

    /// After the end record: its seq was checked; nothing may follow it.
    fn end(&mut self, start: u64) -> Result<(), LogError> {
        self.ended = true;
        let mut byte = [0u8; 1];
        if self.fill(&mut byte)? != 0 {
            return Err(self.error(start, "has bytes after its end record".into()));
        }
        Ok(())
    }

    fn header(&mut self) -> Result<Vec<ImageInfo>, LogError> {
        let mut fixed = [0u8; 20];
        if self.fill(&mut fixed)? < 20 || fixed[..8] != MAGIC {
            return Err(self.error(0, "is not a bakeoff write log (no BKWRLOG header)".into()));
        }
        let version = le32(&fixed[8..12]);
        if version != VERSION {
            let what = format!("is format version {version}; this bakeoff reads version {VERSION}");
            return Err(self.error(8, what));
        }
        let mut bytes = fixed.to_vec();
        let count = le32(&fixed[16..20]);
        let mut images = Vec::new();
        for _ in 0..count {
            let mut len = [0u8; 2];
            self.exact(&mut len, &mut bytes)?;
            let mut name = vec![0u8; u16::from_le_bytes(len) as usize];
            self.exact(&mut name, &mut bytes)?;
            let mut size = [0u8; 8];
            self.exact(&mut size, &mut bytes)?;
            let name = String::from_utf8(name)
                .map_err(|_| self.error(self.at, "names an image in invalid UTF-8".into()))?;
            images.push(ImageInfo {
                name,
                size_bytes: le64(&size),
            });
        }
        let mut sum = [0u8; 4];
        self.exact(&mut sum, &mut Vec::new())?;
        if le32(&sum) != crc32fast::hash(&bytes) {
            return Err(self.error(0, "its header fails its checksum".into()));
        }
        Ok(images)
    }

    /// Reads all of `buf` into the header's bytes, or fails as a cut header.
    fn exact(&mut self, buf: &mut [u8], bytes: &mut Vec<u8>) -> Result<(), LogError> {
        if self.fill(buf)? < buf.len() {
            return Err(self.error(self.at, "its header is cut short".into()));
        }
        bytes.extend_from_slice(buf);
        Ok(())
    }

    /// Fails as a cut record unless `got` reached `want`.
    fn need(&self, got: usize, want: usize, start: u64) -> Result<(), LogError> {
        match got < want {
            true => Err(self.cut(start)),
            false => Ok(()),
        }
    }

    fn cut(&self, start: u64) -> LogError {
        let what = format!(
            "record {} is cut short: the log ends {} bytes into it (the recorder was killed?)",
            self.next_seq,
            self.at - start
        );
        self.error(start, what)
    }

    /// Reads until `buf` is full or the input ends; returns the bytes read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, LogError> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => {
                    got += n;
                    self.at += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(self.at, format!("cannot be read: {e}"))),
            }
        }
        Ok(got)
    }

    fn error(&self, offset: u64, what: String) -> LogError {
        LogError {
            path: self.path.clone(),
            offset,
            what,
        }
    }
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().expect("four bytes"))
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("eight bytes"))
}
