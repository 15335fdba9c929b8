//! The safety gate (reliability plan §6.1, fault F9) against real devices: the root disk under
//! several aliases, mounted, swap, partitioned, btrfs and ZFS members are refused; a device
//! with a signature is accepted only when named in `destroy_ok`; an empty one is accepted.
//! Every refusal also checks that the device's write counter did not move (root; in CI for
//! real). Drop guards undo every loop device, mount, swap area, pool and daemon.

use bakeoff_stack::exec::Exec;
use bakeoff_stack::gate::{check, check_with, reclaim, Claim};
use bakeoff_stack::StackError;
use bakeoff_testkit::command::{quiet, sh, KillOnDrop};
use bakeoff_testkit::loop_device::{
    device_writes, kernel_name, make_ambivalent, mkfs, Attach, Image, LoopDevice, Mount,
};
use bakeoff_testkit::{privileged, require, scratch_dir};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A loop device over a sparse image of `bytes`, without direct I/O: the gate only reads it.
fn plain_loop(bytes: u64) -> LoopDevice {
    let how = Attach {
        direct_io: false,
        partscan: false,
    };
    LoopDevice::attach(Image::sparse(bytes), how)
}

/// The path of `lo`, as `destroy_ok` lists it.
fn named(lo: &LoopDevice) -> [PathBuf; 1] {
    [lo.path().to_path_buf()]
}

/// An active swap area; turned off on drop.
struct Swap(PathBuf);

impl Drop for Swap {
    fn drop(&mut self) {
        quiet("swapoff", &[self.0.to_str().unwrap()]);
    }
}

fn maj_min(rdev: u64) -> String {
    format!("{}:{}", rustix::fs::major(rdev), rustix::fs::minor(rdev))
}

/// `/dev/block/MAJ:MIN` if udev made it, else a node of that name made here: an alias that
/// shares nothing with the original but the device number.
fn number_alias(dev: &Path, dir: &Path) -> PathBuf {
    let rdev = std::fs::metadata(dev).unwrap().rdev();
    let udev = Path::new("/dev/block").join(maj_min(rdev));
    if udev.exists() {
        return udev;
    }
    let node = dir.join(maj_min(rdev));
    let (ma, mi) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let node_s = node.to_str().unwrap();
    sh("mknod", &[node_s, "b", &ma.to_string(), &mi.to_string()]);
    node
}

/// Asserts `check(alias)` refuses with a reason containing `expect`, and that `name`'s write
/// counter did not move across the call. A shared disk (the root disk) has other writers:
/// `attempts` > 1 retries until a quiet window shows the gate did not write.
fn refused(alias: &Path, name: &str, destroy_ok: &[PathBuf], expect: &str, attempts: u32) {
    for attempt in 1..=attempts {
        let before = device_writes(name);
        let result = check(alias, destroy_ok);
        let after = device_writes(name);
        match result {
            Err(StackError::Refused { device, reason }) => {
                assert!(
                    reason.contains(expect),
                    "{}: reason {reason:?} does not say {expect:?}",
                    alias.display()
                );
                assert!(device.contains(&alias.display().to_string()), "{device}");
                eprintln!("refused {device}: {reason}");
            }
            Err(e) => panic!("{}: not a refusal: {e}", alias.display()),
            Ok(claim) => panic!("{}: accepted: {claim:?}", alias.display()),
        }
        if before == after {
            return;
        }
        eprintln!("{name}: writes {before} -> {after} during attempt {attempt}");
    }
    panic!("{name}: the write counter moved across every one of {attempts} checks");
}

/// Asserts `check` accepts, without a write; returns the claim.
fn accepted(alias: &Path, name: &str, destroy_ok: &[PathBuf]) -> Claim {
    let before = device_writes(name);
    let claim =
        check(alias, destroy_ok).unwrap_or_else(|e| panic!("{}: refused: {e}", alias.display()));
    assert_eq!(before, device_writes(name), "{name}: the gate wrote to it");
    claim
}

/// The device of `/` and, if that is a partition, its whole disk.
fn root_devices() -> Vec<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mounts = bakeoff_probe::parse_mountinfo(&info);
    let root = mounts.iter().rev().find(|m| m.mount_point == "/").unwrap();
    let link = format!("/sys/dev/block/{}:{}", root.major, root.minor);
    let Ok(sys) = std::fs::canonicalize(link) else {
        return Vec::new();
    };
    let name = |p: &Path| PathBuf::from("/dev").join(p.file_name().unwrap());
    let mut out = vec![name(&sys)];
    if sys.join("partition").exists() {
        out.push(name(sys.parent().unwrap()));
    }
    out
}

