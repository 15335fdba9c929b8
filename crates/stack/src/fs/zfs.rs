//! ZFS. (Being implemented.)

use super::Built;
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::StackSpec;

/// Builds a pool and dataset.
pub fn build(_spec: &StackSpec, _backing: &[Backing], _ctx: &mut Ctx) -> Result<Built, StackError> {
    Err(StackError::Environment(
        "zfs stacks are not finished yet".into(),
    ))
}

/// Exports and re-imports the stack's pool so its ARC starts cold.
pub fn make_cold(
    _info: &bakeoff_core::record::StackInfo,
    _exec: &mut crate::exec::Exec,
) -> Result<(), StackError> {
    Err(StackError::Environment(
        "zfs stacks are not finished yet".into(),
    ))
}

/// The tool ZFS stacks lack here, if any.
pub fn missing_tool() -> Option<(&'static str, &'static str)> {
    (!crate::exec::installed("zpool")).then_some(("zpool", "zfs-fuse"))
}
