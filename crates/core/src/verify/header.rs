//! The block header and its check. Layout (little-endian; docs/verify.md):
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..8   | magic `bkoffVFY` |
//! | 8..16  | the block's byte offset in its file or device |
//! | 16..24 | generation: 0 for the layout, then 1, 2, ... per write to the block |
//! | 24..28 | the block's length in bytes |
//! | 28     | algorithm: 1 crc32c, 2 sha256 |
//! | 29..32 | zero |
//! | 32..64 | checksum (crc32c: 4 bytes, then zeros) |
//!
//! The checksum covers bytes 0..32 (so a flipped offset or generation is caught too) and every
//! byte after the header.

use super::{Algorithm, HEADER_BYTES, MAGIC};
use sha2::{Digest, Sha256};
use std::fmt;

/// Where the checksum field starts.
const SUM_AT: usize = 32;

/// A block's checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checksum {
    /// CRC-32C.
    Crc32c(u32),
    /// SHA-256.
    Sha256([u8; 32]),
}

impl Checksum {
    /// The checksum of `block` (its first [`HEADER_BYTES`] are the header).
    fn of(block: &[u8], algorithm: Algorithm) -> Checksum {
        let (fields, rest) = (&block[..SUM_AT], &block[HEADER_BYTES..]);
        match algorithm {
            Algorithm::Crc32c => {
                Checksum::Crc32c(crc32c::crc32c_append(crc32c::crc32c(fields), rest))
            }
            Algorithm::Sha256 => {
                let digest = Sha256::new().chain_update(fields).chain_update(rest);
                Checksum::Sha256(digest.finalize().into())
            }
        }
    }

    /// The checksum as stored in the header's last 32 bytes.
    fn stored(bytes: &[u8], algorithm: Algorithm) -> Checksum {
        match algorithm {
            Algorithm::Crc32c => Checksum::Crc32c(u32::from_le_bytes(word(bytes, 0))),
            Algorithm::Sha256 => {
                let mut sum = [0u8; 32];
                sum.copy_from_slice(&bytes[..32]);
                Checksum::Sha256(sum)
            }
        }
    }

    fn write(&self, out: &mut [u8]) {
        out[..32].fill(0);
        match self {
            Checksum::Crc32c(c) => out[..4].copy_from_slice(&c.to_le_bytes()),
            Checksum::Sha256(s) => out[..32].copy_from_slice(s),
        }
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Checksum::Crc32c(c) => write!(f, "crc32c {c:#010x}"),
            Checksum::Sha256(s) => {
                write!(f, "sha256 ")?;
                s.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
        }
    }
}

/// A block's header, as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The offset the block was written for.
    pub offset: u64,
    /// The write that made it: 0 the layout, then one more per write to the block.
    pub generation: u64,
    /// The checksum stored.
    pub checksum: Checksum,
}

/// What is wrong with a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Shorter than a header.
    TooShort {
        /// Its length.
        len: usize,
    },
    /// No header: the magic is not there.
    Magic {
        /// Its first 8 bytes.
        found: [u8; 8],
    },
    /// The header of a block of another length.
    Length {
        /// The length in the header.
        found: u64,
    },
    /// The header of another algorithm (another `verify=`).
    Algorithm {
        /// The algorithm's number in the header.
        found: u8,
    },
    /// The checksum does not match the block: damaged, or torn (part of one write, part of
    /// another).
    Checksum {
        /// The header as read.
        header: Header,
        /// What the block's bytes add up to.
        computed: Checksum,
    },
    /// An intact block written for another offset: a misdirected write or read.
    Offset {
        /// The header as read.
        header: Header,
    },
    /// An intact block of a generation the writes to it rule out.
    Generation {
        /// The header as read.
        header: Header,
        /// The oldest generation the block may hold.
        min: u64,
        /// The newest generation any write made.
        max: u64,
    },
}

