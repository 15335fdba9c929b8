//! The safety gate (reliability plan §6.1, fault F9) against real devices: the root disk under
//! several aliases, mounted, swap, partitioned, btrfs and ZFS members are refused; a device
//! with a signature is accepted only when named in `destroy_ok`; an empty one is accepted.
//! Every refusal also checks that the device's write counter did not move (root; in CI for
//! real). Drop guards undo every loop device, mount, swap area, pool and daemon.

mod common;
use bakeoff_stack::exec::Exec;
use bakeoff_stack::gate::{check, check_with, reclaim, Claim};
use bakeoff_stack::StackError;
use common::privileged;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a command that must succeed; its stdout, trimmed.
fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Runs a cleanup command; failures are reported, not raised (we may be unwinding).
fn quiet(program: &str, args: &[&str]) {
    match Command::new(program).args(args).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => eprintln!("{program} {args:?}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("{program}: {e}"),
    }
}

fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("bakeoff-gate-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// A loop device over a sparse image in /var/tmp; detached and removed on drop.
struct Loop {
    dev: PathBuf,
    _image: Option<tempfile::NamedTempFile>,
}

impl Loop {
    fn new(size: u64) -> Loop {
        Loop::with_image(size, |_| {}, false)
    }

    /// `prepare` writes into the image before it is attached (a partition table).
    fn with_image(size: u64, prepare: impl FnOnce(&mut std::fs::File), partscan: bool) -> Loop {
        let mut image = tempfile::Builder::new()
            .prefix("bakeoff-gate-")
            .suffix(".img")
            .tempfile_in("/var/tmp")
            .unwrap();
        image.as_file().set_len(size).unwrap();
        prepare(image.as_file_mut());
        image.as_file().sync_all().unwrap();
        let path = image.path().to_str().unwrap().to_string();
        let mut args = vec!["--find", "--show"];
        if partscan {
            args.push("--partscan");
        }
        args.push(&path);
        let dev = PathBuf::from(sh("losetup", &args));
        Loop {
            dev,
            _image: Some(image),
        }
    }

    /// A loop device over another block device.
    fn over(backing: &Path) -> Loop {
        let dev = PathBuf::from(sh(
            "losetup",
            &["--find", "--show", backing.to_str().unwrap()],
        ));
        Loop { dev, _image: None }
    }

    fn name(&self) -> String {
        kernel_name(&self.dev)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        quiet("losetup", &["--detach", self.dev.to_str().unwrap()]);
    }
}

/// No lazy init: the kernel would otherwise zero inode tables in the background after mount.
fn mkfs_ext4(dev: &Path) {
    let eager = "lazy_itable_init=0,lazy_journal_init=0";
    sh(
        "mkfs.ext4",
        &["-q", "-F", "-E", eager, dev.to_str().unwrap()],
    );
}

/// A mount on a temp dir; unmounted on drop.
struct Mount(tempfile::TempDir);

impl Mount {
    fn new(dev: &Path) -> Mount {
        let dir = scratch_dir();
        sh(
            "mount",
            &[dev.to_str().unwrap(), dir.path().to_str().unwrap()],
        );
        // Nothing dirty left for writeback to flush during the check.
        sh("sync", &["-f", dir.path().to_str().unwrap()]);
        Mount(dir)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        quiet("umount", &[self.0.path().to_str().unwrap()]);
    }
}

/// An active swap area; turned off on drop.
struct Swap(PathBuf);

impl Drop for Swap {
    fn drop(&mut self) {
        quiet("swapoff", &[self.0.to_str().unwrap()]);
    }
}

fn kernel_name(dev: &Path) -> String {
    let rdev = std::fs::metadata(dev).unwrap().rdev();
    let link = format!("/sys/dev/block/{}", maj_min(rdev));
    let target = std::fs::canonicalize(link).unwrap();
    target.file_name().unwrap().to_string_lossy().into_owned()
}

fn maj_min(rdev: u64) -> String {
    format!("{}:{}", rustix::fs::major(rdev), rustix::fs::minor(rdev))
}

/// Field 5 of the block stat file: writes completed.
fn writes(name: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/class/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(4).unwrap().parse().unwrap()
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
        let before = writes(name);
        let result = check(alias, destroy_ok);
        let after = writes(name);
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
    let before = writes(name);
    let claim =
        check(alias, destroy_ok).unwrap_or_else(|e| panic!("{}: refused: {e}", alias.display()));
    assert_eq!(before, writes(name), "{name}: the gate wrote to it");
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
    let lo = Loop::new(64 << 20);
    mkfs_ext4(&lo.dev);
    let mnt = Mount::new(&lo.dev);
    let at = mnt.0.path().display().to_string();
    refused(&lo.dev, &lo.name(), &[], &format!("mounted on {at}"), 1);
    refused(
        &lo.dev,
        &lo.name(),
        std::slice::from_ref(&lo.dev),
        "mounted",
        1,
    );
}

/// A process holding a mount in its own mount namespace; killed (taking the namespace and
/// the mount with it) on drop.
struct Unshared(std::process::Child);

impl Drop for Unshared {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_device_mounted_only_in_another_namespace_is_refused() {
    if !privileged() {
        return;
    }
    let lo = Loop::new(64 << 20);
    mkfs_ext4(&lo.dev);
    let dir = scratch_dir();
    let script = format!(
        "mount {} {} && echo ready && exec sleep 600",
        lo.dev.display(),
        dir.path().display()
    );
    let child = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut holder = Unshared(child);
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
    refused(&lo.dev, &lo.name(), &[], &expect, 1);
}

#[test]
fn a_mounted_btrfs_and_its_other_device_are_refused() {
    if !privileged() {
        return;
    }
    let (a, b) = (Loop::new(256 << 20), Loop::new(256 << 20));
    let (da, db) = (a.dev.to_str().unwrap(), b.dev.to_str().unwrap());
    sh(
        "mkfs.btrfs",
        &["-q", "-f", "-d", "single", "-m", "single", da, db],
    );
    let _mnt = Mount::new(&a.dev);
    // btrfs reports an anonymous MAJ:MIN: the mount source names the device.
    refused(&a.dev, &a.name(), &[], "mounted on", 1);
    refused(&b.dev, &b.name(), &[], "member of a btrfs file system", 1);
}

#[test]
fn the_backing_device_of_a_loop_device_is_refused() {
    if !privileged() {
        return;
    }
    let lo = Loop::new(32 << 20);
    let upper = Loop::over(&lo.dev);
    let expect = format!("the backing device of {}", upper.dev.display());
    refused(&lo.dev, &lo.name(), &[], &expect, 1);
}

#[test]
fn a_swap_device_is_refused() {
    if !privileged() {
        return;
    }
    let lo = Loop::new(64 << 20);
    sh("mkswap", &["-q", lo.dev.to_str().unwrap()]);
    sh("swapon", &[lo.dev.to_str().unwrap()]);
    let _swap = Swap(lo.dev.clone());
    refused(&lo.dev, &lo.name(), &[], "in use as swap", 1);
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
    let lo = Loop::with_image(80 << 20, dos_table, true);
    let part = |n: u32| PathBuf::from(format!("{}p{n}", lo.dev.display()));
    // Kernels without the DOS partition parser (CONFIG_MSDOS_PARTITION) need them added.
    if !part(2).exists() {
        quiet("partx", &["--add", lo.dev.to_str().unwrap()]);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !part(2).exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            part(2).display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let p1 = part(1);
    mkfs_ext4(&p1);
    let _mnt = Mount::new(&p1);
    let p1_name = format!("its partition /dev/{} is mounted", kernel_name(&p1));
    refused(&lo.dev, &lo.name(), &[], &p1_name, 1);
    let sibling = format!("another partition of /dev/{}, is mounted", lo.name());
    refused(&part(2), &kernel_name(&part(2)), &[], &sibling, 1);
}

#[test]
fn a_signature_is_refused_unless_destroy_ok_names_the_device() {
    if !privileged() {
        return;
    }
    let size = 512 << 20; // mkfs.xfs wants 300 MB
    let lo = Loop::new(size);
    sh("mkfs.xfs", &["-q", "-f", lo.dev.to_str().unwrap()]);
    refused(&lo.dev, &lo.name(), &[], "carries an xfs signature", 1);
    // Another device in destroy_ok does not count.
    let other = Loop::new(16 << 20);
    refused(
        &lo.dev,
        &lo.name(),
        std::slice::from_ref(&other.dev),
        "xfs",
        1,
    );
    let dir = scratch_dir();
    let alias = number_alias(&lo.dev, dir.path());
    let claim = accepted(&lo.dev, &lo.name(), &[alias]);
    assert_eq!(claim.size_bytes, size);
    assert_eq!(claim.device, lo.dev);
    // The claim is exclusive: a second check while it is held fails at the open.
    refused(
        &lo.dev,
        &lo.name(),
        std::slice::from_ref(&lo.dev),
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
    let (lo, donor) = (Loop::new(512 << 20), Loop::new(256 << 20));
    sh("mkfs.xfs", &["-q", "-f", lo.dev.to_str().unwrap()]);
    sh("mkfs.btrfs", &["-q", "-f", donor.dev.to_str().unwrap()]);
    let from = format!("if={}", donor.dev.display());
    let to = format!("of={}", lo.dev.display());
    let dd = [
        "bs=4096",
        "skip=16",
        "seek=16",
        "count=1",
        "conv=notrunc,fsync",
    ];
    sh(
        "dd",
        &[&[from.as_str(), &to, "status=none"], &dd[..]].concat(),
    );
    let blkid = Command::new("blkid")
        .arg("-p")
        .arg(&lo.dev)
        .status()
        .unwrap();
    assert_eq!(
        blkid.code(),
        Some(8),
        "blkid does not find the device ambivalent"
    );
    refused(&lo.dev, &lo.name(), &[], "carries xfs, btrfs signatures", 1);
    let claim = accepted(&lo.dev, &lo.name(), std::slice::from_ref(&lo.dev));
    assert_eq!(claim.signatures, ["xfs", "btrfs"]);
    drop(claim);
    // The probes go through the recorded runner, blkid's exit 8 included.
    let mut exec = Exec::default();
    check_with(&lo.dev, std::slice::from_ref(&lo.dev), &mut exec).unwrap();
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
    let lo = Loop::new(64 << 20);
    let claim = accepted(&lo.dev, &lo.name(), &[]);
    assert!(claim.signatures.is_empty());
    drop(claim);
    mkfs_ext4(&lo.dev);
    let mut exec = Exec::default();
    let again = reclaim(&lo.dev, &mut exec).unwrap_or_else(|e| panic!("{e}"));
    assert!(again.signatures.is_empty());
    let probes: Vec<&str> = exec.log.iter().map(|c| c.argv[0].as_str()).collect();
    assert!(
        !probes.contains(&"blkid"),
        "a reclaim looks at no signatures: {probes:?}"
    );
    // Held: nobody (not even mkfs) gets the device while the claim lives.
    let out = Command::new("mkfs.ext4")
        .args(["-q", "-F", lo.dev.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success(), "mkfs.ext4 got a claimed device");
    drop(again);
    let _mnt = Mount::new(&lo.dev);
    match reclaim(&lo.dev, &mut exec) {
        Err(StackError::Refused { reason, .. }) => assert!(reason.contains("mounted"), "{reason}"),
        other => panic!("a mounted device was reclaimed: {other:?}"),
    }
}

#[test]
fn an_empty_device_is_accepted_and_held() {
    if !privileged() {
        return;
    }
    let lo = Loop::new(32 << 20);
    let claim = accepted(&lo.dev, &lo.name(), &[]);
    assert_eq!(claim.size_bytes, 32 << 20);
    assert_eq!(claim.device, lo.dev);
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
    if !Path::new("/usr/sbin/zfs-fuse").exists() && !bakeoff_stack::exec::installed("zfs-fuse") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: needs zfs-fuse"
        );
        eprintln!("skipping: zfs-fuse is not installed");
        return;
    }
    if ZfsFuse::running() {
        eprintln!("skipping the ZFS case: a zfs-fuse daemon runs already, another test may own it");
        return;
    }
    let lo = Loop::new(128 << 20);
    let _daemon = ZfsFuse::start();
    sh(
        "zpool",
        &[
            "create",
            "-f",
            "-m",
            "none",
            "bkgatetest",
            lo.dev.to_str().unwrap(),
        ],
    );
    sh("sync", &[]);
    refused(&lo.dev, &lo.name(), &[], "member of ZFS pool bkgatetest", 1);
    // zfs-fuse does not claim its vdevs exclusively: destroy_ok must not let it through.
    refused(
        &lo.dev,
        &lo.name(),
        std::slice::from_ref(&lo.dev),
        "member of ZFS pool bkgatetest",
        1,
    );
    // Exported, the pool is no longer in use: its labels remain, as a signature.
    sh("zpool", &["export", "bkgatetest"]);
    refused(
        &lo.dev,
        &lo.name(),
        &[],
        "carries a zfs_member signature",
        1,
    );
    let claim = accepted(&lo.dev, &lo.name(), std::slice::from_ref(&lo.dev));
    assert_eq!(claim.size_bytes, 128 << 20);
}
