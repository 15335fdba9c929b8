//! ZFS stacks (zfs-fuse here; OpenZFS where its module is loaded): properties and layouts read
//! back, cold runs, a daemon killed mid-life, a foreign daemon refused, and nothing left behind.
//! Root only (in CI for real). The tests share one host-wide daemon slot, so they take turns.
//!
//! `cargo test -p bakeoff-stack --test zfs -- --ignored --nocapture` also measures device reads
//! per 8 KiB application read, aligned and misaligned to the record size.

mod common;
use bakeoff_stack::exec::Exec;
use bakeoff_stack::fs::zfs;
use bakeoff_stack::{Stack, StackSpec};
use common::{options, scratch};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Root, loop devices and zfs-fuse (or OpenZFS): false skips, under `CI=true` it fails.
fn zfs_privileged() -> bool {
    bakeoff_testkit::privileged()
        && bakeoff_testkit::require(
            (zfs::openzfs_loaded() || Path::new("/dev/fuse").exists())
                && zfs::missing_tool().is_none(),
            "zfs-fuse (or OpenZFS)",
        )
}

/// One ZFS test at a time on the machine (the ZFS lock: zfs-fuse is one daemon per host),
/// beside the other lane's shared tests: these check outcomes, not figures. Waits (2 min at
/// most) for a daemon someone else runs to go: a stack would share it (or be refused), and
/// these tests check the daemon their own stack starts and stops.
fn zfs_turn() -> bakeoff_testkit::ZfsTurn {
    let guard = bakeoff_testkit::zfs_turn();
    let start = Instant::now();
    while !foreign_daemons().is_empty() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(500));
    }
    guard
}

fn foreign_daemons() -> Vec<(i32, String)> {
    zfs::fuse::locate().map_or_else(Vec::new, |e| zfs::fuse::running(&e))
}

