//! Each stack type is created on loop devices, its properties read back, and destroyed with
//! nothing left behind (root; in CI for real).

mod common;
use bakeoff_stack::{Options, Stack, StackSpec};
use common::privileged;
use std::path::Path;

fn options(images: &Path) -> Options {
    let mut o = Options {
        images: images.to_path_buf(),
        ..Options::default()
    };
    o.backing.size = 300 << 20;
    o
}

/// The state dir (one per test process: the variable is process-wide) and an images dir.
fn scratch() -> (&'static Path, tempfile::TempDir) {
    static STATE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let state = STATE.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        std::env::set_var("BAKEOFF_STATE_DIR", d.path());
        d
    });
    (
        state.path(),
        tempfile::Builder::new()
            .prefix("bakeoff-test-")
            .tempdir_in("/var/tmp")
            .unwrap(),
    )
}

fn assert_gone(stack_images: &[String], mnt: &Path) {
    for img in stack_images {
        assert!(
            bakeoff_stack::undo::loops_backed_by(Path::new(img)).is_empty(),
            "{img} still attached"
        );
        assert!(!Path::new(img).exists(), "{img} not removed");
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !mounts.contains(&*mnt.to_string_lossy()),
        "{} still mounted",
        mnt.display()
    );
}

fn build_and_check(spec: &str, images: &Path, expect: &[(&str, &str)]) {
    let stack = Stack::create(&StackSpec::parse(spec).unwrap(), &options(images))
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    for (key, value) in expect {
        let got = stack
            .info
            .properties
            .get(*key)
            .unwrap_or_else(|| panic!("{spec}: no {key} in {:?}", stack.info.properties));
        assert!(
            got.contains(value),
            "{spec}: {key} = {got}, expected {value}"
        );
    }
    assert!(
        stack.info.backing.iter().all(|b| b.loop_dio == Some(true)),
        "{spec}: loop dio off"
    );
    let memory = stack.spec.kind == bakeoff_stack::StackKind::Tmpfs;
    assert_eq!(
        stack.devices.is_empty(),
        memory,
        "{spec}: devices for the probes {:?}",
        stack.devices
    );
    // The target takes a write.
    if !stack.is_device {
        std::fs::write(stack.target.join("probe"), b"x").unwrap();
    }
    let images = common::images_of(&stack);
    let mnt = stack.target.clone();
    stack.destroy().unwrap();
    assert_gone(&images, &mnt);
}

#[test]
fn kernel_file_systems_are_built_as_specified_and_removed() {
    if !privileged() {
        return;
    }
    let (state, images) = scratch();
    build_and_check(
        "ext4:mount=noatime,mkfs=-b 4096",
        images.path(),
        &[("block_size", "4096"), ("mount_options", "noatime")],
    );
    build_and_check(
        "xfs:mkfs=-b size=4096,mount=noatime",
        images.path(),
        &[("block_size", "4096"), ("mount_options", "noatime")],
    );
    build_and_check(
        "btrfs:devices=4,profile=raid10",
        images.path(),
        &[("data_profile", "raid10"), ("devices", "4")],
    );
    build_and_check(
        "tmpfs:size=64m",
        images.path(),
        &[("mount_options", "size=65536k")],
    );
    build_and_check("raw", images.path(), &[("size_bytes", "314572800")]);
    let mine = format!("-{}-", std::process::id());
    let ledgers = walk(&state.join("ledger"));
    assert!(
        !ledgers
            .iter()
            .any(|l| l.to_string_lossy().contains(&mine) && l.to_string_lossy().contains("ext4-")),
        "{ledgers:?}"
    );
    assert!(!images.path().exists() || std::fs::read_dir(images.path()).unwrap().count() == 0);
}

#[test]
fn a_failed_build_undoes_what_it_did() {
    if !privileged() {
        return;
    }
    let (_state, images) = scratch();
    // mkfs.ext4 refuses an option it does not know: the loop device and image must go.
    let err = Stack::create(
        &StackSpec::parse("ext4:mkfs=--no-such-option").unwrap(),
        &options(images.path()),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("mkfs.ext4"), "{err}");
    let left: Vec<_> = walk(images.path());
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}
