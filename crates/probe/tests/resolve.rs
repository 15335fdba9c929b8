//! `resolve_devices` and `target_info` on this machine's live file systems.

use bakeoff_probe::{parse_mountinfo, resolve_devices, target_info, Probe, ROLE_STACK};
use std::path::Path;

#[test]
fn tmpfs_has_no_devices() {
    if !Path::new("/dev/shm").is_dir() {
        return;
    }
    assert_eq!(resolve_devices(Path::new("/dev/shm")).unwrap(), vec![]);
}

/// The mount source of `/`, e.g. `/dev/vda`.
fn root_source() -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mounts = parse_mountinfo(&text);
    Some(
        mounts
            .iter()
            .rfind(|m| m.mount_point == "/")?
            .source
            .clone(),
    )
}

#[test]
fn root_is_on_a_stack_device() {
    let devices = resolve_devices(Path::new("/")).unwrap();
    if root_source().is_some_and(|s| s.starts_with("/dev/") && !s.starts_with("/dev/root")) {
        assert!(!devices.is_empty(), "{:?}", root_source());
    }
    for d in &devices {
        assert_eq!(d.role, ROLE_STACK, "{d:?}");
        assert!(Path::new("/sys/block").join(&d.name).exists(), "{d:?}");
    }
    // This machine: ext4 directly on /dev/vda.
    if root_source().as_deref() == Some("/dev/vda") {
        let names: Vec<_> = devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["vda"]);
        assert_eq!(
            (devices[0].loop_backing.as_ref(), devices[0].loop_dio),
            (None, None)
        );
    }
    // A block device node resolves to the same device, and its target has no file system.
    if let Some(dev) = devices.first() {
        let node = Path::new("/dev").join(&dev.name);
        if node.exists() {
            assert_eq!(resolve_devices(&node).unwrap()[0].name, dev.name);
            let info = target_info(&node);
            assert_eq!(
                (info.kind.as_str(), info.filesystem),
                ("block_device", None)
            );
        }
    }
    let probe = Probe::new(devices.clone());
    let snap = probe.snapshot();
    assert!(snap.disks.iter().all(Option::is_some), "{devices:?}");
}

#[test]
fn missing_path_is_an_error() {
    let err = resolve_devices(Path::new("/definitely/not/here")).unwrap_err();
    assert!(err.to_string().contains("/definitely/not/here"));
}
