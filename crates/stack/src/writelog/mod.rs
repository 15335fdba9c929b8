//! The write-logging layer under a stack's loop devices (`--crash-states`): this kernel has no
//! device-mapper, so no dm-log-writes; instead a FUSE file system ([`serve`], on fuser's
//! session thread in this process) serves the images from a backing directory, and a loop
//! device is attached over each image *on the FUSE mount*. Every write the loop device issues,
//! every range it zeroes (discard, write-zeroes) and every flush (the loop driver's fsync of its
//! file, which is what a file system's flush and FUA become on a loop device) reaches the
//! daemon in order and is recorded in the write log ([`format`]) before it is applied to the
//! backing image. docs/durability.md documents the format and what was measured.
//!
//! Every side effect is in the ledger before it happens: the mount point, the FUSE mount
//! (`Unmount`) and each loop device over it (`DetachLoop`, undone first), so `bakeoff cleanup`
//! after a kill -9 detaches the loop devices and unmounts the dead FUSE mount. A [`Recorder`]
//! dropped without [`Recorder::finish`] detaches its loop devices and unmounts too.

pub mod copy;
pub mod format;
pub mod orphans;
mod read;
mod serve;

pub use copy::{copy_image, CopyKind};
pub use format::{monotonic_ns, Entry, ImageInfo, LogError, LogWriter, Op};
pub use read::LogReader;

use crate::error::StackError;
use crate::exec::Exec;
use crate::ledger::Ledger;
use crate::undo::{self, Undo};
use serde::Serialize;
use serve::{Image, ImageFs, Journal, Shared};
use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once};

/// What recording cost, reported beside the run (this mode is for risk, not speed).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Overhead {
    /// Records in the log (writes, zeroed ranges, flushes).
    pub records: u64,
    /// Writes recorded, and their bytes.
    pub writes: u64,
    pub write_bytes: u64,
    /// Ranges zeroed (discards, write-zeroes), and their bytes.
    pub zeroes: u64,
    pub zero_bytes: u64,
    /// Flushes recorded.
    pub flushes: u64,
    /// Reads served (not logged), and their bytes.
    pub reads: u64,
    pub read_bytes: u64,
    /// The log's size: header, records and data.
    pub log_bytes: u64,
    /// Time spent encoding and writing records (buffered) on the daemon's thread.
    pub logging_ns: u64,
    /// Time spent writing and zeroing the backing images.
    pub applying_ns: u64,
    /// Time spent in `fdatasync` of a backing image on a flush.
    pub syncing_ns: u64,
    /// Whether the daemon's thread runs as an I/O flusher (`PR_SET_IO_FLUSHER`).
    pub io_flusher: bool,
}

/// Where a recorder serves from, where, and where it logs.
#[derive(Clone, Debug)]
pub struct RecorderOptions {
    /// The directory holding the images (created and sized by the caller).
    pub backing_dir: PathBuf,
    /// The images' file names in `backing_dir`, in the order the log numbers them.
    pub images: Vec<String>,
    /// Where to mount the FUSE file system (created if missing; must be empty).
    pub mountpoint: PathBuf,
    /// The log to write (must not exist).
    pub log: PathBuf,
}

/// A loop device over an image on the recorder's mount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedLoop {
    /// `/dev/loopN`.
    pub device: String,
    /// The image on the FUSE mount the loop device sits on.
    pub image: PathBuf,
    /// Whether the loop driver took direct I/O (`/sys/block/loopN/loop/dio`).
    pub direct_io: bool,
}

/// What a finished recording left: its log and what it cost.
#[derive(Clone, Debug)]
pub struct Recording {
    /// The log, complete with its end record.
    pub log: PathBuf,
    /// The images it covers.
    pub images: Vec<ImageInfo>,
    /// What recording cost.
    pub overhead: Overhead,
}

/// A running write-logging FUSE mount and the loop devices attached over it.
pub struct Recorder {
    session: Option<fuser::BackgroundSession>,
    shared: Arc<Shared>,
    mountpoint: PathBuf,
    loops: Vec<PathBuf>,
}