fn create(spec: &str, images: &Path, size: u64) -> Stack {
    let o = options(images, size);
    Stack::create(&StackSpec::parse(spec).unwrap(), &o).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// What must be gone after teardown.
struct Residue {
    images: Vec<String>,
    mnt: PathBuf,
    dir: PathBuf,
    pid: Option<i32>,
}

fn residue(stack: &Stack) -> Residue {
    let images = common::images_of(stack);
    let dir = Path::new(&images[0]).parent().unwrap().to_path_buf();
    let pid = stack.daemons().first().map(|d| d.pid());
    Residue {
        images,
        mnt: stack.target.clone(),
        dir,
        pid,
    }
}

fn assert_gone(r: &Residue) {
    for img in &r.images {
        let loops = bakeoff_stack::undo::loops_backed_by(Path::new(img));
        assert!(loops.is_empty(), "{img} still attached to {loops:?}");
        assert!(!Path::new(img).exists(), "{img} not removed");
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mnt = r.mnt.to_string_lossy();
    assert!(!mounts.contains(&*mnt), "{mnt} still mounted:\n{mounts}");
    assert!(!r.dir.exists(), "{} left", r.dir.display());
    if let Some(pid) = r.pid {
        assert!(
            !bakeoff_stack::daemon::alive(pid),
            "zfs-fuse {pid} still runs"
        );
    }
    let dir = r.dir.to_string_lossy();
    let ours: Vec<_> = foreign_daemons()
        .into_iter()
        .filter(|(_, c)| c.contains(&*dir))
        .collect();
    assert!(ours.is_empty(), "our zfs-fuse still runs: {ours:?}");
}

fn prop<'a>(stack: &'a Stack, key: &str) -> &'a str {
    stack
        .info
        .properties
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {:#?}", stack.info.properties))
}

#[test]
fn the_layout_is_read_back_from_zpool_status() {
    let status = "  pool: bk_t\n state: ONLINE\n scrub: none requested\nconfig:\n\n\
        \tNAME        STATE     READ WRITE CKSUM\n\
        \tbk_t        ONLINE       0     0     0\n\
        \t  mirror-0  ONLINE       0     0     0\n\
        \t    loop0   ONLINE       0     0     0\n\
        \t    loop1   ONLINE       0     0     0\n\
        \t  mirror-1  ONLINE       0     0     0\n\
        \t    loop2   ONLINE       0     0     0\n\
        \t    loop3   ONLINE       0     0     0\n\
        \tlogs\n\
        \t  loop4     ONLINE       0     0     0\n\nerrors: No known data errors\n";
    let l = zfs::layout(status, "bk_t");
    assert_eq!(l["layout"], "mirror-stripe");
    assert_eq!(l["vdevs"], "mirror-0(loop0,loop1) mirror-1(loop2,loop3)");
    assert_eq!(l["log_vdevs"], "loop4");
    let stripe = "config:\n\tNAME STATE\n\tbk_s ONLINE\n\t  loop0 ONLINE\n\t  loop1 ONLINE\n";
    let l = zfs::layout(stripe, "bk_s");
    assert_eq!(
        (l["layout"].as_str(), l["vdevs"].as_str()),
        ("stripe", "loop0 loop1")
    );
    assert!(!l.contains_key("log_vdevs"));
    let raidz = "\tNAME STATE\n\tp ONLINE\n\t  raidz1-0 ONLINE\n\t    a ONLINE\n\t    b ONLINE\n";
    assert_eq!(zfs::layout(raidz, "p")["layout"], "raidz");
}

#[test]
fn properties_are_read_back_and_teardown_leaves_nothing() {
    if !zfs_privileged() {
        return;
    }
    let _turn = zfs_turn();
    let images = scratch();
    let spec = "zfs:recordsize=8k,primarycache=metadata,atime=off,arc=100m";
    let mut stack = create(spec, images.path(), 512 << 20);
    assert_eq!(prop(&stack, "recordsize"), "8K");
    assert_eq!(prop(&stack, "recordsize_bytes"), "8192");
    assert_eq!(prop(&stack, "primarycache"), "metadata");
    assert_eq!(prop(&stack, "atime"), "off");
    assert_eq!(prop(&stack, "layout"), "stripe");
    assert_eq!(stack.info.redundancy, Some(1.0));
    assert_eq!(prop(&stack, "pool_cachefile"), "none");
    assert_eq!(prop(&stack, "mountpoint"), stack.target.to_string_lossy());
    if !zfs::openzfs_loaded() {
        assert_eq!(prop(&stack, "arc_max"), (100u64 << 20).to_string());
        assert_eq!(prop(&stack, "block_cache"), "off (--disable-block-cache)");
        assert_eq!(prop(&stack, "fstype"), "fuse.zfs");
        assert!(
            stack.info.backend.starts_with("zfs-fuse 0."),
            "{}",
            stack.info.backend
        );
        assert!(stack.info.tool_versions.contains_key("zfs-fuse"));
    }
    if !zfs::openzfs_loaded() {
        // The daemon is typed data, not properties.
        let d = &stack.info.daemons;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].name.as_str(), d[0].pid),
            ("zfs-fuse", stack.daemons()[0].pid())
        );
        assert!(d[0].exe.ends_with("/zfs-fuse"), "{d:?}");
        assert_eq!(d[0].args[0], d[0].exe);
        assert!(d[0].args.contains(&"--disable-block-cache".to_string()));
        let props = &stack.info.properties;
        assert!(!props.contains_key("zfs_fuse_pid") && !props.contains_key("daemon_args"));
    }
    assert_eq!(stack.failure_cause(), None);
    stack.health().unwrap();
    std::fs::write(stack.target.join("probe"), b"x").unwrap();
    assert_eq!(std::fs::read(stack.target.join("probe")).unwrap(), b"x");
    let r = residue(&stack);
    stack.destroy().unwrap();
    assert_gone(&r);
}

