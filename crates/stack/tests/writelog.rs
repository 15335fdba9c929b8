//! The write log under real file systems (root; in CI for real): an image on the recorder's
//! FUSE mount, a loop device over it, mkfs, mount, files written and synced, unmounted and
//! detached. Then the whole log applied to the base reproduces the final backing image byte for
//! byte; the state "up to the last flush" passes the file system's own check; the state at the
//! moment a sync returned holds every file synced by then; and drawn crash states recover
//! (mount, unmount) and pass the check. Drop guards unmount and detach also when a step fails.

use bakeoff_stack::crash::{
    generate, state_at, Base, CrashOptions, LogIndex, Materialiser, StateKind,
};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::writelog::{monotonic_ns, Op, Recorder, RecorderOptions, Recording};
use bakeoff_testkit::command::{sh, succeeds};
use bakeoff_testkit::loop_device::{mkfs, LoopDevice, Mount};
use bakeoff_testkit::{privileged_turn, require, scratch_dir};
use std::path::{Path, PathBuf};
use std::time::Instant;

const IMAGE_BYTES: u64 = 320 << 20;
const NAME: &str = "disk0.img";

/// A file system's name, its check (which must exit 0) and whether the recorder starts after
/// mkfs (from a checkpoint) rather than before it.
struct Fs {
    name: &'static str,
    check: &'static [&'static str],
    checkpoint_after_mkfs: bool,
}

const EXT4: Fs = Fs {
    name: "ext4",
    check: &["e2fsck", "-fn"],
    checkpoint_after_mkfs: false,
};
const XFS: Fs = Fs {
    name: "xfs",
    check: &["xfs_repair", "-n"],
    checkpoint_after_mkfs: true,
};

/// The files of one round: name and content.
fn files(round: &str, count: u8) -> Vec<(String, Vec<u8>)> {
    (0..count)
        .map(|i| {
            let bytes: Vec<u8> = (0..(1u32 << 20) + 4096 * u32::from(i))
                .map(|b| (b as u8) ^ i ^ round.as_bytes()[0])
                .collect();
            (format!("{round}-{i}"), bytes)
        })
        .collect()
}

/// What a recorded run left.
struct Run {
    recording: Recording,
    /// Records in the log when the sync after round A returned, and the time it returned
    /// (`CLOCK_MONOTONIC`, as a database client notes its acknowledged commits).
    after_sync: u64,
    synced_ns: u64,
    /// Records in the log once the file system was made.
    after_mkfs: u64,
    /// The base the log starts from.
    base: Base,
    /// Wall-clock of mkfs, the writes, the syncs and the unmount.
    elapsed: std::time::Duration,
}

/// Records `fs` being made (unless from a checkpoint), mounted, written (round A synced, round
/// B not) and unmounted.
fn record(fs: &Fs, dir: &Path, ledger: &mut Ledger, exec: &mut Exec) -> Run {
    let backing = dir.join("backing");
    std::fs::create_dir(&backing).unwrap();
    let image = std::fs::File::create(backing.join(NAME)).unwrap();
    image.set_len(IMAGE_BYTES).unwrap();
    drop(image);
    let opts = RecorderOptions {
        backing_dir: backing,
        images: vec![NAME.into()],
        mountpoint: dir.join("fuse"),
        log: dir.join("mkfs.log"),
    };
    let mut recorder = Recorder::start(&opts, ledger).unwrap();
    let device = recorder.attach_loop(NAME, exec, ledger).unwrap();
    assert!(device.direct_io, "loop direct I/O over the FUSE mount");
    let start = Instant::now();
    mkfs(fs.name, Path::new(&device.device));
    let mut base = Base::Zeros;
    if fs.checkpoint_after_mkfs {
        let (dir_base, log) = (dir.join("base"), dir.join("run.log"));
        std::fs::create_dir(&dir_base).unwrap();
        sh("blockdev", &["--flushbufs", &device.device]);
        recorder.checkpoint(&dir_base, &log).unwrap();
        base = Base::Dir(dir_base);
    }
    let after_mkfs = recorder.records();
    let (mut after_sync, mut synced_ns) = (0, 0);
    write_rounds(Path::new(&device.device), || {
        synced_ns = monotonic_ns();
        after_sync = recorder.records();
    });
    let elapsed = start.elapsed();
    let recording = recorder.finish(exec).unwrap();
    Run {
        recording,
        after_sync,
        synced_ns,
        after_mkfs,
        base,
        elapsed,
    }
}