#[test]
fn the_root_disk_is_refused_under_every_alias() {
    if !privileged() {
        return;
    }
    let devices = root_devices();
    if devices.is_empty() {
        eprintln!("skipping: / is not on a block device (container?)");
        return;
    }
    let dir = scratch_dir();
    for dev in devices {
        let name = kernel_name(&dev);
        let link = dir.path().join(format!("{name}-link"));
        std::os::unix::fs::symlink(&dev, &link).unwrap();
        let alias = number_alias(&dev, dir.path());
        for path in [&dev, &link, &alias] {
            refused(path, &name, &[], "mounted on /", 50);
        }
        // Naming it in destroy_ok does not help: being in use is not a signature.
        refused(&dev, &name, std::slice::from_ref(&dev), "mounted", 50);
    }
}

#[test]
fn a_mounted_loop_device_is_refused() {
    if !privileged() {
        return;
    }
    let lo = plain_loop(64 << 20);
    mkfs("ext4", lo.path());
    let mnt = Mount::new(lo.path(), "defaults");
    let at = mnt.path().display().to_string();
    refused(lo.path(), &lo.name(), &[], &format!("mounted on {at}"), 1);
    refused(lo.path(), &lo.name(), &named(&lo), "mounted", 1);
}

#[test]
fn a_device_mounted_only_in_another_namespace_is_refused() {
    if !privileged() {
        return;
    }
    let lo = plain_loop(64 << 20);
    mkfs("ext4", lo.path());
    let dir = scratch_dir();
    let script = format!(
        "mount {} {} && echo ready && exec sleep 600",
        lo.node(),
        dir.path().display()
    );
    let child = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Killing it takes its mount namespace, and the mount, with it.
    let mut holder = KillOnDrop(child);
    let mut line = String::new();
    let out = holder.0.stdout.take().unwrap();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).unwrap();
    assert_eq!(line.trim(), "ready", "the namespaced mount failed");
    let ours = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !ours.contains(&*dir.path().to_string_lossy()),
        "the mount leaked into ours"
    );
    let pid = holder.0.id();
    let expect = format!(
        "mounted on {} (mount namespace of pid {pid})",
        dir.path().display()
    );
    refused(lo.path(), &lo.name(), &[], &expect, 1);
}

#[test]
fn a_mounted_btrfs_and_its_other_device_are_refused() {
    if !privileged() {
        return;
    }
    let (a, b) = (plain_loop(256 << 20), plain_loop(256 << 20));
    let (da, db) = (a.node(), b.node());
    sh(
        "mkfs.btrfs",
        &["-q", "-f", "-d", "single", "-m", "single", da, db],
    );
    let _mnt = Mount::new(a.path(), "defaults");
    // btrfs reports an anonymous MAJ:MIN: the mount source names the device.
    refused(a.path(), &a.name(), &[], "mounted on", 1);
    refused(b.path(), &b.name(), &[], "member of a btrfs file system", 1);
}

#[test]
fn the_backing_device_of_a_loop_device_is_refused() {
    if !privileged() {
        return;
    }
    let lo = plain_loop(32 << 20);
    let upper = LoopDevice::over(lo.path());
    let expect = format!("the backing device of {}", upper.node());
    refused(lo.path(), &lo.name(), &[], &expect, 1);
}

#[test]
fn a_swap_device_is_refused() {
    if !privileged() {
        return;
    }
    let lo = plain_loop(64 << 20);
    sh("mkswap", &["-q", lo.node()]);
    sh("swapon", &[lo.node()]);
    let _swap = Swap(lo.path().to_path_buf());
    refused(lo.path(), &lo.name(), &[], "in use as swap", 1);
}

/// A DOS partition table with two partitions (1 MiB..33 MiB, 33 MiB..65 MiB).
fn dos_table(image: &mut std::fs::File) {
    let mut mbr = [0u8; 512];
    for (i, start) in [2048u32, 2048 + 65536].into_iter().enumerate() {
        let e = &mut mbr[446 + 16 * i..462 + 16 * i];
        e[4] = 0x83;
        e[8..12].copy_from_slice(&start.to_le_bytes());
        e[12..16].copy_from_slice(&65536u32.to_le_bytes());
    }
    mbr[510..].copy_from_slice(&[0x55, 0xAA]);
    image.write_all(&mbr).unwrap();
}

#[test]
fn a_disk_with_a_mounted_partition_and_its_other_partitions_are_refused() {
    if !privileged() {
        return;
    }
    let mut image = Image::sparse(80 << 20);
    dos_table(image.file());
    image.file().sync_all().unwrap();
    let how = Attach {
        direct_io: false,
        partscan: true,
    };
    let lo = LoopDevice::attach(image, how);
    let part = |n: u32| lo.partition(n);
    let p1 = part(1);
    mkfs("ext4", &p1);
    let _mnt = Mount::new(&p1, "defaults");
    let p1_name = format!("its partition /dev/{} is mounted", kernel_name(&p1));
    refused(lo.path(), &lo.name(), &[], &p1_name, 1);
    let sibling = format!("another partition of /dev/{}, is mounted", lo.name());
    refused(&part(2), &kernel_name(&part(2)), &[], &sibling, 1);
}

