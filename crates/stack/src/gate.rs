//! The safety gate for devices the user hands over (reliability plan §6.1, fault F9).
//!
//! It runs before any write-capable open and fails closed: anything it cannot establish
//! refuses. Devices are identified by number (`st_rdev`), never by name, so every alias of a
//! device (`/dev/vda`, a symlink, `/dev/block/254:0`, another node) gets the same answer.

#[path = "gate_probes.rs"]
mod probes;

use crate::error::StackError;
use crate::exec::Exec;
use rustix::fs::{major, makedev, minor};
use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A device that passed the gate, held open exclusively until a tool of ours (mkfs, wipefs,
/// mount) needs the exclusive open itself: see [`reclaim`].
#[derive(Debug)]
pub struct Claim {
    /// Canonical device node (`/dev/sdb`).
    pub device: PathBuf,
    /// Size in bytes.
    pub size_bytes: u64,
    /// The exclusive open that keeps others from mounting it meanwhile.
    pub file: File,
    /// The signatures found on it (`xfs`, `dos`, ...), which the user confirmed may be
    /// destroyed; empty for a blank device, and for a [`reclaim`] (they are then our own).
    pub signatures: Vec<String>,
}

/// The target, its whole disk, or a partition of that disk: using any of them counts.
struct Related {
    name: String,
    rdev: u64,
    /// How a refusal names it: "" for the target, "a partition of /dev/vda, which is " …
    role: String,
}

/// The resolved device and everything whose use makes it unsafe.
struct Target {
    path: PathBuf,
    node: PathBuf,
    /// The target first.
    related: Vec<Related>,
}

impl Related {
    /// From a sysfs block directory: its name, and the `MAJ:MIN` in its `dev` file.
    fn at(sysdir: &Path, role: impl FnOnce(&str) -> String) -> Result<Related, String> {
        let file = sysdir.join("dev");
        let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let (ma, mi) = text.trim().split_once(':').unwrap_or_default();
        let (Ok(ma), Ok(mi)) = (ma.parse(), mi.parse()) else {
            return Err(format!("{}: unreadable {text:?}", file.display()));
        };
        let name = file_name(sysdir);
        let role = role(&name);
        let rdev = makedev(ma, mi);
        Ok(Related { name, rdev, role })
    }
}

impl Target {
    fn find(&self, dev: u64) -> Option<&Related> {
        self.related.iter().find(|r| r.rdev == dev)
    }

    /// `what` said of the related device `dev`, phrased from the target's point of view.
    fn says(&self, dev: u64, what: impl FnOnce() -> String) -> Result<(), String> {
        match self.find(dev) {
            Some(rel) => Err(format!("{}{}", rel.role, what())),
            None => Ok(()),
        }
    }
}

/// Checks `device` before anything writes to it; `destroy_ok` lists devices whose existing
/// signatures the user agreed to destroy. On success the device is held open with `O_EXCL`.
/// The probes' commands are not kept: [`check_with`] records them.
pub fn check(device: &Path, destroy_ok: &[PathBuf]) -> Result<Claim, StackError> {
    check_with(device, destroy_ok, &mut Exec::default())
}

/// [`check`], running its probes (blkid, wipefs, zpool) through `exec`.
pub fn check_with(
    device: &Path,
    destroy_ok: &[PathBuf],
    exec: &mut Exec,
) -> Result<Claim, StackError> {
    let refused = |device: String| move |reason: String| StackError::Refused { device, reason };
    let target = resolve(device).map_err(refused(device.display().to_string()))?;
    let name = if target.node == device {
        device.display().to_string()
    } else {
        format!("{} ({})", device.display(), target.node.display())
    };
    claim(&target, Some(destroy_ok), exec).map_err(refused(name))
}

/// Claims again a device that passed [`check`] and was handed over to one of our tools that
/// opens it exclusively itself (mkfs, wipefs): every check but the signatures (what is there
/// now is what we just made) is made again, so nobody mounted, held or claimed it meanwhile.
pub fn reclaim(device: &Path, exec: &mut Exec) -> Result<Claim, StackError> {
    let refused = |reason: String| StackError::Refused {
        device: device.display().to_string(),
        reason: format!("{reason} (after our own mkfs or wipefs released it)"),
    };
    let target = resolve(device).map_err(refused)?;
    claim(&target, None, exec).map_err(refused)
}

/// The checks on a resolved device, in order; the reason of the first that fails. Signatures
/// are checked against `destroy_ok` unless it is `None`.
fn claim(t: &Target, destroy_ok: Option<&[PathBuf]>, exec: &mut Exec) -> Result<Claim, String> {
    mounts(t)?;
    swaps(t)?;
    holders(t)?;
    loops(t)?;
    probes::zfs(t, exec)?;
    btrfs(t)?;
    // Held from here on, so nobody can mount or claim it between the checks and our use.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&t.path)
        .map_err(|e| format!("exclusive open failed: {}", errno(&e)))?;
    let signatures = match destroy_ok {
        Some(destroy_ok) => probes::signatures(t, destroy_ok, exec)?,
        None => Vec::new(),
    };
    let size_bytes = size(&file)?;
    Ok(Claim {
        device: t.node.clone(),
        size_bytes,
        file,
        signatures,
    })
}

/// `EBUSY: Device or resource busy (os error 16)`.
fn errno(e: &std::io::Error) -> String {
    let name = match e.raw_os_error() {
        Some(libc::EBUSY) => "EBUSY: ",
        Some(libc::EPERM) => "EPERM: ",
        Some(libc::EACCES) => "EACCES: ",
        _ => "",
    };
    format!("{name}{e}")
}

/// Canonical path, block-device check, and the related devices from sysfs.
fn resolve(device: &Path) -> Result<Target, String> {
    let path = fs::canonicalize(device).map_err(|e| format!("cannot resolve the path: {e}"))?;
    let meta = fs::metadata(&path).map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    if !meta.file_type().is_block_device() {
        return Err(format!("{} is not a block device", path.display()));
    }
    let related = related(meta.rdev())?;
    let node = Path::new("/dev").join(&related[0].name);
    // Report /dev/NAME when that node is this device; else the canonical path as given.
    let node = if block_rdev(&node) == Some(meta.rdev()) {
        node
    } else {
        path.clone()
    };
    Ok(Target {
        path,
        node,
        related,
    })
}

/// The device (first), its whole disk if it is a partition, and all partitions of that disk.
fn related(rdev: u64) -> Result<Vec<Related>, String> {
    let link = format!("/sys/dev/block/{}:{}", major(rdev), minor(rdev));
    let dir = fs::canonicalize(&link)
        .map_err(|e| format!("{link}: {e}: not known to the kernel's block layer"))?;
    let mut out = vec![Related::at(&dir, |_| String::new())?];
    let is_part = dir.join("partition").exists();
    let disk = if is_part {
        dir.parent().ok_or("a partition without a disk")?
    } else {
        &dir
    };
    let d = file_name(disk);
    if is_part {
        out.push(Related::at(disk, |n| {
            format!("a partition of /dev/{n}, which is ")
        })?);
    }
    for entry in fs::read_dir(disk).map_err(|e| format!("{}: {e}", disk.display()))? {
        let p = entry
            .map_err(|e| format!("{}: {e}", disk.display()))?
            .path();
        if p != dir && p.join("partition").exists() {
            out.push(Related::at(&p, |n| match is_part {
                true => format!("/dev/{n}, another partition of /dev/{d}, is "),
                false => format!("its partition /dev/{n} is "),
            })?);
        }
    }
    Ok(out)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// `st_rdev` of `path` if it is a block device.
fn block_rdev(path: &Path) -> Option<u64> {
    let meta = fs::metadata(path).ok()?;
    meta.file_type().is_block_device().then(|| meta.rdev())
}

/// `st_rdev` of a device node; only under /dev: stat elsewhere could hang on a stuck FUSE
/// mount (a file vdev, a loop's backing file).
fn node_rdev(path: &str) -> Option<u64> {
    path.starts_with("/dev/")
        .then(|| block_rdev(path.as_ref()))?
}

/// Mounted in any mount namespace (by `MAJ:MIN`, or by source for btrfs's anonymous
/// devices), or the device of `/`.
fn mounts(t: &Target) -> Result<(), String> {
    for (pid, text) in mount_tables()? {
        for m in bakeoff_probe::parse_mountinfo(&text) {
            let what = || {
                format!(
                    "mounted on {} (mount namespace of pid {pid})",
                    m.mount_point
                )
            };
            t.says(makedev(m.major, m.minor), what)?;
            if let Some(dev) = node_rdev(&m.source) {
                t.says(dev, what)?;
            }
        }
    }
    let root = fs::metadata("/").map_err(|e| format!("cannot stat /: {e}"))?;
    t.says(root.dev(), || "the device of / (stat)".into())
}

/// The mount table of every mount namespace that has a task in it, one per namespace where
/// the namespace is visible. Namespaces with no task left are pinned by mounts or fds; the
/// kernel's exclusive claim of a mounted device still makes the `O_EXCL` open fail there.
fn mount_tables() -> Result<Vec<(u32, String)>, String> {
    let mut seen = HashSet::new();
    let mut tables = Vec::new();
    for pid in numeric_dirs(Path::new("/proc"))? {
        let task_dir = PathBuf::from(format!("/proc/{pid}/task"));
        let Ok(tids) = numeric_dirs(&task_dir) else {
            continue; // the process is gone
        };
        for tid in tids {
            let dir = task_dir.join(tid.to_string());
            // Unreadable (ptrace rules): read its table anyway rather than skip it.
            let ns = fs::metadata(dir.join("ns/mnt")).ok().map(|m| m.ino());
            if ns.is_some_and(|ns| seen.contains(&ns)) {
                continue;
            }
            match fs::read_to_string(dir.join("mountinfo")) {
                Ok(text) => tables.push((tid, text)),
                // Gone or exiting (a zombie has no namespace: EINVAL).
                Err(e) if gone(&e) => continue,
                Err(e) => return Err(format!("cannot read mounts of pid {tid}: {e}")),
            }
            seen.extend(ns);
        }
    }
    Ok(tables)
}

fn gone(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound
        || matches!(e.raw_os_error(), Some(libc::ESRCH | libc::EINVAL))
}

/// Numeric entry names of `dir`, ascending (pid 1 first).
fn numeric_dirs(dir: &Path) -> Result<Vec<u32>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut ids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// Active swap areas, by `st_rdev` of each listed path.
fn swaps(t: &Target) -> Result<(), String> {
    let text = fs::read_to_string("/proc/swaps").map_err(|e| format!("/proc/swaps: {e}"))?;
    for line in text.lines().skip(1) {
        let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if !rest.trim_start().starts_with("partition") {
            continue; // a swap file lives on a mounted file system, found above
        }
        let path = name.replace("\\040", " ");
        let dev = block_rdev(Path::new(&path))
            .ok_or_else(|| format!("cannot identify the swap area {path}"))?;
        t.says(dev, || "in use as swap".into())?;
    }
    Ok(())
}

/// dm, md, LVM, bcache… sit on top of a device as its holders.
fn holders(t: &Target) -> Result<(), String> {
    for rel in &t.related {
        let dir = format!("/sys/class/block/{}/holders", rel.name);
        let entries = fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))?;
        let names: Vec<String> = entries.flatten().map(|e| file_name(&e.path())).collect();
        if !names.is_empty() {
            return Err(format!("{}held by {}", rel.role, names.join(", ")));
        }
    }
    Ok(())
}

