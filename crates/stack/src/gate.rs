//! The safety gate for devices the user hands over. (Being implemented: refuses everything.)

use crate::error::StackError;
use std::fs::File;
use std::path::{Path, PathBuf};

/// A device that passed the gate, held open exclusively for the life of the stack.
#[derive(Debug)]
pub struct Claim {
    /// Canonical device node (`/dev/sdb`).
    pub device: PathBuf,
    /// Size in bytes.
    pub size_bytes: u64,
    /// The exclusive open that keeps others from mounting it meanwhile.
    pub file: File,
}

/// Checks `device` before anything writes to it; `destroy_ok` lists devices whose existing
/// signatures the user agreed to destroy.
pub fn check(device: &Path, _destroy_ok: &[PathBuf]) -> Result<Claim, StackError> {
    Err(StackError::Refused {
        device: device.display().to_string(),
        reason: "the safety gate is not finished: no real device is accepted yet".into(),
    })
}
