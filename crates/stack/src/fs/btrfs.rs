//! btrfs over one or more devices: `mkfs.btrfs -d PROFILE -m PROFILE`, mount, and the profiles
//! read back from `btrfs filesystem df`.

use super::data_devices;
use super::{first_missing, kernel_fs, mkfs, mount, nothing, Built, Driver};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::{need_devices, StackSpec};
use bakeoff_core::job::KeyDoc;
use std::collections::BTreeMap;

/// btrfs's hooks.
pub const DRIVER: Driver = Driver {
    name: "btrfs",
    needs_root: true,
    common: &["size", "devices", "mkfs", "mount", "offset"],
    keys: &[
        KeyDoc {
            key: "profile",
            default: "mkfs's",
            help: "data profile: single, dup, raid0, raid1 (2 devices), raid10 (4 devices)",
        },
        KeyDoc {
            key: "metadata",
            default: "mkfs's",
            help: "metadata profile: single, dup, raid0, raid1, raid10",
        },
    ],
    check,
    roles: data_devices,
    missing_tool: || {
        first_missing(&[
            ("mkfs.btrfs", "btrfs-progs"),
            ("btrfs", "btrfs-progs"),
            ("losetup", "util-linux"),
        ])
    },
    build,
    prepare_cold: nothing,
    health: nothing,
};

/// Profiles are among those bakeoff knows, with the devices they need.
fn check(spec: &StackSpec) -> Result<(), String> {
    let profiles = ["single", "dup", "raid0", "raid1", "raid10"];
    for (key, value) in &spec.options {
        if !profiles.contains(&value.as_str()) {
            let allowed = profiles.join(", ");
            return Err(format!("{key}: '{value}' (allowed: {allowed})"));
        }
    }
    match spec.options.get("profile").map(String::as_str) {
        Some("raid1") => need_devices(spec, 2, "profile=raid1"),
        Some("raid10") => need_devices(spec, 4, "profile=raid10"),
        _ => Ok(()),
    }
}

/// `Data, RAID10: total=...` → ("data", "raid10").
fn profiles(df: &str) -> BTreeMap<String, String> {
    df.lines()
        .filter_map(|l| {
            let (kind, rest) = l.split_once(',')?;
            let profile = rest.split(':').next()?.trim().to_lowercase();
            Some((format!("{}_profile", kind.trim().to_lowercase()), profile))
        })
        .collect()
}

/// Builds btrfs across every data backing device.
fn build(spec: &StackSpec, backing: &mut [Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let devs: Vec<String> = backing.iter().map(|b| b.device().to_string()).collect();
    let mut args: Vec<&str> = vec!["-q", "-f"];
    if let Some(p) = spec.options.get("profile") {
        args.extend(["-d", p]);
    }
    if let Some(m) = spec.options.get("metadata") {
        args.extend(["-m", m]);
    }
    args.extend(spec.mkfs.iter().map(String::as_str));
    args.extend(devs.iter().map(String::as_str));
    mkfs(ctx, backing, "mkfs.btrfs", &args)?;
    // A multi-device btrfs mounts once the kernel knows all members.
    ctx.exec.try_run("btrfs", &["device", "scan"]);
    let mnt = mount(ctx, backing, &devs[0], "btrfs", spec.mount.as_deref())?;
    let m = mnt.to_string_lossy().to_string();
    let mut properties = profiles(&ctx.exec.run("btrfs", &["filesystem", "df", &m])?);
    properties.insert("devices".into(), devs.len().to_string());
    Ok(kernel_fs(
        ctx.exec,
        mnt,
        properties,
        "mkfs.btrfs",
        "--version",
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn profiles_from_filesystem_df() {
        let df = "Data, RAID10: total=1.00GiB, used=0.00B\nSystem, RAID10: total=64.00MiB, used=16.00KiB\nMetadata, RAID1: total=256.00MiB, used=128.00KiB\nGlobalReserve, single: total=3.25MiB, used=0.00B\n";
        let p = super::profiles(df);
        assert_eq!(p["data_profile"], "raid10");
        assert_eq!(p["metadata_profile"], "raid1");
    }
}