impl Fault {
    /// The fault's name in the run record: `too_short`, `magic`, `length`, `algorithm`,
    /// `checksum`, `offset` or `generation`.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::TooShort { .. } => "too_short",
            Fault::Magic { .. } => "magic",
            Fault::Length { .. } => "length",
            Fault::Algorithm { .. } => "algorithm",
            Fault::Checksum { .. } => "checksum",
            Fault::Offset { .. } => "offset",
            Fault::Generation { .. } => "generation",
        }
    }

    /// The header read, where the block had one.
    pub fn header(&self) -> Option<&Header> {
        match self {
            Fault::Checksum { header, .. }
            | Fault::Offset { header }
            | Fault::Generation { header, .. } => Some(header),
            _ => None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Fault::TooShort { len } => write!(
                f,
                "{len} bytes, shorter than the {HEADER_BYTES}-byte block header"
            ),
            Fault::Magic { found } => {
                write!(f, "no block header (first bytes")?;
                found.iter().try_for_each(|b| write!(f, " {b:02x}"))?;
                write!(
                    f,
                    "): not a block bakeoff wrote, or overwritten by something else"
                )
            }
            Fault::Length { found } => write!(f, "the header of a {found}-byte block"),
            Fault::Algorithm { found } => write!(
                f,
                "a header with checksum algorithm number {found} (written under another verify=)"
            ),
            Fault::Checksum { header, computed } => write!(
                f,
                "{} in the header (offset {}, generation {}) but {computed} computed over the \
                 block: damaged, or torn between two writes",
                header.checksum, header.offset, header.generation
            ),
            Fault::Offset { header } => write!(
                f,
                "an intact block of offset {} (generation {}): written to or read from the wrong \
                 place",
                header.offset, header.generation
            ),
            Fault::Generation { header, min, .. } if header.generation < *min => write!(
                f,
                "an intact block of generation {}, older than generation {min}, whose write had \
                 completed with no other write to the block in flight: a lost or stale write",
                header.generation
            ),
            Fault::Generation { header, max, .. } => write!(
                f,
                "an intact block of generation {}, but no write to the block made a generation \
                 above {max}",
                header.generation
            ),
        }
    }
}

fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut w = [0u8; N];
    w.copy_from_slice(&bytes[at..at + N]);
    w
}

/// Writes the header of `block` (all of it: its length is the block's) for the block at byte
/// `offset` of its file, made by write `generation`, and its checksum over the rest of the
/// block. Blocks shorter than [`HEADER_BYTES`] are left alone (the planner refuses them).
#[inline]
pub fn stamp(block: &mut [u8], offset: u64, generation: u64, algorithm: Algorithm) {
    if block.len() < HEADER_BYTES {
        return;
    }
    block[..8].copy_from_slice(&MAGIC);
    block[8..16].copy_from_slice(&offset.to_le_bytes());
    block[16..24].copy_from_slice(&generation.to_le_bytes());
    let len = block.len() as u32;
    block[24..28].copy_from_slice(&len.to_le_bytes());
    block[28..SUM_AT].copy_from_slice(&[algorithm.code(), 0, 0, 0]);
    let sum = Checksum::of(block, algorithm);
    sum.write(&mut block[SUM_AT..HEADER_BYTES]);
}

/// Checks that `block` (all of it) is an intact block of byte `offset` under `algorithm`:
/// its magic, length, algorithm, checksum and offset, in that order. Returns its header, whose
/// generation [`check_generation`] then judges.
#[inline]
pub fn check(block: &[u8], offset: u64, algorithm: Algorithm) -> Result<Header, Fault> {
    if block.len() < HEADER_BYTES {
        return Err(Fault::TooShort { len: block.len() });
    }
    let found: [u8; 8] = word(block, 0);
    if found != MAGIC {
        return Err(Fault::Magic { found });
    }
    let len = u32::from_le_bytes(word(block, 24));
    if u64::from(len) != block.len() as u64 {
        return Err(Fault::Length {
            found: u64::from(len),
        });
    }
    if block[28] != algorithm.code() {
        return Err(Fault::Algorithm { found: block[28] });
    }
    let header = Header {
        offset: u64::from_le_bytes(word(block, 8)),
        generation: u64::from_le_bytes(word(block, 16)),
        checksum: Checksum::stored(&block[SUM_AT..HEADER_BYTES], algorithm),
    };
    let computed = Checksum::of(block, algorithm);
    if computed != header.checksum {
        return Err(Fault::Checksum { header, computed });
    }
    if header.offset != offset {
        return Err(Fault::Offset { header });
    }
    Ok(header)
}

/// Checks that an intact block's generation is one the writes to it allow: from `min` (the
/// newest write that had the block to itself) to `max` (the newest write made).
#[inline]
pub fn check_generation(header: &Header, min: u64, max: u64) -> Result<(), Fault> {
    if (min..=max).contains(&header.generation) {
        return Ok(());
    }
    Err(Fault::Generation {
        header: *header,
        min,
        max,
    })
}
