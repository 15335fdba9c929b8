//! Data verification (`verify=crc32c|sha256`, fio's `verify`): every block an I/O workload
//! writes carries a header that says where it belongs, which write made it and a checksum of
//! the block, so that a read, the final pass after a run or a later checker of the files can
//! tell an intact block from a torn, misplaced, stale or damaged one. This module is the
//! block format and its check, with no system calls: the engine stamps and checks blocks with
//! it (`bakeoff_engine::verify`), and any other reader of the files can too. docs/verify.md
//! describes the format and what it detects.

mod header;
pub mod journal;

pub use header::{check, check_generation, stamp, Checksum, Fault, Header};

use serde::{Deserialize, Serialize};

/// Bytes of the header at the start of every verified block: the smallest verified block.
pub const HEADER_BYTES: usize = 64;

/// The first 8 bytes of every verified block.
pub const MAGIC: [u8; 8] = *b"bkoffVFY";

/// The checksum a verified block carries (`verify=` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// CRC-32C (Castagnoli), as iSCSI, ext4 and btrfs use; the CPU's `crc32` instruction
    /// where there is one. Catches every burst error up to 32 bits; not a defence against
    /// deliberate forgery.
    Crc32c,
    /// SHA-256: a cryptographic hash, many times the CPU of CRC-32C per byte.
    Sha256,
}

impl Algorithm {
    /// Every algorithm, in the order the `verify` key lists them.
    pub const ALL: [Algorithm; 2] = [Algorithm::Crc32c, Algorithm::Sha256];

    /// The name used in `verify=` and the run record.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Crc32c => "crc32c",
            Algorithm::Sha256 => "sha256",
        }
    }

    /// The algorithm's number in the header (byte 28).
    pub(crate) fn code(self) -> u8 {
        match self {
            Algorithm::Crc32c => 1,
            Algorithm::Sha256 => 2,
        }
    }

    /// `verify=`'s value: `off` is `None`.
    pub fn parse_key(text: &str) -> Result<Option<Algorithm>, String> {
        match text.trim() {
            "off" | "false" | "0" | "none" => Ok(None),
            t => Algorithm::ALL
                .into_iter()
                .find(|a| a.name() == t)
                .map(Some)
                .ok_or_else(|| "allowed: off, crc32c, sha256".to_string()),
        }
    }
}

/// Where the verified blocks of a fileset's files lie: `block_bytes` each, from `offset` in
/// each file (the roles' `offset`) to the last whole block. The bytes before `offset` and after
/// the last whole block are plain data, never read or written by the run, and not checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockGrid {
    /// Bytes per block: the block size of every I/O on the fileset.
    pub block_bytes: u64,
    /// Where the first block starts in each file (or device region).
    pub offset: u64,
}

impl BlockGrid {
    /// Whole blocks in a file (or region) of `size` bytes.
    pub fn blocks_in(&self, size: u64) -> u64 {
        size.saturating_sub(self.offset) / self.block_bytes.max(1)
    }
}

#[cfg(test)]
mod tests;
