//! `resolve_devices` on real loop devices and a btrfs file system over two of them.
//!
//! Needs root, `/dev/loop-control` and `losetup`; without them the tests skip, except under
//! `CI=true`, where not being able to run is a failure. Everything created is undone by guards,
//! also when an assertion fails.

use bakeoff_probe::{resolve_devices, target_info, DeviceInfo, ROLE_BACKING, ROLE_STACK};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Loop setup and mounts are done one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs a command, returning its trimmed stdout; panics with its stderr if it fails.
fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} {args:?} failed: {stderr}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The effective uid, from `/proc/self/status`.
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// Whether loop devices can be set up here. Under `CI=true`, not being able to is a failure.
fn can_use_loop_devices() -> bool {
    let root = effective_uid() == Some(0);
    let control = Path::new("/dev/loop-control").exists();
    let losetup = succeeds("losetup", &["--version"]);
    if root && control && losetup {
        return true;
    }
    let why = format!("needs root ({root}), /dev/loop-control ({control}) and losetup ({losetup})");
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{why}; CI=true, so this fails instead of skipping"
    );
    eprintln!("skipping: {why}");
    false
}

/// A sparse image file under the temp directory, removed on drop.
struct Image(PathBuf);

impl Image {
    fn create(tag: &str, mib: u64) -> Image {
        let name = format!("bakeoff-probe-{tag}-{}.img", std::process::id());
        let path = std::env::temp_dir().join(name);
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(mib << 20).unwrap();
        Image(path)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// An attached loop device, detached on drop.
struct Loop {
    node: String,
}

impl Loop {
    fn attach(image: &Image, dio: bool) -> Loop {
        let dio = if dio {
            "--direct-io=on"
        } else {
            "--direct-io=off"
        };
        let file = image.0.to_str().unwrap();
        let node = run("losetup", &["--find", "--show", dio, file]);
        assert!(node.starts_with("/dev/loop"), "{node}");
        Loop { node }
    }

    fn name(&self) -> &str {
        self.node.trim_start_matches("/dev/")
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if !succeeds("losetup", &["-d", &self.node]) {
            eprintln!("warning: could not detach {}", self.node);
        }
    }
}

/// A mounted file system on a fresh directory, unmounted (and the directory removed) on drop.
struct Mount(PathBuf);

impl Mount {
    fn new(device: &str, tag: &str) -> Mount {
        let dir = std::env::temp_dir().join(format!("bakeoff-probe-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mount = Mount(dir);
        run("mount", &[device, mount.0.to_str().unwrap()]);
        mount
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let dir = self.0.to_str().unwrap_or_default();
        if succeeds("mountpoint", &["-q", dir]) && !succeeds("umount", &[dir]) {
            eprintln!("warning: could not unmount {dir}");
        }
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// What the temp directory's own devices look like as backing devices.
fn temp_dir_backing() -> Vec<DeviceInfo> {
    let mut devices = resolve_devices(&std::env::temp_dir()).unwrap();
    for d in &mut devices {
        d.role = ROLE_BACKING.to_string();
    }
    devices
}

#[test]
fn loop_device_with_direct_io_and_its_backing_device() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_use_loop_devices() {
        return;
    }
    let image = Image::create("loop", 64);
    let dev = Loop::attach(&image, true);
    let devices = resolve_devices(Path::new(&dev.node)).unwrap();
    let backing_file = image.0.canonicalize().unwrap();
    assert_eq!(
        devices[0],
        DeviceInfo {
            name: dev.name().to_string(),
            role: ROLE_STACK.to_string(),
            model: None,
            loop_backing: Some(backing_file.display().to_string()),
            loop_dio: Some(true),
        }
    );
    let backing = temp_dir_backing();
    assert_eq!(devices[1..], backing[..]);
    if std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|m| m.contains(" / / rw,relatime - ext4 /dev/vda "))
    {
        // This machine: the temp directory is on the root file system on vda.
        assert_eq!(devices[1].name, "vda");
        assert_eq!(devices[1].role, ROLE_BACKING);
    }
    assert_eq!(target_info(Path::new(&dev.node)).kind, "block_device");
}

#[test]
fn btrfs_over_two_loop_devices() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_use_loop_devices() {
        return;
    }
    // The kernel loads the btrfs module on mount; only the tools can be missing.
    if !succeeds("mkfs.btrfs", &["--version"]) || !succeeds("btrfs", &["--version"]) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "needs btrfs-progs; CI=true, so this fails instead of skipping"
        );
        eprintln!("skipping: needs btrfs-progs");
        return;
    }
    let (image_a, image_b) = (Image::create("btrfs-a", 128), Image::create("btrfs-b", 128));
    let (a, b) = (Loop::attach(&image_a, false), Loop::attach(&image_b, false));
    run("mkfs.btrfs", &["-q", "-f", &a.node, &b.node]);
    let mount = Mount::new(&a.node, "btrfs-mnt");
    let subvolume = mount.0.join("sub");
    run(
        "btrfs",
        &["-q", "subvolume", "create", subvolume.to_str().unwrap()],
    );

    for path in [&mount.0, &subvolume] {
        let devices = resolve_devices(path).unwrap();
        let stack: Vec<_> = devices.iter().filter(|d| d.role == ROLE_STACK).collect();
        let mut names: Vec<_> = stack.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        let mut expected = [a.name(), b.name()];
        expected.sort_unstable();
        assert_eq!(names, expected, "{path:?}: {devices:?}");
        assert!(stack.iter().all(|d| d.loop_dio == Some(false)));
        let backing: Vec<_> = devices
            .iter()
            .filter(|d| d.role == ROLE_BACKING)
            .cloned()
            .collect();
        assert_eq!(backing, temp_dir_backing(), "{path:?}");
        let info = target_info(path);
        assert_eq!(info.filesystem.as_deref(), Some("btrfs"));
        assert_eq!(info.mount_source.as_deref(), Some(a.node.as_str()));
    }
}
