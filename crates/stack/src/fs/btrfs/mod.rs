//! btrfs over one or more devices: `mkfs.btrfs -d PROFILE -m PROFILE`, mount, and the profiles
//! read back from `btrfs filesystem df`.

pub mod spec;

use self::spec::BtrfsSpec;
use super::driver::{Built, Driver, KERNEL_KEYS};
use super::shared::{first_missing, kernel_fs, mkfs, mount};
use super::space::{parse_btrfs_df, parse_compsize, unreadable};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::exec::Exec;
use crate::spec::StackSpec;
use bakeoff_core::phaserecord::SpaceRecord;
use bakeoff_core::record::StackInfo;
use std::collections::BTreeMap;
use std::path::Path;

/// btrfs's hooks.
pub const DRIVER: Driver = Driver {
    common: KERNEL_KEYS,
    keys: spec::KEYS,
    check: spec::check,
    space,
    missing_tool: || {
        first_missing(&[
            ("mkfs.btrfs", "btrfs-progs"),
            ("btrfs", "btrfs-progs"),
            ("losetup", "util-linux"),
        ])
    },
    size_limits: super::limits::btrfs,
    crash_state: Some(super::check::StateChecking::Kernel(super::check::btrfs)),
    copy_on_write: true,
    capacity: super::capacity::btrfs,
    mkfs_bytes: super::limits::small_mkfs_bytes,
    mount_type: Some("btrfs"),
    ..Driver::basic("btrfs", build)
};

/// Space and compression from `compsize` (btrfs-compsize) where it is installed, else the
/// chunks' use from `btrfs filesystem df` (which cannot tell compression).
fn space(_: &StackInfo, target: &Path, exec: &mut Exec) -> Result<Option<SpaceRecord>, StackError> {
    let t = target.to_string_lossy();
    rustix::fs::sync();
    let (tool, out, read) = if crate::exec::installed("compsize") {
        let out = exec.run("compsize", &["-b", &t])?;
        ("compsize", out.clone(), parse_compsize(&out))
    } else {
        let out = exec.run("btrfs", &["filesystem", "df", "-b", &t])?;
        ("btrfs filesystem df", out.clone(), parse_btrfs_df(&out))
    };
    Ok(Some(read.ok_or_else(|| unreadable(tool, &t, &out))?))
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

/// `Total devices 4 FS bytes used ...` of `btrfs filesystem show`.
fn total_devices(show: &str) -> Option<u32> {
    let rest = show.split_once("Total devices")?.1;
    rest.split_whitespace().next()?.parse().ok()
}

/// Bytes the devices store per byte of data under the data `profile` over `devices` devices:
/// single and raid0 1, dup, raid1 and raid10 2, raid1c3 3, raid1c4 4, raid5 n/(n-1), raid6
/// n/(n-2); `None` for a profile not known here.
fn redundancy(profile: &str, devices: u32) -> Option<f64> {
    let n = f64::from(devices);
    match profile {
        "single" | "raid0" => Some(1.0),
        "dup" | "raid1" | "raid10" => Some(2.0),
        "raid1c3" => Some(3.0),
        "raid1c4" => Some(4.0),
        "raid5" if devices > 1 => Some(n / (n - 1.0)),
        "raid6" if devices > 2 => Some(n / (n - 2.0)),
        _ => None,
    }
}

/// Builds btrfs across every data backing device.
fn build(spec: &StackSpec, backing: &mut [Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let devs: Vec<String> = backing.iter().map(|b| b.device().to_string()).collect();
    let mut args: Vec<&str> = vec!["-q", "-f"];
    let asked: &BtrfsSpec = spec.typed();
    if let Some(p) = asked.data {
        args.extend(["-d", p.name()]);
    }
    if let Some(m) = asked.metadata {
        args.extend(["-m", m.name()]);
    }
    args.extend(spec.mkfs.iter().map(String::as_str));
    args.extend(devs.iter().map(String::as_str));
    mkfs(ctx, backing, "mkfs.btrfs", &args)?;
    // A multi-device btrfs mounts once the kernel knows all members.
    ctx.exec.try_run("btrfs", &["device", "scan"]);
    let mnt = mount(ctx, backing, &devs[0], "btrfs", spec.mount.as_deref())?;
    let m = mnt.to_string_lossy().to_string();
    let mut properties = profiles(&ctx.exec.run("btrfs", &["filesystem", "df", &m])?);
    let show = ctx.exec.run("btrfs", &["filesystem", "show", &m])?;
    let devices = total_devices(&show);
    if let Some(n) = devices {
        properties.insert("devices".into(), n.to_string());
    }
    let data = properties.get("data_profile").map(String::as_str);
    let redundancy = data.zip(devices).and_then(|(p, n)| redundancy(p, n));
    let (tool, arg) = ("mkfs.btrfs", "--version");
    Ok(kernel_fs(ctx.exec, mnt, properties, redundancy, tool, arg))
}

#[cfg(test)]
mod tests {
    #[test]
    fn profiles_from_filesystem_df() {
        let df = "Data, RAID10: total=1.00GiB, used=0.00B\nSystem, RAID10: total=64.00MiB, used=16.00KiB\nMetadata, RAID1: total=256.00MiB, used=128.00KiB\nGlobalReserve, single: total=3.25MiB, used=0.00B\n";
        let p = super::profiles(df);
        assert_eq!(p["data_profile"], "raid10");
        assert_eq!(p["metadata_profile"], "raid1");
        assert_eq!(super::redundancy(&p["data_profile"], 4), Some(2.0));
    }

    #[test]
    fn redundancy_from_the_data_profile_and_the_devices_read_back() {
        let show = "Label: none  uuid: cad6ad90-938f-440d-bacf-bd3b4a4bd329\n\
            \tTotal devices 2 FS bytes used 144.00KiB\n\
            \tdevid    1 size 300.00MiB used 104.00MiB path /dev/loop0\n";
        assert_eq!(super::total_devices(show), Some(2));
        let df = "Data, single: total=8.00MiB, used=0.00B\nMetadata, DUP: total=32.00MiB, used=1.00MiB\n";
        let p = super::profiles(df);
        assert_eq!(super::redundancy(&p["data_profile"], 1), Some(1.0));
        assert_eq!(super::redundancy("dup", 1), Some(2.0));
        assert_eq!(super::redundancy("raid1", 2), Some(2.0));
        assert_eq!(super::redundancy("raid0", 4), Some(1.0));
        assert_eq!(super::redundancy("raid5", 3), Some(1.5));
        assert_eq!(super::redundancy("raid6", 4), Some(2.0));
        assert_eq!(super::redundancy("raid1c3", 3), Some(3.0));
        assert_eq!(super::redundancy("raid5", 1), None);
        assert_eq!(super::redundancy("mystery", 2), None);
    }
}