impl Recorder {
    /// Serves `opts.images` at `opts.mountpoint`, logging to `opts.log`; the mount point and the
    /// mount are recorded in `ledger` first.
    pub fn start(opts: &RecorderOptions, ledger: &mut Ledger) -> Result<Recorder, StackError> {
        let images = open_images(opts)?;
        let infos = infos(&images);
        let writer = new_log(&opts.log, &infos)?;
        let shared = Arc::new(Shared {
            journal: Mutex::new(Journal {
                writer: Some(writer),
                overhead: Overhead::default(),
                failure: None,
                unflushed: vec![0; images.len()],
                log_path: opts.log.clone(),
            }),
            images,
            backing_dir: opts.backing_dir.clone(),
        });
        let mnt = &opts.mountpoint;
        ledger.record(Undo::RemoveDir { path: mnt.clone() })?;
        std::fs::create_dir_all(mnt).map_err(StackError::io("creating the mount point", mnt))?;
        let empty = std::fs::read_dir(mnt).map(|mut d| d.next().is_none());
        if !empty.map_err(StackError::io("reading the mount point", mnt))? {
            let what = format!(
                "{}: the write log's mount point is not empty",
                mnt.display()
            );
            return Err(StackError::Environment(what));
        }
        ledger.record(Undo::Unmount { path: mnt.clone() })?;
        let fs = ImageFs {
            shared: shared.clone(),
            io_flusher: Once::new(),
        };
        let session = fuser::Session::new(fs, mnt, &mount_config())
            .and_then(fuser::Session::spawn)
            .map_err(|e| {
                let what = format!(
                    "mounting the write log's FUSE file system on {}: {e} (is /dev/fuse there, \
                     and are we root?)",
                    mnt.display()
                );
                StackError::Environment(what)
            })?;
        Ok(Recorder {
            session: Some(session),
            shared,
            mountpoint: mnt.clone(),
            loops: Vec::new(),
        })
    }

    /// The path of image `name` on the mount (what a loop device is attached over).
    pub fn image_path(&self, name: &str) -> PathBuf {
        self.mountpoint.join(name)
    }

    /// Attaches a loop device (direct I/O asked for) over image `name` on the mount; recorded
    /// in `ledger` first, and detached again by [`Recorder::finish`] or on drop.
    pub fn attach_loop(
        &mut self,
        name: &str,
        exec: &mut Exec,
        ledger: &mut Ledger,
    ) -> Result<LoggedLoop, StackError> {
        let image = self.image_path(name);
        ledger.record(Undo::DetachLoop {
            backing: image.clone(),
        })?;
        self.loops.push(image.clone());
        let path = image.to_string_lossy().into_owned();
        let device = exec
            .run("losetup", &["--find", "--show", "--direct-io=on", &path])?
            .trim()
            .to_string();
        let dio = std::fs::read_to_string(format!(
            "/sys/block/{}/loop/dio",
            device.trim_start_matches("/dev/")
        ));
        Ok(LoggedLoop {
            device,
            image,
            direct_io: dio.is_ok_and(|d| d.trim() == "1"),
        })
    }

    /// Records logged so far. Read right after a commit was acknowledged (its fsync
    /// returned), it is a crash point from which on the commit must survive: its flush is
    /// among the records before it.
    pub fn records(&self) -> u64 {
        self.shared.journal().overhead.records
    }

    /// What recording has cost so far.
    pub fn overhead(&self) -> Overhead {
        self.shared.journal().overhead.clone()
    }

    /// Starts a new log from here: ends the current log, copies every backing image into
    /// `base_dir` (reflinked or sparse) while the daemon waits, and logs on to `log`. The
    /// copies are the base the new log's crash states start from, so every image must be
    /// flushed with nothing written since (sync the stack first: `sync -f MOUNT`); otherwise
    /// this refuses, naming the image. Returns the ended log's overhead; the new log's starts
    /// from zero.
    pub fn checkpoint(&self, base_dir: &Path, log: &Path) -> Result<Overhead, StackError> {
        let mut journal = self.shared.journal();
        let images = &self.shared.images;
        if let Some((i, n)) = journal.unflushed.iter().enumerate().find(|(_, &n)| n > 0) {
            let what = format!(
                "cannot start a new write log: {} has {n} write(s) since its last flush (sync \
                 the stack first)",
                images[i].name
            );
            return Err(StackError::Environment(what));
        }
        for image in images {
            let from = self.shared.backing_dir.join(&image.name);
            copy_image(&from, &base_dir.join(&image.name))?;
        }
        let infos = infos(images);
        let writer = new_log(log, &infos)?;
        if let Some(old) = journal.writer.replace(writer) {
            finish_log(old, &journal.log_path)?;
        }
        journal.log_path = log.to_path_buf();
        Ok(std::mem::take(&mut journal.overhead))
    }