#[test]
fn a_signature_is_refused_unless_destroy_ok_names_the_device() {
    if !privileged() {
        return;
    }
    let size = 512 << 20; // mkfs.xfs wants 300 MB
    let lo = plain_loop(size);
    mkfs("xfs", lo.path());
    refused(lo.path(), &lo.name(), &[], "carries an xfs signature", 1);
    // Another device in destroy_ok does not count.
    let other = plain_loop(16 << 20);
    refused(lo.path(), &lo.name(), &named(&other), "xfs", 1);
    let dir = scratch_dir();
    let alias = number_alias(lo.path(), dir.path());
    let claim = accepted(lo.path(), &lo.name(), &[alias]);
    assert_eq!(claim.size_bytes, size);
    assert_eq!(claim.device, lo.path());
    // The claim is exclusive: a second check while it is held fails at the open.
    refused(
        lo.path(),
        &lo.name(),
        &named(&lo),
        "exclusive open failed: EBUSY",
        1,
    );
    drop(claim);
}

/// blkid's "ambivalent" (exit 8: an xfs with a btrfs superblock at 64 KiB) is a device with
/// signatures: refused unless named, accepted when named, its signatures listed in the claim.
#[test]
fn a_device_with_ambiguous_signatures_is_refused_unless_named() {
    if !privileged() {
        return;
    }
    let lo = plain_loop(512 << 20);
    make_ambivalent(&lo);
    let blkid = Command::new("blkid")
        .arg("-p")
        .arg(lo.path())
        .status()
        .unwrap();
    assert_eq!(
        blkid.code(),
        Some(8),
        "blkid does not find the device ambivalent"
    );
    refused(
        lo.path(),
        &lo.name(),
        &[],
        "carries xfs, btrfs signatures",
        1,
    );
    let claim = accepted(lo.path(), &lo.name(), &named(&lo));
    assert_eq!(claim.signatures, ["xfs", "btrfs"]);
    drop(claim);
    // The probes go through the recorded runner, blkid's exit 8 included.
    let mut exec = Exec::default();
    check_with(lo.path(), &named(&lo), &mut exec).unwrap();
    let blkid = exec.log.iter().find(|c| c.argv[0] == "blkid").unwrap();
    assert_eq!(blkid.status, Some(8));
    assert!(exec.log.iter().any(|c| c.argv[0] == "wipefs"));
}

/// A device handed over to mkfs is claimed again with every check but the signatures: our
/// own new file system passes, a mount made meanwhile does not.
#[test]
fn a_reclaim_accepts_our_own_file_system_and_refuses_a_mount() {
    if !privileged() {
        return;
    }
    let lo = plain_loop(64 << 20);
    let claim = accepted(lo.path(), &lo.name(), &[]);
    assert!(claim.signatures.is_empty());
    drop(claim);
    mkfs("ext4", lo.path());
    let mut exec = Exec::default();
    let again = reclaim(lo.path(), &mut exec).unwrap_or_else(|e| panic!("{e}"));
    assert!(again.signatures.is_empty());
    let probes: Vec<&str> = exec.log.iter().map(|c| c.argv[0].as_str()).collect();
    assert!(
        !probes.contains(&"blkid"),
        "a reclaim looks at no signatures: {probes:?}"
    );
    // Held: nobody (not even mkfs) gets the device while the claim lives.
    let out = Command::new("mkfs.ext4")
        .args(["-q", "-F", lo.node()])
        .output()
        .unwrap();
    assert!(!out.status.success(), "mkfs.ext4 got a claimed device");
    drop(again);
    let _mnt = Mount::new(lo.path(), "defaults");
    match reclaim(lo.path(), &mut exec) {
        Err(StackError::Refused { reason, .. }) => assert!(reason.contains("mounted"), "{reason}"),
        other => panic!("a mounted device was reclaimed: {other:?}"),
    }
}

#[test]
fn an_empty_device_is_accepted_and_held() {
    if !privileged() {
        return;
    }
    let lo = plain_loop(32 << 20);
    let claim = accepted(lo.path(), &lo.name(), &[]);
    assert_eq!(claim.size_bytes, 32 << 20);
    assert_eq!(claim.device, lo.path());
    let meta = claim.file.metadata().unwrap();
    assert!(meta.file_type().is_block_device());
}

