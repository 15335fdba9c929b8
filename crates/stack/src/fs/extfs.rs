//! ext4: `mkfs.ext4` (lazy init off, so no background writes disturb measurements), mount,
//! `tune2fs -l` read back.

use super::driver::{Built, Driver, KERNEL_KEYS};
use super::shared::{colon_pairs, first_missing, kernel_fs, mkfs, mount};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::StackSpec;

/// ext4's hooks.
pub const DRIVER: Driver = Driver {
    common: KERNEL_KEYS,
    missing_tool: || {
        first_missing(&[
            ("mkfs.ext4", "e2fsprogs"),
            ("tune2fs", "e2fsprogs"),
            ("losetup", "util-linux"),
        ])
    },
    size_limits: super::limits::ext4,
    capacity: super::capacity::ext4,
    mkfs_bytes: super::limits::ext4_mkfs_bytes,
    mount_type: Some("ext4"),
    crash_state: Some(super::check::StateChecking::Kernel(super::check::ext4)),
    ..Driver::basic("ext4", build)
};

/// Builds ext4 on the first backing device.
fn build(spec: &StackSpec, backing: &mut [Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let dev = backing[0].device().to_string();
    let mut args = vec!["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"];
    args.extend(spec.mkfs.iter().map(String::as_str));
    args.push(&dev);
    mkfs(ctx, backing, "mkfs.ext4", &args)?;
    let mnt = mount(ctx, backing, &dev, "ext4", spec.mount.as_deref())?;
    let tune = colon_pairs(&ctx.exec.run("tune2fs", &["-l", &dev])?);
    let mut properties = std::collections::BTreeMap::new();
    for key in [
        "block_size",
        "filesystem_features",
        "inode_size",
        "journal_size",
        "filesystem_uuid",
    ] {
        if let Some(v) = tune.get(key) {
            properties.insert(key.to_string(), v.clone());
        }
    }
    // On one device (the first, whatever `devices=` says): nothing stored twice.
    Ok(kernel_fs(
        ctx.exec,
        mnt,
        properties,
        Some(1.0),
        "mkfs.ext4",
        "-V",
    ))
}
