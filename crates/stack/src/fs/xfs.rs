//! xfs: `mkfs.xfs -f`, mount, `xfs_info` read back.

use super::driver::{Built, Driver, KERNEL_KEYS};
use super::shared::{first_missing, kernel_fs, mkfs, mount};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::StackSpec;
use std::collections::BTreeMap;

/// xfs's hooks.
pub const DRIVER: Driver = Driver {
    common: KERNEL_KEYS,
    missing_tool: || {
        first_missing(&[
            ("mkfs.xfs", "xfsprogs"),
            ("xfs_info", "xfsprogs"),
            ("losetup", "util-linux"),
        ])
    },
    size_limits: super::limits::xfs,
    capacity: super::capacity::xfs,
    mkfs_bytes: super::limits::xfs_mkfs_bytes,
    mount_type: Some("xfs"),
    crash_state: Some(super::check::StateChecking::Kernel(super::check::xfs)),
    ..Driver::basic("xfs", build)
};

/// `bsize=4096` style pairs of one `xfs_info` section (`data`, `log`, `naming`, ...).
fn section_value(info: &str, section: &str, key: &str) -> Option<String> {
    let mut in_section = false;
    for line in info.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if !line.starts_with(' ') && !line.starts_with('\t') {
            in_section = head == section || head.starts_with(&format!("{section}="));
        }
        if in_section {
            if let Some(v) = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{key}=")))
            {
                return Some(v.trim_end_matches(',').to_string());
            }
        }
    }
    None
}

/// Builds xfs on the first backing device.
fn build(spec: &StackSpec, backing: &mut [Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let dev = backing[0].device().to_string();
    let mut args = vec!["-q", "-f"];
    args.extend(spec.mkfs.iter().map(String::as_str));
    args.push(&dev);
    mkfs(ctx, backing, "mkfs.xfs", &args)?;
    let mnt = mount(ctx, backing, &dev, "xfs", spec.mount.as_deref())?;
    let info = ctx.exec.run("xfs_info", &[&mnt.to_string_lossy()])?;
    let mut properties = BTreeMap::new();
    for (section, key, name) in [
        ("data", "bsize", "block_size"),
        ("meta-data", "isize", "inode_size"),
        ("log", "bsize", "log_block_size"),
        ("data", "sunit", "sunit"),
    ] {
        if let Some(v) = section_value(&info, section, key) {
            properties.insert(name.to_string(), v);
        }
    }
    // On one device (the first, whatever `devices=` says): nothing stored twice.
    Ok(kernel_fs(
        ctx.exec,
        mnt,
        properties,
        Some(1.0),
        "mkfs.xfs",
        "-V",
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_sections_of_xfs_info() {
        let info = "meta-data=/dev/loop0 isize=512 agcount=4, agsize=16384 blks\n         =  sectsz=512 attr=2\ndata     =     bsize=4096   blocks=65536, imaxpct=25\n         =     sunit=0      swidth=0 blks\nlog      =internal log   bsize=4096   blocks=16384\n";
        assert_eq!(
            super::section_value(info, "data", "bsize").as_deref(),
            Some("4096")
        );
        assert_eq!(
            super::section_value(info, "meta-data", "isize").as_deref(),
            Some("512")
        );
        assert_eq!(
            super::section_value(info, "log", "bsize").as_deref(),
            Some("4096")
        );
    }
}
