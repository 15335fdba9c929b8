//! Each file operation: its system calls, timed as one operation. An operation that finds
//! nothing to work on (no existing file to open, no free name to create: the thread's share of
//! the tree is exhausted) is skipped and not counted.

use super::{FileWorker, Place};
use crate::shared::RunError;
use bakeoff_core::fileop::{FileOp, FileStep};
use rustix::fd::AsFd;
use rustix::fs::{Mode, OFlags, RawDir, SeekFrom, Timespec, Timestamps, CWD, UTIME_NOW};
use std::ffi::CStr;

/// The error of a failed file operation, naming the file (only on the error path: it
/// allocates).
#[cold]
fn failed(op: &str, path: &CStr, e: rustix::io::Errno) -> RunError {
    RunError::File {
        op: op.to_string(),
        path: path.to_string_lossy().into_owned(),
        source: e.into(),
    }
}

/// The path of local file `l` of `place`.
fn path(place: &Place, l: u32) -> &CStr {
    &place.tree.files[place.owned.files[l as usize] as usize]
}

/// Writes all of `buf` at `offset`.
fn write_all_at(fd: impl AsFd, mut buf: &[u8], mut offset: u64) -> rustix::io::Result<()> {
    while !buf.is_empty() {
        let n = rustix::io::pwrite(&fd, buf, offset)?;
        if n == 0 {
            return Err(rustix::io::Errno::NOSPC);
        }
        buf = &buf[n..];
        offset += n as u64;
    }
    Ok(())
}

impl FileWorker {
    /// Runs one file step on place `p` and records it.
    pub(super) fn file_op(&mut self, p: usize, f: &FileStep) -> Result<(), RunError> {
        let sched = self.next_start();
        let start = match self.schedule {
            None => sched,
            Some(_) => self.shared.now_ns(),
        };
        let done = match f.op {
            FileOp::Create => self.create(p)?,
            FileOp::Delete => self.delete(p)?,
            FileOp::Open => {
                self.places[p].open = None;
                self.open_existing(p)?.then_some(0)
            }
            FileOp::Close => self.places[p].open.take().map(|_| 0),
            FileOp::Stat | FileOp::Setattr => self.attributes(p, f.op)?,
            FileOp::Readdir => self.readdir(p)?,
            FileOp::Rename => self.rename(p)?,
            _ => self.on_open_file(p, f)?,
        };
        let end = self.shared.now_ns();
        if let Some(bytes) = done {
            let measured = self.shared.in_window(end);
            let kind = f.op.kind();
            self.stats
                .record(kind, bytes, end - sched, end - start, measured);
        }
        Ok(())
    }

    /// Creates a file under a free name; it becomes the open file (closed at once in a mix).
    fn create(&mut self, p: usize) -> Result<Option<u64>, RunError> {
        let place = &mut self.places[p];
        place.open = None;
        let Some(l) = place.owned.pick_free(&mut self.rng) else {
            return Ok(None);
        };
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(
            CWD,
            path(place, l),
            flags | self.sync_flags,
            Mode::from(0o644),
        )
        .map_err(|e| failed("create", path(place, l), e))?;
        place.owned.set_exists(l, true);
        place.owned.sizes[l as usize] = 0;
        if !self.cumulative.is_empty() {
            drop(fd);
        } else {
            place.open = Some((fd, l));
        }
        Ok(Some(0))
    }

    /// Opens a random existing file as the open file; false if there is none.
    fn open_existing(&mut self, p: usize) -> Result<bool, RunError> {
        let place = &mut self.places[p];
        let Some(l) = place.owned.pick_existing(&mut self.rng, None) else {
            return Ok(false);
        };
        let access = if place.writable {
            OFlags::RDWR
        } else {
            OFlags::RDONLY
        };
        let flags = access | OFlags::CLOEXEC | self.sync_flags;
        let fd = rustix::fs::openat(CWD, path(place, l), flags, Mode::empty())
            .map_err(|e| failed("open", path(place, l), e))?;
        place.open = Some((fd, l));
        Ok(true)
    }

    /// Deletes a random existing file that is not open.
    fn delete(&mut self, p: usize) -> Result<Option<u64>, RunError> {
        let place = &mut self.places[p];
        let open = place.open.as_ref().map(|(_, l)| *l);
        let Some(l) = place.owned.pick_existing(&mut self.rng, open) else {
            return Ok(None);
        };
        rustix::fs::unlinkat(CWD, path(place, l), rustix::fs::AtFlags::empty())
            .map_err(|e| failed("delete", path(place, l), e))?;
        place.owned.set_exists(l, false);
        Ok(Some(0))
    }

