//! Each file system's own read-only check (`Driver::fs_check`) on an unmounted loop device:
//! clean after files were written and the file system unmounted, and damage named after its
//! metadata was broken by the file system's own debugger (root; in CI for real).

use bakeoff_stack::exec::Exec;
use bakeoff_stack::fs::check::StateChecking;
use bakeoff_stack::spec::StackKind;
use bakeoff_testkit::command::sh;
use bakeoff_testkit::loop_device::{mkfs, LoopDevice, Mount};
use bakeoff_testkit::privileged_turn;
use std::path::Path;

/// `fs` on a fresh 300 MiB loop device, with a few files written and unmounted.
fn written(fs: &str) -> LoopDevice {
    let device = LoopDevice::new(300 << 20);
    mkfs(fs, device.path());
    {
        let mount = Mount::new(device.path(), "defaults");
        for i in 0..20 {
            std::fs::write(mount.path().join(format!("f{i}")), vec![i as u8; 100_000]).unwrap();
        }
    }
    device
}

fn check(fs: &str, device: &Path) -> bakeoff_stack::fs::check::FsCheck {
    let kind = StackKind::named(fs).unwrap();
    let Some(StateChecking::Kernel(check)) = kind.driver().crash_state else {
        panic!("{fs} has a check of its unmounted devices");
    };
    check(&[device.to_path_buf()], &mut Exec::default()).unwrap()
}

#[test]
fn ext4_xfs_and_btrfs_checks_pass_a_clean_file_system_and_name_damage() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    // ext4: the root inode cleared.
    let ext4 = written("ext4");
    let clean = check("ext4", ext4.path());
    assert!(
        clean.clean && clean.command.starts_with("e2fsck -f -n"),
        "{clean:?}"
    );
    sh("debugfs", &["-w", "-R", "clri <2>", ext4.node()]);
    let damaged = check("ext4", ext4.path());
    assert!(
        !damaged.clean && damaged.found.contains("Root inode"),
        "{damaged:?}"
    );

    // xfs: the root inode's mode cleared.
    let xfs = written("xfs");
    assert!(check("xfs", xfs.path()).clean);
    let root = sh("xfs_db", &["-c", "sb 0", "-c", "p rootino", xfs.node()]);
    let root = root.trim_start_matches("rootino = ");
    let inode = format!("inode {root}");
    sh(
        "xfs_db",
        &["-x", "-c", &inode, "-c", "write core.mode 0", xfs.node()],
    );
    let damaged = check("xfs", xfs.path());
    assert!(
        !damaged.clean && damaged.found.contains("root inode"),
        "{damaged:?}"
    );

    // btrfs: the primary superblock (at 64 KiB) zeroed.
    let btrfs = written("btrfs");
    assert!(check("btrfs", btrfs.path()).clean);
    sh(
        "dd",
        &[
            "if=/dev/zero",
            &format!("of={}", btrfs.node()),
            "bs=4096",
            "seek=16",
            "count=1",
            "conv=notrunc,fsync",
            "status=none",
        ],
    );
    let damaged = check("btrfs", btrfs.path());
    assert!(!damaged.clean, "{damaged:?}");
    eprintln!("btrfs damaged: {damaged:?}");

    // Types without a check say so.
    assert!(StackKind::named("tmpfs")
        .unwrap()
        .driver()
        .crash_state
        .is_none());
}