#[test]
fn a_mirror_stripe_with_a_log_is_read_back() {
    if !zfs_privileged() {
        return;
    }
    let _turn = zfs_turn();
    let images = scratch();
    let stack = create(
        "zfs:devices=4,layout=mirror-stripe,log=1",
        images.path(),
        256 << 20,
    );
    assert_eq!(stack.info.backing.len(), 5);
    assert_eq!(prop(&stack, "layout"), "mirror-stripe");
    assert_eq!(
        stack.info.redundancy,
        Some(2.0),
        "the log device holds no data copy"
    );
    let vdevs = prop(&stack, "vdevs");
    assert_eq!(vdevs.matches("mirror").count(), 2, "{vdevs}");
    let log = stack.info.backing.iter().find(|b| b.role == "log").unwrap();
    let log_name = log.device.trim_start_matches("/dev/");
    assert_eq!(prop(&stack, "log_vdevs"), log_name);
    let r = residue(&stack);
    stack.destroy().unwrap();
    assert_gone(&r);
}

#[test]
fn a_killed_daemon_is_torn_down_without_leftovers() {
    if !zfs_privileged() || zfs::openzfs_loaded() {
        return;
    }
    let _turn = zfs_turn();
    let images = scratch();
    let mut stack = create("zfs:recordsize=8k", images.path(), 256 << 20);
    std::fs::write(stack.target.join("f"), vec![7u8; 1 << 20]).unwrap();
    let r = residue(&stack);
    let pid = r.pid.expect("zfs-fuse pid recorded");
    let p = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::kill_process(p, rustix::process::Signal::KILL).unwrap();
    let start = Instant::now();
    while stack.failure_cause().is_none() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let cause = stack
        .failure_cause()
        .expect("a killed daemon is a failure cause");
    assert!(
        cause.contains(&format!("zfs-fuse daemon (pid {pid})")) && cause.contains("died"),
        "{cause}"
    );
    let e = stack.health().unwrap_err();
    assert!(e.to_string().contains("died"), "{e}");
    assert!(
        std::fs::read(stack.target.join("f")).is_err(),
        "a dead FUSE daemon served a read"
    );
    stack.destroy().unwrap();
    assert_gone(&r);
}

