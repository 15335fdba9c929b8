//! The `verify` section of a run record (`verify=crc32c|sha256`): what was checked, and every
//! mismatch counted with the first few described (docs/verify.md, docs/schema.md).

use serde::{Deserialize, Serialize};

/// What a verified run checked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyRecord {
    /// `crc32c` or `sha256`.
    pub mode: String,
    /// Bytes of the header at the start of each block.
    pub header_bytes: u64,
    /// The filesets whose blocks were verified.
    pub filesets: Vec<VerifiedFileset>,
    /// Filesets not verified (a log writer's redo, written in any length), by name.
    #[serde(default)]
    pub unverified_filesets: Vec<String>,
    /// Blocks the layout wrote with headers (generation 0).
    pub layout_blocks: u64,
    /// Writes during the run (warm-up included), each a block with a new generation.
    pub blocks_written: u64,
    /// Reads during the run whose block was checked.
    pub reads_checked: u64,
    /// Reads not checked: a write to the same block was in flight while the block was read,
    /// so the read may see parts of both (the final pass checks the block later).
    pub reads_raced: u64,
    /// The final pass over every block after the run; `None` when it did not run (the run
    /// failed or was interrupted first).
    pub final_pass: Option<FinalPass>,
    /// Blocks found wrong, during the run and in the final pass.
    pub mismatches: u64,
    /// The first mismatches found, described.
    pub first_mismatches: Vec<VerifyMismatch>,
}

/// One verified fileset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifiedFileset {
    /// Its name.
    pub name: String,
    /// Bytes per block.
    pub block_bytes: u64,
    /// Where the first block starts in each file.
    pub offset_bytes: u64,
    /// Blocks over all its files.
    pub blocks: u64,
}

/// The read of every block after the measured run (not part of the window).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalPass {
    /// Blocks read and checked.
    pub blocks_checked: u64,
    /// How long it took (syncing the files first included).
    pub elapsed_ns: u64,
    /// False if an interrupt stopped it before the last block.
    pub complete: bool,
}

/// A block found wrong.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyMismatch {
    /// The file or device.
    pub path: String,
    /// The block's byte offset in it.
    pub offset_bytes: u64,
    /// `run` (a read during the run) or `final_pass`.
    pub found_by: String,
    /// What was wrong: `magic`, `length`, `algorithm`, `checksum`, `offset`, `generation`
    /// (`too_short` for a block cut short).
    pub fault: String,
    /// The oldest generation the block could hold.
    pub expected_generation_min: u64,
    /// The newest generation any write to it made.
    pub expected_generation_max: u64,
    /// The offset in the block's header, where it had one.
    pub found_offset_bytes: Option<u64>,
    /// The generation in the block's header, where it had one.
    pub found_generation: Option<u64>,
    /// The checksum in the header, where it had one.
    pub stored_checksum: Option<String>,
    /// The checksum of the block's bytes, where it did not match.
    pub computed_checksum: Option<String>,
    /// The whole description, as the error says it.
    pub message: String,
}
