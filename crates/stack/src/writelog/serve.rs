//! The FUSE file system under the loop devices: a flat directory of a fixed set of image files
//! from the backing directory. Every write, zeroed range and flush is recorded in the write log
//! first, then applied to the backing image, under one lock and on fuser's one session thread,
//! so the log's order is the order the requests reached the daemon (and the order they were
//! acknowledged: the reply goes out after both).
//!
//! Files are opened with `FOPEN_DIRECT_IO` and without `keep_cache`, and the connection does
//! not ask for `FUSE_WRITEBACK_CACHE` (fuser's default): no page cache of the image sits
//! between the loop device and the daemon, so a write reaches the daemon when the loop device
//! issues it, not when the kernel writes back a page, and a read always sees the backing image
//! (docs/durability.md says why each matters).

use super::format::LogWriter;
use super::Overhead;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen,
    ReplyStatfs, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufWriter};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::{Duration, Instant, SystemTime};

/// The sizes never change behind the kernel's back: it may keep attributes as long as it likes.
const TTL: Duration = Duration::from_secs(24 * 3600);
const FALLOC_FL_KEEP_SIZE: i32 = 0x01;
const FALLOC_FL_PUNCH_HOLE: i32 = 0x02;
const FALLOC_FL_ZERO_RANGE: i32 = 0x10;

/// One image served.
pub(super) struct Image {
    /// Its file name, in the backing directory and on the mount.
    pub name: String,
    /// The backing image, open for reading and writing.
    pub file: File,
    /// Its size in bytes (fixed while served).
    pub size: u64,
}

/// What the session thread and the recorder share: the log and its counters.
pub(super) struct Journal {
    /// The log being written; `None` once finished.
    pub writer: Option<LogWriter<BufWriter<File>>>,
    /// The recorder's overhead so far.
    pub overhead: Overhead,
    /// The first failure to write the log or the backing image; every write after it fails.
    pub failure: Option<String>,
    /// Writes (and zeroed ranges) per image since its last flush.
    pub unflushed: Vec<u64>,
    /// Where the log being written is.
    pub log_path: PathBuf,
}

/// The images and the journal, shared with the [`super::Recorder`].
pub(super) struct Shared {
    pub images: Vec<Image>,
    pub journal: Mutex<Journal>,
    /// The directory the images are served from.
    pub backing_dir: PathBuf,
}

impl Shared {
    /// The journal, also after a panic on the session thread (its state stays consistent:
    /// every change to it is a single assignment or counter update).
    pub fn journal(&self) -> MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The fuser file system.
pub(super) struct ImageFs {
    pub shared: Arc<Shared>,
    pub io_flusher: Once,
}

impl ImageFs {
    fn image(&self, ino: INodeNo) -> Result<(u32, &Image), Errno> {
        let index = u64::from(ino).checked_sub(2).ok_or(Errno::EISDIR)?;
        let image = self
            .shared
            .images
            .get(index as usize)
            .ok_or(Errno::ENOENT)?;
        Ok((index as u32, image))
    }

