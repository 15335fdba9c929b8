//! Each stack type is created on loop devices, its properties read back, and destroyed with
//! nothing left behind (root; in CI for real).

mod common;
use bakeoff_stack::fs::{room, Room};
use bakeoff_stack::{Stack, StackSpec};
use bakeoff_testkit::command::which;
use bakeoff_testkit::{privileged, process_state_dir, walk};
use common::{options, scratch};
use std::path::Path;

/// The size of each image under a stack.
const IMAGE_BYTES: u64 = 300 << 20;

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

/// Builds `spec`, checks the properties read back and the layout's redundancy, destroys it.
fn build_and_check(spec: &str, images: &Path, expect: &[(&str, &str)], redundancy: Option<f64>) {
    let stack = Stack::create(
        &StackSpec::parse(spec).unwrap(),
        &options(images, IMAGE_BYTES),
    )
    .unwrap_or_else(|e| panic!("{spec}: {e}"));
    assert_eq!(stack.info.redundancy, redundancy, "{spec}");
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
    let memory = matches!(room(&stack.spec), Room::Memory(_));
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
    let (state, images) = (process_state_dir(), scratch());
    build_and_check(
        "ext4:mount=noatime,mkfs=-b 4096",
        images.path(),
        &[("block_size", "4096"), ("mount_options", "noatime")],
        Some(1.0),
    );
    build_and_check(
        "xfs:mkfs=-b size=4096,mount=noatime",
        images.path(),
        &[("block_size", "4096"), ("mount_options", "noatime")],
        Some(1.0),
    );
    build_and_check(
        "btrfs:devices=4,profile=raid10",
        images.path(),
        &[("data_profile", "raid10"), ("devices", "4")],
        Some(2.0),
    );
    build_and_check(
        "btrfs:devices=2,profile=raid0",
        images.path(),
        &[("data_profile", "raid0"), ("devices", "2")],
        Some(1.0),
    );
    build_and_check(
        "tmpfs:size=64m",
        images.path(),
        &[("mount_options", "size=65536k")],
        None,
    );
    build_and_check(
        "raw",
        images.path(),
        &[("size_bytes", "314572800")],
        Some(1.0),
    );
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
    let images = scratch();
    // mkfs.ext4 refuses an option it does not know: the loop device and image must go.
    let err = Stack::create(
        &StackSpec::parse("ext4:mkfs=--no-such-option").unwrap(),
        &options(images.path(), IMAGE_BYTES),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("mkfs.ext4"), "{err}");
    let left: Vec<_> = walk(images.path());
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A daemon started on a live stack by a caller (as a database server will be): run as
/// another user, its stop in the ledger, its health and death seen by the stack, stopped by
/// its own command at teardown.
#[test]
fn a_daemon_started_on_a_live_stack_is_checked_and_stopped() {
    use bakeoff_stack::daemon::{DaemonStart, StopBy};
    use bakeoff_stack::exec::{Cmd, RunAs};
    if !privileged() {
        return;
    }
    let images = scratch();
    let mut stack = Stack::create(
        &StackSpec::parse("tmpfs:size=16m").unwrap(),
        &options(images.path(), IMAGE_BYTES),
    )
    .unwrap();
    let run = stack.target.join("run");
    let run_s = run.to_str().unwrap();
    let mkdir = Cmd::new("install", &["-d", "-o", "65534", "-g", "65534", run_s]);
    stack.run_command(&mkdir).unwrap();
    let listed = stack.info.commands.iter().any(|c| c.argv[0] == "install");
    assert!(listed, "a caller's command is in the stack's record");
    let nobody = Some(RunAs {
        uid: 65534,
        gid: 65534,
    });
    let (pidfile, stopped) = (run.join("pid"), run.join("stopped"));
    let script = format!(
        "sleep 600 >/dev/null 2>&1 & echo $! > {}",
        pidfile.display()
    );
    let stop = format!(
        "touch {}; kill $(cat {})",
        stopped.display(),
        pidfile.display()
    );
    let start = DaemonStart {
        name: "sleeper".into(),
        exe: std::fs::canonicalize(which("sleep")).unwrap(),
        command: Cmd::new("sh", &["-c", &script]).user(nobody),
        pidfile: pidfile.clone(),
        stop: StopBy::Command {
            argv: vec!["sh".into(), "-c".into(), stop],
            user: nobody,
        },
        ready_within: std::time::Duration::from_secs(10),
        launched: None,
    };
    let pid = stack.start_daemon(start).unwrap().pid();
    let owner = std::fs::metadata(format!("/proc/{pid}")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&owner), 65534);
    assert_eq!(stack.daemons().len(), 1);
    assert_eq!(stack.info.daemons[0].name, "sleeper");
    assert_eq!(stack.info.daemons[0].pid, pid);
    assert_eq!(stack.failure_cause(), None);
    stack.health().unwrap();
    signal(pid, rustix::process::Signal::STOP);
    let cause = wait_for_cause(&stack);
    assert!(
        cause.contains("sleeper daemon") && cause.contains("was stopped"),
        "{cause}"
    );
    assert!(stack.health().is_err());
    signal(pid, rustix::process::Signal::CONT);
    let cont = std::time::Instant::now();
    while stack.failure_cause().is_some() && cont.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(stack.failure_cause(), None);
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("stopped");
    // Teardown removes the tmpfs: keep the stop command's mark somewhere that stays.
    std::os::unix::fs::chown(marker_dir.path(), Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::symlink(&marker, &stopped).unwrap();
    stack.destroy().unwrap();
    assert!(!bakeoff_stack::daemon::alive(pid), "the daemon still runs");
    let mark = std::fs::metadata(&marker).expect("the stop command did not run");
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&mark), 65534);
}