    /// Detaches the loop devices attached here (the caller has unmounted what was on them),
    /// unmounts, and ends the log with its end record. Fails if a write could not be logged
    /// or applied during the run (the run's I/O failed then too).
    pub fn finish(mut self, exec: &mut Exec) -> Result<Recording, StackError> {
        self.stop(exec).map_err(StackError::Environment)?;
        let mut journal = self.shared.journal();
        if let Some(failure) = journal.failure.take() {
            return Err(StackError::Environment(failure));
        }
        let log = journal.log_path.clone();
        if let Some(writer) = journal.writer.take() {
            journal.overhead.log_bytes = finish_log(writer, &log)?;
        }
        Ok(Recording {
            log,
            images: infos(&self.shared.images),
            overhead: journal.overhead.clone(),
        })
    }

    /// Detaches our loop devices, then unmounts; if the mount is still busy (a loop device
    /// someone else holds), detaches it lazily and leaves the session thread to end when the
    /// last user lets go.
    fn stop(&mut self, exec: &mut Exec) -> Result<(), String> {
        let mut failures = Vec::new();
        for image in self.loops.drain(..) {
            if let Err(e) = undo::perform(&Undo::DetachLoop { backing: image }, exec) {
                failures.push(e);
            }
        }
        if let Some(session) = self.session.take() {
            if let Err(e) = session.umount_and_join() {
                let lazily = undo::perform(
                    &Undo::Unmount {
                        path: self.mountpoint.clone(),
                    },
                    exec,
                );
                let mnt = self.mountpoint.display();
                failures.push(format!("unmounting {mnt}: {e} (lazily: {lazily:?})"));
            }
        }
        match failures.is_empty() {
            true => Ok(()),
            false => Err(failures.join("; ")),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Err(e) = self.stop(&mut Exec::default()) {
            eprintln!("bakeoff: warning: stopping the write log: {e}");
        }
    }
}

/// Mount options: source and type say what it is in `findmnt` (`bakeoff-writelog`, type
/// `fuse.bakeoff-writelog`, which the leftover checks look for); only root may use it (no
/// `allow_other`); no devices, set-uid files or programs on it.
fn mount_config() -> fuser::Config {
    use fuser::MountOption::{FSName, NoDev, NoExec, NoSuid, CUSTOM};
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        // With the serving process's id: `bakeoff cleanup` aborts the mount of one that was
        // killed (`orphans`).
        FSName(orphans::fs_name(std::process::id())),
        // fuser hands `Subtype` only to fusermount; mounting directly, the kernel takes it as
        // a mount option.
        CUSTOM("subtype=bakeoff-writelog".into()),
        NoDev,
        NoSuid,
        NoExec,
    ];
    // One session thread (the default): requests are handled, logged and answered in the
    // order they arrive.
    config.n_threads = Some(1);
    config
}

fn open_images(opts: &RecorderOptions) -> Result<Vec<Image>, StackError> {
    if opts.images.is_empty() {
        return Err(StackError::Environment(
            "the write log serves no image".into(),
        ));
    }
    opts.images
        .iter()
        .map(|name| {
            let path = opts.backing_dir.join(name);
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(StackError::io("opening the image to log", &path))?;
            let size = file
                .metadata()
                .map_err(StackError::io("reading the size of", &path))?
                .len();
            Ok(Image {
                name: name.clone(),
                file,
                size,
            })
        })
        .collect()
}

fn new_log(path: &Path, images: &[ImageInfo]) -> Result<LogWriter<BufWriter<File>>, StackError> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(StackError::io("creating the write log", path))?;
    LogWriter::new(BufWriter::with_capacity(4 << 20, file), images)
        .map_err(StackError::io("writing the write log", path))
}

/// Writes the end record and flushes; returns the log's size.
fn finish_log(writer: LogWriter<BufWriter<File>>, path: &Path) -> Result<u64, StackError> {
    let (_, bytes) = writer
        .finish()
        .map_err(StackError::io("ending the write log", path))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests;

/// What the log's header says of each image.
fn infos(images: &[Image]) -> Vec<ImageInfo> {
    let info = |i: &Image| ImageInfo {
        name: i.name.clone(),
        size_bytes: i.size,
    };
    images.iter().map(info).collect()
}