/// Loop devices backed by it: loop takes no holder link and no exclusive claim.
fn loops(t: &Target) -> Result<(), String> {
    for lo in fs::read_dir("/sys/block").map_err(|e| format!("/sys/block: {e}"))? {
        let lo = lo.map_err(|e| format!("/sys/block: {e}"))?.path();
        let Ok(backing) = fs::read_to_string(lo.join("loop/backing_file")) else {
            continue; // not a loop device, or not bound
        };
        if let Some(dev) = node_rdev(backing.trim_end_matches('\n')) {
            t.says(dev, || {
                format!("the backing device of /dev/{}", file_name(&lo))
            })?;
        }
    }
    Ok(())
}

/// Devices of mounted btrfs file systems, by kernel name.
fn btrfs(t: &Target) -> Result<(), String> {
    let Ok(filesystems) = fs::read_dir("/sys/fs/btrfs") else {
        return Ok(()); // btrfs not loaded: nothing registered
    };
    for fs in filesystems.flatten() {
        let Ok(devices) = fs::read_dir(fs.path().join("devices")) else {
            continue; // `features`, not a file system
        };
        for dev in devices.flatten() {
            let name = file_name(&dev.path());
            if let Some(rel) = t.related.iter().find(|r| r.name == name) {
                let uuid = file_name(&fs.path());
                return Err(format!(
                    "{}member of a btrfs file system ({uuid})",
                    rel.role
                ));
            }
        }
    }
    Ok(())
}

/// Size by seeking to the end (no ioctl), leaving the file at offset 0.
fn size(file: &File) -> Result<u64, String> {
    let mut f = file;
    let end = f
        .seek(SeekFrom::End(0))
        .map_err(|e| format!("cannot size it: {e}"))?;
    f.seek(SeekFrom::Start(0))
        .map_err(|e| format!("cannot rewind it: {e}"))?;
    match end {
        0 => Err("its size is 0 (no medium, or a loop device without a file)".into()),
        n => Ok(n),
    }
}