#[test]
fn what_is_not_a_block_device_is_refused() {
    let file = tempfile::NamedTempFile::new().unwrap();
    for path in [
        Path::new("/dev/null"),
        file.path(),
        Path::new("/no/such/device"),
    ] {
        match check(path, &[]) {
            Err(StackError::Refused { reason, .. }) => eprintln!("{}: {reason}", path.display()),
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

/// A zfs-fuse daemon this test started; the pool is destroyed and the daemon stopped on drop.
struct ZfsFuse {
    pid: i32,
    pidfile: PathBuf,
}

impl ZfsFuse {
    fn running() -> bool {
        std::fs::read_dir("/proc").unwrap().flatten().any(|p| {
            std::fs::read_to_string(p.path().join("comm")).is_ok_and(|c| c.trim() == "zfs-fuse")
        })
    }

    fn by_cmdline(pidfile: &str) -> Option<i32> {
        std::fs::read_dir("/proc").unwrap().flatten().find_map(|p| {
            let cmdline = std::fs::read(p.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline);
            let ours = text.starts_with("zfs-fuse\0") || text.contains("/zfs-fuse\0");
            (ours && text.contains(pidfile)).then(|| p.file_name().to_str()?.parse().ok())?
        })
    }

    fn start() -> ZfsFuse {
        let pidfile = PathBuf::from(format!("/tmp/bakeoff-gate-zfs-{}.pid", std::process::id()));
        let p = pidfile.to_str().unwrap();
        // The daemon keeps inherited pipes open: give it none, or waiting for output hangs.
        let started = Command::new("zfs-fuse")
            .args(["--pidfile", p, "--no-kstat-mount"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(started.success(), "zfs-fuse: {started}");
        let deadline = Instant::now() + Duration::from_secs(20);
        let pid = loop {
            let pid = std::fs::read_to_string(&pidfile).ok();
            if let Some(pid) = pid.and_then(|p| p.trim().parse().ok()) {
                break pid;
            }
            if Instant::now() > deadline {
                // Still stop the daemon we started: it is the one named with our pid file.
                if let Some(pid) = ZfsFuse::by_cmdline(p) {
                    drop(ZfsFuse { pid, pidfile });
                }
                panic!("zfs-fuse wrote no pid file");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let daemon = ZfsFuse { pid, pidfile };
        while !Command::new("zpool")
            .arg("list")
            .output()
            .unwrap()
            .status
            .success()
        {
            assert!(Instant::now() < deadline, "zfs-fuse does not answer");
            std::thread::sleep(Duration::from_millis(100));
        }
        daemon
    }
}

impl Drop for ZfsFuse {
    fn drop(&mut self) {
        let listed = Command::new("zpool").args(["list", "bkgatetest"]).output();
        if listed.is_ok_and(|o| o.status.success()) {
            quiet("zpool", &["destroy", "-f", "bkgatetest"]);
        }
        let pid = rustix::process::Pid::from_raw(self.pid).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Path::new(&format!("/proc/{}", self.pid)).exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if Path::new(&format!("/proc/{}", self.pid)).exists() {
            eprintln!("zfs-fuse {} did not stop on SIGTERM; killing it", self.pid);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        let _ = std::fs::remove_file(&self.pidfile);
    }
}

#[test]
fn a_zfs_pool_member_is_refused() {
    if !privileged() {
        return;
    }
    let zfs_fuse =
        Path::new("/usr/sbin/zfs-fuse").exists() || bakeoff_stack::exec::installed("zfs-fuse");
    if !require(zfs_fuse, "zfs-fuse") {
        return;
    }
    if ZfsFuse::running() {
        eprintln!("skipping the ZFS case: a zfs-fuse daemon runs already, another test may own it");
        return;
    }
    let lo = plain_loop(128 << 20);
    let _daemon = ZfsFuse::start();
    sh(
        "zpool",
        &["create", "-f", "-m", "none", "bkgatetest", lo.node()],
    );
    sh("sync", &[]);
    refused(
        lo.path(),
        &lo.name(),
        &[],
        "member of ZFS pool bkgatetest",
        1,
    );
    // zfs-fuse does not claim its vdevs exclusively: destroy_ok must not let it through.
    refused(
        lo.path(),
        &lo.name(),
        &named(&lo),
        "member of ZFS pool bkgatetest",
        1,
    );
    // Exported, the pool is no longer in use: its labels remain, as a signature.
    sh("zpool", &["export", "bkgatetest"]);
    refused(
        lo.path(),
        &lo.name(),
        &[],
        "carries a zfs_member signature",
        1,
    );
    let claim = accepted(lo.path(), &lo.name(), &named(&lo));
    assert_eq!(claim.size_bytes, 128 << 20);
}