#[test]
fn make_cold_keeps_the_data_and_the_mount() {
    if !zfs_privileged() {
        return;
    }
    let _turn = zfs_turn();
    let images = scratch();
    let stack = create(
        "zfs:recordsize=8k,primarycache=all",
        images.path(),
        256 << 20,
    );
    let data: Vec<u8> = (0..3 << 20)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(stack.target.join("f"), &data).unwrap();
    assert!(std::fs::read(stack.target.join("f")).unwrap() == data);
    let mut exec = Exec::default();
    zfs::make_cold(&stack.info, &mut exec).unwrap();
    let argv: Vec<String> = exec.log.iter().map(|c| c.argv.join(" ")).collect();
    assert!(
        argv.iter().any(|a| a.starts_with("zpool export")),
        "{argv:?}"
    );
    assert!(
        argv.iter().any(|a| a.starts_with("zpool import")),
        "{argv:?}"
    );
    assert!(
        std::fs::read(stack.target.join("f")).unwrap() == data,
        "data changed"
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(mounts.contains(&*stack.target.to_string_lossy()));
    // Still ours to destroy, and still not in any cache file.
    let out = exec
        .run("zpool", &["get", "cachefile", prop(&stack, "pool")])
        .unwrap();
    let value = out.lines().nth(1).and_then(|l| l.split_whitespace().nth(2));
    assert_eq!(value, Some("none"), "{out}");
    let r = residue(&stack);
    stack.destroy().unwrap();
    assert_gone(&r);
}

#[test]
fn a_daemon_started_elsewhere_is_refused() {
    if !zfs_privileged() || zfs::openzfs_loaded() {
        return;
    }
    let _turn = zfs_turn();
    let images = scratch();
    let exe = zfs::fuse::locate().unwrap();
    let pidfile = images.path().join("foreign.pid");
    let status = std::process::Command::new(&exe)
        .args(["--pidfile", &pidfile.to_string_lossy(), "--no-kstat-mount"])
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    let pid = loop {
        let t = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if let Some(p) = t.strip_suffix('\n').and_then(|t| t.parse::<i32>().ok()) {
            break p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no pid from zfs-fuse"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = options(images.path(), 128 << 20);
    let err = Stack::create(&StackSpec::parse("zfs").unwrap(), &o).err();
    let signal = bakeoff_stack::daemon::StopBy::Signal;
    bakeoff_stack::undo::stop_daemon(pid, &exe.to_string_lossy(), &signal, &mut Exec::default())
        .unwrap();
    let err = err.expect("a foreign daemon must be refused").to_string();
    assert!(
        err.contains("already running") && err.contains(&pid.to_string()),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(images.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(left, vec![pidfile], "the refused stack left files behind");
}

/// Sectors read so far by a block device (field 3 of `/sys/block/NAME/stat`).
fn sectors_read(dev: &str) -> u64 {
    let name = dev.trim_start_matches("/dev/");
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// Device sectors per MiB to read one byte of each MiB (the L1 indirect block and one data
/// record) on a cold pool, then per 8 KiB `pread` at random offsets, `shift` bytes past a
/// record boundary, with the indirect blocks cached (metadata) and the page cache dropped.
fn sectors_per_read(stack: &Stack, file: &Path, shift: u64, seed: u64) -> (f64, f64) {
    zfs::make_cold(&stack.info, &mut Exec::default()).unwrap();
    let dev = &stack.info.backing[0].device;
    let f = std::fs::File::open(file).unwrap();
    let size = f.metadata().unwrap().len();
    let mut byte = [0u8; 1];
    let before = sectors_read(dev);
    for off in (0..size).step_by(1 << 20) {
        f.read_at(&mut byte, off).unwrap();
    }
    let per_mib = (sectors_read(dev) - before) as f64 / (size >> 20) as f64;
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::Random).unwrap();
    let (n, mut x, mut buf) = (2000u64, seed, vec![0u8; 8192]);
    let before = sectors_read(dev);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let off = (x % (size / 8192 - 2)) * 8192 + shift;
        f.read_at(&mut buf, off).unwrap();
    }
    (per_mib, (sectors_read(dev) - before) as f64 / n as f64)
}

fn measure(spec: &str) {
    let images = scratch();
    let stack = create(spec, images.path(), 512 << 20);
    let file = stack.target.join("data");
    let mut chunk = vec![0u8; 1 << 20];
    let mut w = std::fs::File::create(&file).unwrap();
    for i in 0..256u64 {
        for (j, b) in chunk.iter_mut().enumerate() {
            *b = ((i * 1_048_583 + j as u64).wrapping_mul(2_654_435_761) >> 11) as u8;
        }
        std::io::Write::write_all(&mut w, &chunk).unwrap();
    }
    w.sync_all().unwrap();
    drop(w);
    let (cold, aligned) = sectors_per_read(&stack, &file, 0, 0x9E37_79B9_7F4A_7C15);
    let (_, misaligned) = sectors_per_read(&stack, &file, 4096, 0x2545_F491_4F6C_DD1D);
    println!(
        "{spec}: device sectors per 8 KiB read: aligned {aligned:.1}, offset by 4 KiB \
         {misaligned:.1}; cold first touch of each MiB: {cold:.1}"
    );
    assert!(
        aligned > 0.0 && misaligned > aligned,
        "{aligned} {misaligned}"
    );
    stack.destroy().unwrap();
}

#[test]
#[ignore = "a measurement (about a minute): run with --ignored --nocapture"]
fn measure_read_amplification() {
    if !zfs_privileged() {
        return;
    }
    // A measurement: the machine alone (so no other ZFS test either).
    let _turn = bakeoff_testkit::serial();
    measure("zfs:recordsize=8k,primarycache=metadata,vdev_cache=0");
    if !zfs::openzfs_loaded() {
        measure("zfs:recordsize=8k,primarycache=metadata"); // the zfsrc vdev cache (10 MiB)
    }
}