#[test]
fn a_type_without_devices_refuses_a_device() {
    if !privileged() {
        return;
    }
    let images = scratch();
    let mut o = options(images.path(), IMAGE_BYTES);
    o.backing.devices = vec!["/dev/loop-no-such".into()];
    o.backing.destroy_data_on = o.backing.devices.clone();
    let err = Stack::create(&StackSpec::parse("tmpfs").unwrap(), &o)
        .err()
        .expect("tmpfs on a --device");
    assert!(err.to_string().contains("sits on no device"), "{err}");
}

fn signal(pid: i32, signal: rustix::process::Signal) {
    let p = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::kill_process(p, signal).unwrap();
}

fn wait_for_cause(stack: &Stack) -> String {
    let start = std::time::Instant::now();
    loop {
        if let Some(cause) = stack.failure_cause() {
            return cause;
        }
        assert!(start.elapsed().as_secs() < 5, "no failure cause");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn space_is_read_back_with_the_compression_the_file_system_reports() {
    if !privileged() {
        return;
    }
    process_state_dir();
    let images = scratch();
    // 8 MiB of text that compresses well.
    let text = "bakeoff compares storage stacks; ".repeat(256 << 10);
    let compsize = bakeoff_stack::exec::installed("compsize");
    for spec in ["ext4", "btrfs:mount=compress=zstd", "raw"] {
        let o = options(images.path(), IMAGE_BYTES);
        let mut stack = Stack::create(&StackSpec::parse(spec).unwrap(), &o).unwrap();
        if !stack.is_device {
            std::fs::write(stack.target.join("text"), &text).unwrap();
        }
        let space = stack.space().unwrap_or_else(|e| panic!("{spec}: {e}"));
        match (spec, space) {
            ("raw", None) => {}
            ("ext4", Some(s)) => {
                assert_eq!((s.source.as_str(), s.compress_ratio), ("df", None));
                assert!(s.used_bytes.unwrap() >= text.len() as u64, "{s:?}");
            }
            (_, Some(s)) if compsize => {
                assert_eq!(s.source, "compsize");
                assert!(s.compress_ratio.unwrap() > 2.0, "{s:?}");
                assert_eq!(s.logical_bytes, Some(text.len() as u64), "{s:?}");
            }
            (_, Some(s)) => assert_eq!(s.source, "btrfs filesystem df"),
            (spec, s) => panic!("{spec}: {s:?}"),
        }
        stack.destroy().unwrap();
    }
}