    fn attr(&self, ino: INodeNo) -> Result<FileAttr, Errno> {
        let (kind, perm, size) = match u64::from(ino) {
            1 => (FileType::Directory, 0o755, 0),
            _ => (FileType::RegularFile, 0o600, self.image(ino)?.1.size),
        };
        Ok(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: SystemTime::UNIX_EPOCH,
            mtime: SystemTime::UNIX_EPOCH,
            ctime: SystemTime::UNIX_EPOCH,
            crtime: SystemTime::UNIX_EPOCH,
            kind,
            perm,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// Marks the session thread as a block device's daemon (`PR_SET_IO_FLUSHER`): its memory
    /// allocations then never wait for I/O, which could be I/O to the loop devices it serves.
    fn once_io_flusher(&self) {
        self.io_flusher.call_once(|| {
            let ok = rustix::process::configure_io_flusher_behavior(true).is_ok();
            self.shared.journal().overhead.io_flusher = ok;
        });
    }

    /// Logs with `log`, then applies with `apply`, timing both; after a failure, refuses.
    fn change(
        &self,
        image: u32,
        log: impl FnOnce(&mut LogWriter<BufWriter<File>>) -> io::Result<u64>,
        apply: impl FnOnce(&mut Overhead) -> io::Result<()>,
    ) -> Result<(), Errno> {
        let mut journal = self.shared.journal();
        let j = &mut *journal;
        if j.failure.is_some() {
            return Err(Errno::EIO);
        }
        let Some(writer) = j.writer.as_mut() else {
            return Err(Errno::EROFS);
        };
        let start = Instant::now();
        if let Err(e) = log(writer) {
            let path = j.log_path.display();
            j.failure = Some(format!("writing the write log {path}: {e}"));
            return Err(Errno::EIO);
        }
        j.overhead.log_bytes = writer.bytes();
        j.overhead.records = writer.records();
        let logged = Instant::now();
        j.overhead.logging_ns += nanos(logged - start);
        if let Err(e) = apply(&mut j.overhead) {
            let name = &self.shared.images[image as usize].name;
            j.failure = Some(format!("applying a write to the backing image {name}: {e}"));
            return Err(Errno::from(e));
        }
        j.overhead.applying_ns += nanos(logged.elapsed());
        Ok(())
    }
}

impl Filesystem for ImageFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        self.once_io_flusher();
        let found = (u64::from(parent) == 1)
            .then(|| {
                self.shared
                    .images
                    .iter()
                    .position(|i| OsStr::new(&i.name) == name)
            })
            .flatten();
        match found.map(|i| self.attr(INodeNo(i as u64 + 2))) {
            Some(Ok(attr)) => reply.entry(&TTL, &attr, Generation(0)),
            Some(Err(e)) => reply.error(e),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // The images have the size they were served with: a resize would change the device
        // under the loop driver, which the log has no record for.
        match self.attr(ino) {
            Ok(attr) if size.is_none_or(|s| s == attr.size) => reply.attr(&TTL, &attr),
            Ok(_) => reply.error(Errno::EPERM),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.image(ino) {
            Ok(_) => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let (_, image) = match self.image(ino) {
            Ok(found) => found,
            Err(e) => return reply.error(e),
        };
        let len = (size as u64).min(image.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; len];
        match image.file.read_exact_at(&mut buf, offset) {
            Ok(()) => {
                let mut journal = self.shared.journal();
                journal.overhead.reads += 1;
                journal.overhead.read_bytes += len as u64;
                reply.data(&buf)
            }
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let (index, image) = match self.image(ino) {
            Ok(found) => found,
            Err(e) => return reply.error(e),
        };
        if offset.saturating_add(data.len() as u64) > image.size {
            return reply.error(Errno::ENOSPC);
        }
        let done = self.change(
            index,
            |log| log.write(index, offset, data),
            |o| {
                image.file.write_all_at(data, offset)?;
                o.writes += 1;
                o.write_bytes += data.len() as u64;
                Ok(())
            },
        );
        match done {
            Ok(()) => {
                self.shared.journal().unflushed[index as usize] += 1;
                reply.written(data.len() as u32)
            }
            Err(e) => reply.error(e),
        }
    }

    fn fsync(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _d: bool, reply: ReplyEmpty) {
        let (index, image) = match self.image(ino) {
            Ok(found) => found,
            Err(e) => return reply.error(e),
        };
        // The backing image is synced too, so a flush costs about what it costs on a loop
        // device straight over the image (the host never loses it: the log is the record).
        let done = self.change(
            index,
            |log| log.flush(index),
            |o| {
                let start = Instant::now();
                image.file.sync_data()?;
                o.flushes += 1;
                o.syncing_ns += nanos(start.elapsed());
                Ok(())
            },
        );
        match done {
            Ok(()) => {
                self.shared.journal().unflushed[index as usize] = 0;
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let (index, image) = match self.image(ino) {
            Ok(found) => found,
            Err(e) => return reply.error(e),
        };
        let zeroes = mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) != 0;
        let known = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
        let beyond = offset.saturating_add(length) > image.size;
        if mode & !known != 0 || (zeroes && mode & FALLOC_FL_KEEP_SIZE == 0) || beyond {
            return reply.error(Errno::EOPNOTSUPP);
        }
        let apply = |o: &mut Overhead| {
            let flags = rustix::fs::FallocateFlags::from_bits_retain(mode as u32);
            rustix::fs::fallocate(&image.file, flags, offset, length)?;
            if zeroes {
                o.zeroes += 1;
                o.zero_bytes += length;
            }
            Ok(())
        };
        // A preallocation changes no byte the device reads: applied, not logged.
        let done = match zeroes {
            true => self.change(index, |log| log.zero(index, offset, length), apply),
            false => apply(&mut self.shared.journal().overhead).map_err(Errno::from),
        };
        match done {
            Ok(()) => {
                self.shared.journal().unflushed[index as usize] += u64::from(zeroes);
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lo: LockOwner, r: ReplyEmpty) {
        // close(2) of a descriptor: nothing to make durable (fsync is what flushes).
        r.ok();
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, off: u64, r: ReplyDirectory) {
        if u64::from(ino) != 1 {
            return r.error(Errno::ENOTDIR);
        }
        let mut reply = r;
        let dots = [
            (1, FileType::Directory, "."),
            (1, FileType::Directory, ".."),
        ];
        let images = self.shared.images.iter().enumerate();
        let files = images.map(|(i, im)| (i as u64 + 2, FileType::RegularFile, im.name.as_str()));
        for (i, (ino, kind, name)) in dots.into_iter().chain(files).enumerate().skip(off as usize) {
            if reply.add(INodeNo(ino), i as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let total: u64 = self
            .shared
            .images
            .iter()
            .map(|i| i.size.div_ceil(4096))
            .sum();
        let files = self.shared.images.len() as u64;
        reply.statfs(total, 0, 0, files, 0, 4096, 255, 4096);
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
