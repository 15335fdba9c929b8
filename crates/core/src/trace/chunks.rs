//! The chunks of a trace file, in order: the header checked first, then each chunk read with
//! its length checked against the cap before anything is read, its payload growing only with
//! the bytes that arrive, and its CRC verified; then the trailer.

use super::codec::{CHUNK_CRC, CHUNK_HEAD, HEADER_LEN, MAX_CHUNK, TRAILER_LEN, TRAILER_MAGIC};
use super::error::TraceError;
use super::model::{Header, FORMAT_MAJOR, MAGIC};
use super::varint::Cursor;
use std::io::Read;

/// One chunk as read: its kind, where it starts, its payload (CRC checked).
pub struct Chunk {
    pub kind: u8,
    pub offset: u64,
    pub payload: Vec<u8>,
}

impl Chunk {
    /// The payload, positioned at its offset in the file.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor::new(&self.payload, self.offset + CHUNK_HEAD as u64)
    }
}

/// The chunks of a file, in order.
pub struct Chunks<R: Read> {
    input: R,
    pos: u64,
    index: u64,
    pub header: Header,
    header_bytes: [u8; HEADER_LEN],
    pub flags: u32,
}

/// Reads into `buf` until it is full or the input ends; how many bytes came.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> Result<usize, TraceError> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io(e)),
        }
    }
    Ok(got)
}

impl<R: Read> Chunks<R> {
    /// Reads and checks the header.
    pub fn start(mut input: R) -> Result<Chunks<R>, TraceError> {
        let mut h = [0u8; HEADER_LEN];
        let got = fill(&mut input, &mut h)?;
        if got == 0 {
            return Err(TraceError::Empty);
        }
        if h[..got.min(8)] != MAGIC[..got.min(8)] {
            return Err(TraceError::NotATrace);
        }
        if got < HEADER_LEN {
            return Err(TraceError::Truncated { offset: got as u64 });
        }
        let major = u16::from_le_bytes([h[8], h[9]]);
        let minor = u16::from_le_bytes([h[10], h[11]]);
        if major != FORMAT_MAJOR {
            return Err(TraceError::Version {
                major,
                minor,
                reads: FORMAT_MAJOR,
            });
        }
        let flags = u32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        let mut capture_id = [0u8; 16];
        capture_id.copy_from_slice(&h[16..]);
        let header = Header {
            major,
            minor,
            capture_id,
        };
        let pos = HEADER_LEN as u64;
        Ok(Chunks {
            input,
            pos,
            index: 0,
            header,
            header_bytes: h,
            flags,
        })
    }

    /// The next chunk; the input ending at or within it is [`TraceError::Truncated`].
    pub fn next(&mut self) -> Result<Chunk, TraceError> {
        let offset = self.pos;
        let mut head = [0u8; CHUNK_HEAD];
        let got = fill(&mut self.input, &mut head)?;
        if got < CHUNK_HEAD {
            return Err(TraceError::Truncated {
                offset: offset + got as u64,
            });
        }
        let len = u64::from(u32::from_le_bytes([head[1], head[2], head[3], head[4]]));
        if len > MAX_CHUNK {
            let at = offset + 1;
            return Err(TraceError::TooLong {
                what: "a chunk",
                len,
                limit: MAX_CHUNK,
                offset: at,
            });
        }
        // Grows with what arrives: a length the file does not hold allocates nothing.
        let mut payload = Vec::new();
        let got = (&mut self.input)
            .take(len)
            .read_to_end(&mut payload)
            .map_err(TraceError::io)?;
        let mut crc = [0u8; CHUNK_CRC];
        let crc_got = if got as u64 == len {
            fill(&mut self.input, &mut crc)?
        } else {
            0
        };
        if (got as u64) < len || crc_got < CHUNK_CRC {
            let read = CHUNK_HEAD + got + crc_got;
            return Err(TraceError::Truncated {
                offset: offset + read as u64,
            });
        }
        let mut hasher = crc32fast::Hasher::new();
        if self.index == 0 {
            hasher.update(&self.header_bytes);
        }
        hasher.update(&head);
        hasher.update(&payload);
        if hasher.finalize() != u32::from_le_bytes(crc) {
            return Err(TraceError::Crc {
                chunk: self.index,
                offset,
            });
        }
        self.pos = offset + (CHUNK_HEAD + payload.len() + CHUNK_CRC) as u64;
        self.index += 1;
        Ok(Chunk {
            kind: head[0],
            offset,
            payload,
        })
    }

    /// Reads the trailer after the END chunk at `end_at`, and checks that nothing follows it.
    pub fn trailer(&mut self, end_at: u64) -> Result<(), TraceError> {
        let mut t = [0u8; TRAILER_LEN];
        let got = fill(&mut self.input, &mut t)?;
        if got < TRAILER_LEN {
            return Err(TraceError::Truncated {
                offset: self.pos + got as u64,
            });
        }
        if t[..8] != TRAILER_MAGIC
            || u64::from_le_bytes(t[8..].try_into().unwrap_or_default()) != end_at
        {
            return Err(TraceError::malformed(
                self.pos,
                "a trailer that does not point at the END chunk",
            ));
        }
        let after = self.pos + TRAILER_LEN as u64;
        match fill(&mut self.input, &mut [0u8; 1])? {
            0 => Ok(()),
            _ => Err(TraceError::malformed(after, "bytes after the trailer")),
        }
    }
}