/// Mounts the file system on `device`, writes round A, syncs (then calls `on_sync`), writes
/// round B without syncing, and unmounts.
fn write_rounds(device: &Path, mut on_sync: impl FnMut()) {
    let mount = Mount::new(device, "defaults");
    for (name, bytes) in files("a", 8) {
        std::fs::write(mount.path().join(name), bytes).unwrap();
    }
    sh("sync", &["-f", &mount.target()]);
    on_sync();
    for (name, bytes) in files("b", 4) {
        std::fs::write(mount.path().join(name), bytes).unwrap();
    }
}

/// The same mkfs and rounds on a plain loop device (direct I/O, no recorder): the time they
/// take without the write log, for the overhead printed beside it (informational).
fn baseline(fs: &Fs) -> std::time::Duration {
    let device = LoopDevice::new(IMAGE_BYTES);
    let start = Instant::now();
    mkfs(fs.name, device.path());
    write_rounds(device.path(), || {});
    start.elapsed()
}

/// Mounts the image `file` on a plain loop device, hands the mount to `check_files`,
/// unmounts, and runs the file system's check, which must pass.
fn recovers(fs: &Fs, file: &Path, what: &str, check_files: impl FnOnce(&Path)) {
    let device = LoopDevice::over(file);
    {
        let mount = Mount::new(device.path(), "defaults");
        check_files(mount.path());
    }
    let out = std::process::Command::new(fs.check[0])
        .args(&fs.check[1..])
        .arg(device.node())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{what}: {:?} failed: {}{}",
        fs.check,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The file system's check on the image `file` without mounting it first.
fn checks_clean(fs: &Fs, file: &Path, what: &str) {
    let device = LoopDevice::over(file);
    let args: Vec<&str> = fs.check[1..]
        .iter()
        .copied()
        .chain([device.node()])
        .collect();
    assert!(succeeds(fs.check[0], &args), "{what}: {:?} fails", fs.check);
}

fn round_trip(fs: &Fs) {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    if !require(
        Path::new("/dev/fuse").exists(),
        "/dev/fuse (the fuse module)",
    ) {
        return;
    }
    let dir = scratch_dir();
    let mut ledger = Ledger::create(&dir.path().join("state"), "writelog").unwrap();
    let mut exec = Exec::default();
    let run = record(fs, dir.path(), &mut ledger, &mut exec);
    let o = &run.recording.overhead;
    eprintln!(
        "{}: recorded {} records ({} writes, {} B; {} zeroed ranges; {} flushes) in a log of {} B; \
         logging {} ms, applying {} ms, syncing {} ms; mkfs to umount {} ms (without the \
         recorder {} ms)",
        fs.name,
        o.records,
        o.writes,
        o.write_bytes,
        o.zeroes,
        o.flushes,
        o.log_bytes,
        o.logging_ns / 1_000_000,
        o.applying_ns / 1_000_000,
        o.syncing_ns / 1_000_000,
        run.elapsed.as_millis(),
        baseline(fs).as_millis()
    );
    let index = LogIndex::read(&run.recording.log).unwrap();
    assert!(
        index.entries.iter().any(|e| e.op == Op::Flush),
        "flushes recorded"
    );
    let states = dir.path().join("states");
    std::fs::create_dir(&states).unwrap();
    let mut m = Materialiser::new(&index, run.base.clone(), &states).unwrap();
    let out = |name: &str| {
        let d = states.join(name);
        std::fs::create_dir(&d).unwrap();
        d
    };
    let end = index.entries.len() as u64;

    // Everything applied: the backing image, byte for byte.
    let all = state_at(&index, end, StateKind::Issued).unwrap();
    let files_all = m.materialise(&all, &out("all")).unwrap();
    let backing = dir.path().join("backing").join(NAME);
    assert!(
        same_bytes(&files_all[0], &backing),
        "the log replayed is the backing image"
    );

    // Up to the last flush: the file system's own check passes as it is.
    let flushed = state_at(&index, end, StateKind::Flushed).unwrap();
    let last = m.materialise(&flushed, &out("flushed")).unwrap();
    checks_clean(fs, &last[0], "up to the last flush");

    // When the sync returned: every file synced by then is there, whole.
    let synced = state_at(&index, run.after_sync, StateKind::Flushed).unwrap();
    assert!(
        synced.crash_ns >= run.synced_ns,
        "the sync returned before the crash"
    );
    let files_synced = m.materialise(&synced, &out("synced")).unwrap();
    recovers(fs, &files_synced[0], "at the sync", |mnt| {
        for (name, bytes) in files("a", 8) {
            let got = std::fs::read(mnt.join(&name)).unwrap_or_default();
            assert!(got == bytes, "{name} synced but not in the crash state");
        }
    });

    // Drawn states after mkfs, torn writes included: each recovers and passes the check.
    let seed = 20261201;
    let opts = CrashOptions {
        states: 10,
        seed,
        sector_bytes: 4096,
        torn: true,
        from_record: run.after_mkfs,
    };
    eprintln!("{}: crash states drawn with seed {seed}", fs.name);
    for state in generate(&index, &opts).unwrap() {
        let what = format!(
            "state {} ({:?} at {}, seed {seed})",
            state.number, state.kind, state.crash_point
        );
        let made = m
            .materialise(&state, &out(&format!("s{}", state.number)))
            .unwrap();
        let pending: u64 = state.images.iter().map(|i| i.pending).sum();
        let (kept, torn) = (state.persisted(), state.torn());
        eprintln!("  {what}: {kept} of {pending} pending writes persisted, {torn} torn");
        recovers(fs, &made[0], &what, |_| {});
        std::fs::remove_file(&made[0]).unwrap();
    }
    drop(m);
    let failures = ledger.undo_all(&mut exec);
    assert!(failures.is_empty(), "{failures:?}");
    assert_unmounted(&dir.path().join("fuse"));
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (mut fa, mut fb) = (
        std::fs::File::open(a).unwrap(),
        std::fs::File::open(b).unwrap(),
    );
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let (na, nb) = (fa.read(&mut ba).unwrap(), fb.read(&mut bb).unwrap());
        if na != nb || ba[..na] != bb[..nb] {
            return false;
        }
        if na == 0 {
            return true;
        }
    }
}

