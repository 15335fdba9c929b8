//! `resolve_devices` on real loop devices and a btrfs file system over two of them.
//!
//! Needs root, `/dev/loop-control` and `losetup`; without them the tests skip, except under
//! `CI=true`, where not being able to run is a failure. Everything created is undone by guards,
//! also when an assertion fails.

use bakeoff_probe::{resolve_devices, target_info, DeviceInfo, ROLE_BACKING, ROLE_STACK};
use bakeoff_testkit::command::{sh, succeeds};
use bakeoff_testkit::loop_device::{Attach, Image, LoopDevice, Mount};
use bakeoff_testkit::{privileged, require, serial, SCRATCH};
use std::path::Path;

/// A loop device over a fresh image of `mib` MiB, with or without direct I/O.
fn attach(mib: u64, direct_io: bool) -> LoopDevice {
    let how = Attach {
        direct_io,
        partscan: false,
    };
    LoopDevice::attach(Image::sparse(mib << 20), how)
}

/// What the images' directory's own devices look like as backing devices.
fn scratch_backing() -> Vec<DeviceInfo> {
    let mut devices = resolve_devices(Path::new(SCRATCH)).unwrap();
    for d in &mut devices {
        d.role = ROLE_BACKING.to_string();
    }
    devices
}

#[test]
fn loop_device_with_direct_io_and_its_backing_device() {
    let _serial = serial();
    if !privileged() {
        return;
    }
    let dev = attach(64, true);
    let devices = resolve_devices(dev.path()).unwrap();
    let backing_file = dev.image().canonicalize().unwrap();
    assert_eq!(
        devices[0],
        DeviceInfo {
            name: dev.name(),
            role: ROLE_STACK.to_string(),
            model: None,
            loop_backing: Some(backing_file.display().to_string()),
            loop_dio: Some(true),
        }
    );
    let backing = scratch_backing();
    assert_eq!(devices[1..], backing[..]);
    if std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|m| m.contains(" / / rw,relatime - ext4 /dev/vda "))
    {
        // This machine: the images' directory is on the root file system on vda.
        assert_eq!(devices[1].name, "vda");
        assert_eq!(devices[1].role, ROLE_BACKING);
    }
    assert_eq!(target_info(dev.path()).kind, "block_device");
}

#[test]
fn btrfs_over_two_loop_devices() {
    let _serial = serial();
    if !privileged() {
        return;
    }
    // The kernel loads the btrfs module on mount; only the tools can be missing.
    let tools = succeeds("mkfs.btrfs", &["--version"]) && succeeds("btrfs", &["--version"]);
    if !require(tools, "btrfs-progs") {
        return;
    }
    let (a, b) = (attach(128, false), attach(128, false));
    sh("mkfs.btrfs", &["-q", "-f", a.node(), b.node()]);
    let mount = Mount::new(a.path(), "defaults");
    let subvolume = mount.path().join("sub");
    sh(
        "btrfs",
        &["-q", "subvolume", "create", subvolume.to_str().unwrap()],
    );

    for path in [mount.path(), &subvolume] {
        let devices = resolve_devices(path).unwrap();
        let stack: Vec<_> = devices.iter().filter(|d| d.role == ROLE_STACK).collect();
        let mut names: Vec<_> = stack.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        let (name_a, name_b) = (a.name(), b.name());
        let mut expected = [name_a.as_str(), name_b.as_str()];
        expected.sort_unstable();
        assert_eq!(names, expected, "{path:?}: {devices:?}");
        assert!(stack.iter().all(|d| d.loop_dio == Some(false)));
        let backing: Vec<_> = devices
            .iter()
            .filter(|d| d.role == ROLE_BACKING)
            .cloned()
            .collect();
        assert_eq!(backing, scratch_backing(), "{path:?}");
        let info = target_info(path);
        assert_eq!(info.filesystem.as_deref(), Some("btrfs"));
        assert_eq!(info.mount_source.as_deref(), Some(a.node()));
    }
}

#[test]
fn page_cache_instances_count_pages_added_and_are_removed() {
    let _serial = serial();
    if !privileged() {
        return;
    }
    let instances = Path::new(bakeoff_probe::TRACEFS).join("instances");
    let ours = |dir: &std::fs::DirEntry| {
        let name = dir.file_name().to_string_lossy().into_owned();
        name.starts_with(&format!("bakeoff-{}-", std::process::id()))
    };
    let count_ours = || {
        std::fs::read_dir(&instances)
            .unwrap()
            .flatten()
            .filter(ours)
            .count()
    };
    let dir = tempfile::tempdir_in(SCRATCH).unwrap();
    let probe = bakeoff_probe::PageCacheProbe::start(dir.path()).unwrap();
    assert_eq!(count_ours(), 11, "one instance per folio order");
    let before = probe.read().unwrap();
    // Writing 1 MiB to a new file creates its 256 pages in the page cache.
    std::fs::write(dir.path().join("data"), vec![7u8; 1 << 20]).unwrap();
    let after = probe.read().unwrap();
    let added = after.added_pages - before.added_pages;
    assert!(added >= 256, "{added} pages added for 1 MiB written");
    drop(probe);
    assert_eq!(count_ours(), 0, "dropping the probe removes its instances");

    // An instance left by a process that no longer exists goes; ours stays.
    let stale = instances.join("bakeoff-4194999-0-added-o0");
    std::fs::create_dir(&stale).unwrap();
    let probe = bakeoff_probe::PageCacheProbe::start(dir.path()).unwrap();
    assert!(bakeoff_probe::remove_stale_instances() >= 1);
    assert!(!stale.exists());
    assert_eq!(count_ours(), 11, "a live process's instances stay");
    drop(probe);
}
