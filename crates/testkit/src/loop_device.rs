//! Loop devices over sparse images, file systems and mounts on them, and the counters tests
//! compare. Each guard undoes what it made on drop, also when an assertion failed: declare a
//! mount after the device it is on, so that it goes first.

use crate::command::{quiet, sh, succeeds};
use crate::{scratch_dir, PREFIX, SCRATCH};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A sparse image file under [`SCRATCH`], removed on drop.
pub struct Image(tempfile::NamedTempFile);

impl Image {
    /// An image of `bytes`, all holes.
    pub fn sparse(bytes: u64) -> Image {
        Image::sparse_in(Path::new(SCRATCH), bytes)
    }

    /// An image of `bytes`, all holes, in `dir` (e.g. `/dev/shm`, for a device whose I/O
    /// does not reach the machine's disk).
    pub fn sparse_in(dir: &Path, bytes: u64) -> Image {
        let file = tempfile::Builder::new()
            .prefix(PREFIX)
            .suffix(".img")
            .tempfile_in(dir)
            .unwrap_or_else(|e| panic!("cannot make an image in {}: {e}", dir.display()));
        file.as_file().set_len(bytes).unwrap();
        Image(file)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// The open file, to write into before it is attached (a partition table).
    pub fn file(&mut self) -> &mut File {
        self.0.as_file_mut()
    }
}

/// How an image is attached.
#[derive(Clone, Copy, Debug)]
pub struct Attach {
    /// Loop direct I/O (`--direct-io=on`), as bakeoff attaches its own images.
    pub direct_io: bool,
    /// Scan the image's partition table (`--partscan`).
    pub partscan: bool,
}

impl Default for Attach {
    fn default() -> Attach {
        Attach {
            direct_io: true,
            partscan: false,
        }
    }
}

/// An attached loop device, detached on drop (its image, if it has one, removed after).
pub struct LoopDevice {
    node: String,
    image: Option<Image>,
}

impl LoopDevice {
    /// A loop device with direct I/O over a fresh sparse image of `bytes`.
    pub fn new(bytes: u64) -> LoopDevice {
        LoopDevice::attach(Image::sparse(bytes), Attach::default())
    }

    /// Attaches `image` as `how` says.
    pub fn attach(image: Image, how: Attach) -> LoopDevice {
        let mut args = vec!["--find", "--show"];
        args.push(if how.direct_io {
            "--direct-io=on"
        } else {
            "--direct-io=off"
        });
        if how.partscan {
            args.push("--partscan");
        }
        let file = image
            .path()
            .to_str()
            .expect("a UTF-8 image path")
            .to_string();
        args.push(&file);
        LoopDevice::attached(sh("losetup", &args), Some(image))
    }

    /// A loop device over another block device (no image of its own).
    pub fn over(backing: &Path) -> LoopDevice {
        let backing = backing.to_str().expect("a UTF-8 device path");
        let node = sh("losetup", &["--find", "--show", backing]);
        LoopDevice::attached(node, None)
    }

    fn attached(node: String, image: Option<Image>) -> LoopDevice {
        assert!(node.starts_with("/dev/loop"), "losetup printed {node:?}");
        LoopDevice { node, image }
    }

    /// The device node, `/dev/loopN`.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The device node as a path.
    pub fn path(&self) -> &Path {
        Path::new(&self.node)
    }

    /// The kernel's name for it (`loop3`), as in `/sys/block`.
    pub fn name(&self) -> String {
        kernel_name(self.path())
    }

    /// The image under it.
    pub fn image(&self) -> &Path {
        let image = self.image.as_ref();
        image
            .expect("a loop device over a device has no image")
            .path()
    }