fn assert_unmounted(mnt: &Path) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !mounts.contains(&*mnt.to_string_lossy()),
        "{} still mounted",
        mnt.display()
    );
    let images: PathBuf = mnt.join(NAME);
    assert!(
        bakeoff_stack::undo::loops_backed_by(&images).is_empty(),
        "loop still attached"
    );
}

#[test]
fn ext4_replays_byte_for_byte_and_its_crash_states_recover() {
    round_trip(&EXT4);
}

#[test]
fn xfs_from_a_checkpoint_replays_and_its_crash_states_recover() {
    round_trip(&XFS);
}

#[test]
fn a_recorder_dropped_midway_leaves_nothing_mounted_or_attached() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let dir = scratch_dir();
    let mut ledger = Ledger::create(&dir.path().join("state"), "dropped").unwrap();
    let backing = dir.path().join("backing");
    std::fs::create_dir(&backing).unwrap();
    std::fs::File::create(backing.join(NAME))
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let opts = RecorderOptions {
        backing_dir: backing,
        images: vec![NAME.into()],
        mountpoint: dir.path().join("fuse"),
        log: dir.path().join("w.log"),
    };
    let mnt = opts.mountpoint.clone();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut recorder = Recorder::start(&opts, &mut ledger).unwrap();
        let device = recorder
            .attach_loop(NAME, &mut Exec::default(), &mut ledger)
            .unwrap();
        sh(
            "dd",
            &[
                "if=/dev/zero",
                &format!("of={}", device.device),
                "bs=64k",
                "count=4",
                "oflag=direct",
                "status=none",
            ],
        );
        panic!("a step failed while the loop device was attached");
    }));
    assert!(result.is_err());
    assert_unmounted(&mnt);
    // The log stops without its end record, and says so.
    let err = LogIndex::read(&dir.path().join("w.log"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("without its end record"), "{err}");
}