    /// Renames a random existing file that is not open to a free name (in any directory).
    fn rename(&mut self, p: usize) -> Result<Option<u64>, RunError> {
        let place = &mut self.places[p];
        let open = place.open.as_ref().map(|(_, l)| *l);
        let (Some(from), Some(to)) = (
            place.owned.pick_existing(&mut self.rng, open),
            place.owned.pick_free(&mut self.rng),
        ) else {
            return Ok(None);
        };
        rustix::fs::renameat(CWD, path(place, from), CWD, path(place, to))
            .map_err(|e| failed("rename", path(place, from), e))?;
        place.owned.set_exists(from, false);
        place.owned.set_exists(to, true);
        place.owned.sizes[to as usize] = place.owned.sizes[from as usize];
        Ok(Some(0))
    }

    /// Stats, or sets the times of, a random existing file by path.
    fn attributes(&mut self, p: usize, op: FileOp) -> Result<Option<u64>, RunError> {
        let place = &self.places[p];
        let Some(l) = place.owned.pick_existing(&mut self.rng, None) else {
            return Ok(None);
        };
        let path = path(place, l);
        let result = if op == FileOp::Stat {
            rustix::fs::statat(CWD, path, rustix::fs::AtFlags::empty()).map(drop)
        } else {
            let now = Timespec {
                tv_sec: 0,
                tv_nsec: UTIME_NOW,
            };
            let times = Timestamps {
                last_access: now,
                last_modification: now,
            };
            rustix::fs::utimensat(CWD, path, &times, rustix::fs::AtFlags::empty())
        };
        result.map_err(|e| failed(op.name(), path, e))?;
        Ok(Some(0))
    }

    /// Lists every entry of a random leaf directory.
    fn readdir(&mut self, p: usize) -> Result<Option<u64>, RunError> {
        let place = &self.places[p];
        let leaves = &place.tree.tree.leaves;
        let dir = &place.tree.dirs[leaves[self.rng.usize(0..leaves.len())] as usize];
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(CWD, dir, flags, Mode::empty())
            .map_err(|e| failed("readdir", dir, e))?;
        let mut entries = RawDir::new(&fd, &mut self.dirbuf);
        while let Some(entry) = entries.next() {
            entry.map_err(|e| failed("readdir", dir, e))?;
        }
        Ok(Some(0))
    }

    /// An operation on the open file, opening a random existing one first if none is (left
    /// open in a loop of steps, closed at once in a mix).
    fn on_open_file(&mut self, p: usize, f: &FileStep) -> Result<Option<u64>, RunError> {
        let opened_here = self.places[p].open.is_none();
        if opened_here && !self.open_existing(p)? {
            return Ok(None);
        }
        let bytes = self.transfer(p, f);
        if opened_here && self.in_mix() {
            self.places[p].open = None;
        }
        bytes.map(Some)
    }

    /// Reads, writes, appends to or syncs the open file; returns the bytes moved.
    fn transfer(&mut self, p: usize, f: &FileStep) -> Result<u64, RunError> {
        let place = &mut self.places[p];
        let Some((fd, l)) = &place.open else {
            return Ok(0);
        };
        let (l, bs) = (*l, f.bs as usize);
        let size = place.owned.sizes[l as usize];
        let err = |op: FileOp| {
            let place: &Place = place;
            move |e| failed(op.name(), path(place, l), e)
        };
        let moved = match f.op {
            FileOp::Fsync => rustix::fs::fsync(fd).map(|()| 0).map_err(err(f.op))?,
            FileOp::ReadWhole => {
                let mut off = 0u64;
                loop {
                    let buf = &mut self.rbuf.as_mut_slice()[..bs];
                    match rustix::io::pread(fd, buf, off).map_err(err(f.op))? {
                        0 => break off,
                        n => off += n as u64,
                    }
                }
            }
            FileOp::Read => {
                let off = size.saturating_sub(bs as u64);
                let off = self.rng.u64(0..=off) & !4095;
                let buf = &mut self.rbuf.as_mut_slice()[..bs];
                rustix::io::pread(fd, buf, off).map_err(err(f.op))? as u64
            }
            FileOp::Append | FileOp::Write | FileOp::WriteWhole => {
                self.stamp += 1;
                let stamp = self.stamp.to_le_bytes();
                self.wbuf.as_mut_slice()[..8].copy_from_slice(&stamp);
                let (off, len) = match f.op {
                    FileOp::Append if f.random => (None, self.rng.u64(1..=f.bs)),
                    FileOp::Append => (None, f.bs),
                    FileOp::Write => (Some(self.rng.u64(0..size.max(1)) & !4095), f.bs),
                    _ => (
                        Some(0),
                        place.tree.tree.files[place.owned.files[l as usize] as usize].size,
                    ),
                };
                let off = match off {
                    Some(off) => off,
                    None => rustix::fs::seek(fd, SeekFrom::End(0)).map_err(err(f.op))?,
                };
                let mut done = 0u64;
                while done < len {
                    let n = (len - done).min(bs as u64) as usize;
                    write_all_at(fd, &self.wbuf.as_slice()[..n], off + done).map_err(err(f.op))?;
                    done += n as u64;
                }
                place.owned.sizes[l as usize] = size.max(off + len);
                len
            }
            _ => 0,
        };
        Ok(moved)
    }
}
