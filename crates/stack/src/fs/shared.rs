//! What the drivers share while building: the tools they need, mkfs on the backing devices, a
//! mount, and what a kernel file system reads back.

use super::driver::Built;
use crate::backing::{hand_over, Backing, Ctx};
use crate::error::StackError;
use crate::exec::{Cmd, Exec, MKFS_TIMEOUT};
use crate::undo::Undo;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The first of `tools` (tool, package) that is not installed.
pub(crate) fn first_missing(
    tools: &[(&'static str, &'static str)],
) -> Option<(&'static str, &'static str)> {
    tools
        .iter()
        .find(|(tool, _)| !crate::exec::installed(tool))
        .copied()
}

/// Runs mkfs (`tool args`) on the devices among `backing`, handing our claims on the user's
/// devices over to it (see [`hand_over`]), within [`MKFS_TIMEOUT`].
pub(crate) fn mkfs(
    ctx: &mut Ctx,
    backing: &mut [Backing],
    tool: &str,
    args: &[&str],
) -> Result<(), StackError> {
    let cmd = Cmd::new(tool, args).timeout(MKFS_TIMEOUT);
    hand_over(backing, ctx.exec, |exec| exec.run_cmd(&cmd))?;
    Ok(())
}

/// Creates `dir/mnt` and mounts `source` there, recording both undos first. The user's devices
/// among `backing` are released to the mount, which claims them itself.
pub(crate) fn mount(
    ctx: &mut Ctx,
    backing: &mut [Backing],
    source: &str,
    fstype: &str,
    options: Option<&str>,
) -> Result<PathBuf, StackError> {
    let mnt = ctx.dir.join("mnt");
    ctx.ledger.record(Undo::RemoveDir { path: mnt.clone() })?;
    std::fs::create_dir_all(&mnt).map_err(StackError::io("creating mount point", &mnt))?;
    ctx.ledger.record(Undo::Unmount { path: mnt.clone() })?;
    let m = mnt.to_string_lossy().to_string();
    let mut args = vec!["-t", fstype];
    if let Some(o) = options {
        args.extend(["-o", o]);
    }
    args.extend([source, &m]);
    crate::backing::release(backing);
    ctx.exec.run("mount", &args)?;
    Ok(mnt)
}

/// A kernel file system mounted at `mnt`: adds the mount options the kernel reports and the
/// version of the mkfs `tool` (printed by `tool version_arg`) to what the driver read back,
/// `properties` and `redundancy`.
pub(crate) fn kernel_fs(
    exec: &mut Exec,
    mnt: PathBuf,
    mut properties: BTreeMap<String, String>,
    redundancy: Option<f64>,
    tool: &str,
    version_arg: &str,
) -> Built {
    if let Some(o) = mount_options(&mnt) {
        properties.insert("mount_options".into(), o);
    }
    let versions = exec
        .version_of(tool, &[version_arg])
        .map(|v| (tool.to_string(), v))
        .into_iter()
        .collect();
    Built {
        target: mnt,
        backend: "kernel".into(),
        properties,
        versions,
        daemons: Vec::new(),
        redundancy,
    }
}

/// The mount options the kernel reports for `mnt`.
pub(crate) fn mount_options(mnt: &std::path::Path) -> Option<String> {
    let info = bakeoff_probe::target_info(mnt);
    info.mount_options
}

/// `key: value` lines (tune2fs -l) as a map, keys lower-cased with `_` for spaces.
pub(crate) fn colon_pairs(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            (
                k.trim().to_lowercase().replace(' ', "_"),
                v.trim().to_string(),
            )
        })
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .collect()
}