    /// Partition `n` (`/dev/loopNpN`), once the kernel made it: `partx --add` adds partitions
    /// a kernel without the partition table's parser did not scan. Panics after 10 s.
    pub fn partition(&self, n: u32) -> PathBuf {
        let part = PathBuf::from(format!("{}p{n}", self.node));
        if !part.exists() {
            quiet("partx", &["--add", &self.node]);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while !part.exists() {
            assert!(
                Instant::now() < deadline,
                "{} never appeared",
                part.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        part
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        quiet("losetup", &["--detach", &self.node]);
    }
}

/// Makes file system `fs` on `device` with `-q -f`; ext4 without lazy init, since its
/// background inode-table and journal writes would move the device's counters during a test.
pub fn mkfs(fs: &str, device: &Path) {
    let device = device.to_str().expect("a UTF-8 device path");
    if fs == "ext4" {
        let eager = "lazy_itable_init=0,lazy_journal_init=0";
        sh("mkfs.ext4", &["-q", "-F", "-E", eager, device]);
    } else {
        sh(&format!("mkfs.{fs}"), &["-q", "-f", device]);
    }
}

/// A mount on a fresh scratch directory; unmounted on drop.
pub struct Mount(tempfile::TempDir);

impl Mount {
    /// Mounts `device` with mount `options` (`defaults`, `noatime`, ...), then syncs it so that
    /// writeback has nothing left to flush while the test counts the device's I/O.
    pub fn new(device: &Path, options: &str) -> Mount {
        let mount = Mount(scratch_dir());
        let (device, dir) = (device.to_str().unwrap(), mount.target());
        sh("mount", &["-o", options, device, &dir]);
        sh("sync", &["-f", &dir]);
        mount
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// The mount point as text, for a command line (`--target`).
    pub fn target(&self) -> String {
        self.path()
            .to_str()
            .expect("a UTF-8 scratch path")
            .to_string()
    }
}

impl Drop for Mount {
    /// Unmounts, retrying for a few seconds while the file system is busy: a process that just
    /// exited may still hold files in it (io_uring releases its files after the process is gone).
    fn drop(&mut self) {
        let dir = self.target();
        let deadline = Instant::now() + Duration::from_secs(10);
        while succeeds("mountpoint", &["-q", &dir]) {
            if succeeds("umount", &[&dir]) {
                return;
            }
            if Instant::now() > deadline {
                quiet("umount", &[&dir]); // says why, once
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A file system on a fresh loop device, mounted: the usual target of a run.
pub struct LoopFs {
    /// The mount (first, so it is unmounted before the device is detached).
    pub mount: Mount,
    /// The loop device under it.
    pub device: LoopDevice,
}

impl LoopFs {
    /// `fs` made on a loop device over an image of `bytes`, mounted with `options`.
    pub fn new(bytes: u64, fs: &str, options: &str) -> LoopFs {
        let device = LoopDevice::new(bytes);
        mkfs(fs, device.path());
        let mount = Mount::new(device.path(), options);
        LoopFs { mount, device }
    }

    /// The mount point as text, for `--target`.
    pub fn target(&self) -> String {
        self.mount.target()
    }
}

/// Makes `device` "ambivalent" to `blkid -p` (exit 8): an xfs file system with a btrfs
/// superblock copied in at 64 KiB from a donor device. A device with signatures of two types.
pub fn make_ambivalent(device: &LoopDevice) {
    let donor = LoopDevice::new(256 << 20);
    mkfs("xfs", device.path());
    mkfs("btrfs", donor.path());
    let from = format!("if={}", donor.node());
    let to = format!("of={}", device.node());
    let one_block_at_64k = ["bs=4096", "skip=16", "seek=16", "count=1"];
    let rest = ["conv=notrunc,fsync", "status=none"];
    sh(
        "dd",
        &[&[from.as_str(), &to][..], &one_block_at_64k[..], &rest[..]].concat(),
    );
}

/// The kernel's name (`vda`, `loop3p1`) of the block device at `path`, found by device number,
/// so that any alias (a symlink, a node made elsewhere) gives the same name.
pub fn kernel_name(path: &Path) -> String {
    let rdev = std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .rdev();
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).unwrap();
    sys.file_name().unwrap().to_string_lossy().into_owned()
}

/// Writes completed on block device `name` so far (field 5 of its `stat`). A loop device's
/// counters survive detach and re-attach: compare two readings, do not expect zero.
pub fn device_writes(name: &str) -> u64 {
    let path = format!("/sys/class/block/{name}/stat");
    let stat = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    stat.split_whitespace().nth(4).unwrap().parse().unwrap()
}