/// Tells the child test where to record.
const CHILD: &str = "BAKEOFF_WRITELOG_TEST_CHILD";

#[test]
fn kill_9_then_cleanup_detaches_and_unmounts_the_dead_mount() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let dir = scratch_dir();
    let state = dir.path().join("state");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_that_records", "--ignored", "--nocapture"])
        .env(CHILD, dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = dir.path().join("ready");
    let start = Instant::now();
    while !ready.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child ended before it recorded: {status}");
        }
        assert!(start.elapsed().as_secs() < 60, "the child never got ready");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = child.id();
    child.kill().unwrap(); // SIGKILL: no Drop runs, the FUSE daemon dies with it
    child.wait().unwrap();
    let mnt = dir.path().join("fuse");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let ours = mounts.lines().find(|l| l.contains(&*mnt.to_string_lossy()));
    let line = ours.expect("the dead mount stays");
    // Its source names the process that served it (`bakeoff cleanup` aborts a dead one's).
    assert!(
        line.contains(&format!(" fuse.bakeoff-writelog bakeoff-writelog-{pid} ")),
        "{line}"
    );
    assert!(!bakeoff_stack::undo::loops_backed_by(&mnt.join(NAME)).is_empty());
    let ledgers = bakeoff_stack::ledger::stale_ledgers(&state);
    assert_eq!(ledgers.len(), 1, "{ledgers:?}");
    let failures = bakeoff_stack::ledger::replay_file(&ledgers[0], &mut Exec::default()).unwrap();
    assert!(failures.is_empty(), "{failures:?}");
    assert_unmounted(&mnt);
    assert!(!mnt.exists(), "the mount point removed");
}

/// The child of the test above: starts a recorder and a loop device over it, writes, says it
/// is ready and waits to be killed. Run on its own (without the variable) it does nothing.
#[test]
#[ignore = "a child process of kill_9_then_cleanup_detaches_and_unmounts_the_dead_mount"]
fn child_that_records() {
    let Some(dir) = std::env::var_os(CHILD).map(PathBuf::from) else {
        return;
    };
    let mut ledger = Ledger::create(&dir.join("state"), "child").unwrap();
    let backing = dir.join("backing");
    std::fs::create_dir(&backing).unwrap();
    let image = std::fs::File::create(backing.join(NAME)).unwrap();
    image.set_len(64 << 20).unwrap();
    let opts = RecorderOptions {
        backing_dir: backing,
        images: vec![NAME.into()],
        mountpoint: dir.join("fuse"),
        log: dir.join("w.log"),
    };
    let mut recorder = Recorder::start(&opts, &mut ledger).unwrap();
    let device = recorder
        .attach_loop(NAME, &mut Exec::default(), &mut ledger)
        .unwrap();
    let of = format!("of={}", device.device);
    sh(
        "dd",
        &[
            "if=/dev/zero",
            &of,
            "bs=64k",
            "count=4",
            "oflag=direct",
            "status=none",
        ],
    );
    std::fs::write(dir.join("ready"), b"").unwrap();
    std::thread::sleep(std::time::Duration::from_secs(120));
}
