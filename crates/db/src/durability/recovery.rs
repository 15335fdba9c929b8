//! A state's file systems brought back as after an outage: a kernel file system mounted (its
//! journal replayed), unmounted and checked by its own tool, then mounted again; a ZFS pool
//! imported (its intent log replayed) and scrubbed. The data stack's first, then a log
//! stack's beside it.

use super::mounted::{GroupId, MountedState};
use super::{LogState, StateCheck};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::fs::check::{CheckFn, StateChecking};
use bakeoff_stack::fs::zfs::state as zfs_state;
use bakeoff_stack::{StackError, StackKind};
use std::path::{Path, PathBuf};

/// Brings back the state's `group`, a stack of type `kind` that was mounted at `origin` in the
/// run, into `found`: where its file system is now, or `None` if it did not come back (then
/// `found` says why).
pub(super) fn recover(
    state: &mut MountedState,
    group: GroupId,
    (kind, origin): (StackKind, &Path),
    found: &mut StateCheck,
    exec: &mut Exec,
) -> Result<Option<PathBuf>, StackError> {
    let cannot = || {
        StackError::Environment(format!(
            "a {} stack's crash states cannot be checked: bakeoff cannot bring it back from images",
            kind.name()
        ))
    };
    match kind.driver().crash_state.ok_or_else(cannot)? {
        StateChecking::Kernel(check) => {
            let fs_type = kind.driver().mount_type.ok_or_else(cannot)?;
            kernel_recovery(state, group, (fs_type, check), found, exec)
        }
        StateChecking::Pool => match state.import_pool(group, origin, exec)? {
            Ok((root, pool)) => {
                found.fs_check = Some(zfs_state::scrub(&pool, exec)?);
                Ok(Some(root))
            }
            Err(e) => {
                found.mount_error = Some(e);
                Ok(None)
            }
        },
    }
}

/// A kernel file system's recovery of a state's `group`: a mount (the journal replayed) and
/// unmount, its own check, and a mount again for the database; the mount point, or `None` if
/// it would not mount.
fn kernel_recovery(
    state: &mut MountedState,
    group: GroupId,
    (fs_type, check): (&str, CheckFn),
    found: &mut StateCheck,
    exec: &mut Exec,
) -> Result<Option<PathBuf>, StackError> {
    if let Err(e) = state.mount(group, fs_type, exec) {
        found.mount_error = Some(e);
        return Ok(None);
    }
    state.unmount(group, exec)?;
    found.fs_check = Some(check(state.devices(group), exec)?);
    if let Err(e) = state.mount(group, fs_type, exec) {
        found.mount_error = Some(e);
        return Ok(None);
    }
    Ok(Some(state.mountpoint(group).to_path_buf()))
}

/// The log stack's recovery, as the data stack's, into `found` (its refusal to mount or
/// import, or damage its check found where the data stack's found none, named as the log
/// stack's).
pub(super) fn recover_log(
    state: &mut MountedState,
    log: &LogState,
    images: &[PathBuf],
    found: &mut StateCheck,
    exec: &mut Exec,
) -> Result<Option<PathBuf>, StackError> {
    let group = state.attach_group(images, &log.mountpoint, exec)?;
    let mut own = StateCheck::new();
    let root = recover(state, group, (log.kind, &log.origin), &mut own, exec)?;
    if let Some(e) = own.mount_error {
        found
            .mount_error
            .get_or_insert(format!("the log stack: {e}"));
    }
    let data_clean = found.fs_check.as_ref().is_none_or(|c| c.clean);
    if let Some(c) = own.fs_check.filter(|c| !c.clean && data_clean) {
        found.fs_check = Some(c);
    }
    Ok(root)
}
