//! One replayed call: the system call the captured one made, on the thread's own descriptor,
//! with its result as the trace writes results (bytes, a position, 0, or `-errno`), and the
//! rule that says whether it matches the captured one.

use super::files::{self, open, open_flags, Fds};
use super::state::Replay;
use super::sys;
use crate::buffers::{fill, AlignedBuf, ALIGN};
use bakeoff_core::plan::OpKind;
use bakeoff_core::trace::{FileId, FileKind, OpCode, Record};
use rustix::fs::{Advice, FallocateFlags, OFlags, SeekFrom};
use std::num::NonZeroU64;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;

/// Largest buffer a thread holds: longer calls are issued in pieces of this size.
pub const MAX_BUF: u64 = 64 << 20;

/// A thread's descriptors and data buffer.
pub struct Issuer {
    /// Its descriptors.
    pub fds: Fds,
    buf: AlignedBuf,
    stamp: u64,
}

pub(super) fn errno(e: rustix::io::Errno) -> i64 {
    -i64::from(e.raw_os_error())
}

fn result(r: rustix::io::Result<()>) -> i64 {
    r.map_or_else(errno, |()| 0)
}

impl Issuer {
    /// The issuer of thread `thread`: a buffer for its largest read or write, filled with
    /// incompressible bytes from `seed`.
    pub fn new(state: &Replay, thread: usize, seed: u64) -> Issuer {
        let ops = &state.loaded.trace.ops[thread];
        let largest = (ops.iter())
            .filter(|r| matches!(r.op, Some(OpCode::Read | OpCode::Write)))
            .map(|r| r.len)
            .max()
            .unwrap_or(0)
            .min(MAX_BUF);
        let mut buf = AlignedBuf::new(largest as usize);
        let mut rng = fastrand::Rng::with_seed(seed ^ (thread as u64).wrapping_mul(0x9E37_79B9));
        fill(buf.as_mut_slice(), &mut rng, 0);
        Issuer {
            fds: Fds::new(state.loaded.trace.handles.len()),
            buf,
            stamp: seed.rotate_left(32) ^ ((thread as u64) << 48),
        }
    }

    /// Replays `r` (on `file`, as the program resolved it); returns its result.
    pub fn issue(&mut self, state: &Replay, r: &Record, file: Option<FileId>) -> i64 {
        let Some(op) = r.op else { return 0 };
        match op {
            OpCode::Rename | OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir => {
                namespace(state, op, r, file)
            }
            OpCode::Open => self.open(state, r),
            OpCode::Close => {
                // A handle this thread never opened (another thread did) closes nothing.
                let _ = self.fds.close(r.handle.unwrap_or(u32::MAX));
                0
            }
            _ => self.on_handle(state, op, r).unwrap_or_else(errno),
        }
    }

    fn open(&mut self, state: &Replay, r: &Record) -> i64 {
        let Some(handle) = r.handle else {
            // A failed open made no handle: it is tried again on its path, and must fail as
            // it did (PostgreSQL probes files it will create).
            let Some(path) = usize::try_from(r.arg)
                .ok()
                .and_then(|id| state.paths.get(id))
            else {
                return 0;
            };
            let creation = OFlags::from_bits_retain((r.arg2 as u32) & files::AT_OPEN);
            return match open(path, creation | OFlags::RDONLY | OFlags::CLOEXEC) {
                Ok(_) => 0,
                Err(e) => errno(e),
            };
        };
        let path = match usize::try_from(r.arg) {
            Ok(id) if id < state.paths.len() => state.paths[id].clone(),
            _ => {
                let file = state
                    .loaded
                    .trace
                    .handles
                    .get(handle as usize)
                    .map(|h| h.file);
                state.current_path(file.unwrap_or(u32::MAX))
            }
        };
        match open(&path, open_flags(state, handle, Some(r.arg2))) {
            Ok(fd) => {
                self.fds.set(handle, fd);
                0
            }
            Err(e) => errno(e),
        }
    }

    fn on_handle(&mut self, state: &Replay, op: OpCode, r: &Record) -> rustix::io::Result<i64> {
        let handle = r.handle.ok_or(rustix::io::Errno::BADF)?;
        let fd: &OwnedFd = self.fds.get(state, handle)?;
        Ok(match op {
            OpCode::Read => read(fd, &mut self.buf, r.offset, r.len)?,
            OpCode::Write => {
                let stamp = &mut self.stamp;
                write(fd, &mut self.buf, stamp, r.offset, r.len)?
            }
            OpCode::Fsync => result(rustix::fs::fsync(fd)),
            OpCode::Fdatasync => result(rustix::fs::fdatasync(fd)),
            OpCode::Syncfs => result(rustix::fs::syncfs(fd)),
            OpCode::SyncFileRange => {
                match sys::sync_file_range(fd, r.offset, r.len, r.arg as u32) {
                    Ok(()) => 0,
                    Err(e) => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
                }
            }
            OpCode::Fallocate => {
                let mode = FallocateFlags::from_bits_retain(r.arg as u32);
                match rustix::fs::fallocate(fd, mode, r.offset, r.len) {
                    // A stack without fallocate (zfs-fuse): do what a database then does.
                    Err(rustix::io::Errno::OPNOTSUPP) if r.result == 0 => {
                        state
                            .counts
                            .allocate_emulated
                            .fetch_add(1, Ordering::Relaxed);
                        let (buf, stamp) = (&mut self.buf, &mut self.stamp);
                        result(allocate_by_writing(fd, buf, stamp, mode, r.offset, r.len))
                    }
                    done => result(done),
                }
            }
            OpCode::Ftruncate => result(rustix::fs::ftruncate(fd, r.len)),
            OpCode::Lseek => lseek(fd, r.arg, r.offset)?,
            OpCode::Fadvise => {
                let advice = advice(r.arg);
                result(rustix::fs::fadvise(
                    fd,
                    r.offset,
                    NonZeroU64::new(r.len),
                    advice,
                ))
            }
            OpCode::Open | OpCode::Close => 0,
            OpCode::Rename | OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir => 0,
        })
    }
}

/// Moves `len` bytes at `offset` in pieces of at most `buf`'s length: `call(piece, at)` moves
/// one piece and says how many bytes it moved; a short piece ends it (the end of the file).
/// The bytes moved.
fn in_pieces(
    buf: &mut AlignedBuf,
    offset: u64,
    len: u64,
    mut call: impl FnMut(&mut [u8], u64) -> rustix::io::Result<usize>,
) -> rustix::io::Result<i64> {
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        let moved = call(&mut buf.as_mut_slice()[..n], offset + done)?;
        done += moved as u64;
        if moved < n {
            break;
        }
    }
    Ok(done as i64)
}

pub(super) fn read(
    fd: &std::os::fd::OwnedFd,
    buf: &mut AlignedBuf,
    offset: u64,
    len: u64,
) -> rustix::io::Result<i64> {
    in_pieces(buf, offset, len, |piece, at| {
        rustix::io::pread(fd, piece, at)
    })
}

/// Writes `len` bytes at `offset`, each 4 KiB block stamped with a new number first so that
/// no layer can deduplicate or compress what a replay writes.
pub(super) fn write(
    fd: &OwnedFd,
    buf: &mut AlignedBuf,
    stamp: &mut u64,
    offset: u64,
    len: u64,
) -> rustix::io::Result<i64> {
    in_pieces(buf, offset, len, |piece, at| {
        for block in piece.chunks_mut(ALIGN) {
            *stamp = stamp.wrapping_add(1);
            let k = block.len().min(8);
            block[..k].copy_from_slice(&stamp.to_le_bytes()[..k]);
        }
        rustix::io::pwrite(fd, piece, at)
    })
}

/// A database whose file system has no `fallocate` writes the new end of the file instead
/// (InnoDB's fallback): the part of the range past the file's end is written, so the file
/// grows as the capture saw it grow. A range kept inside the size (`KEEP_SIZE`) needs nothing;
/// other modes (punching holes) have no such fallback.
fn allocate_by_writing(
    fd: &OwnedFd,
    buf: &mut AlignedBuf,
    stamp: &mut u64,
    mode: FallocateFlags,
    offset: u64,
    len: u64,
) -> rustix::io::Result<()> {
    if mode == FallocateFlags::KEEP_SIZE {
        return Ok(());
    }
    if !mode.is_empty() {
        return Err(rustix::io::Errno::OPNOTSUPP);
    }
    let size = rustix::fs::fstat(fd)?.st_size as u64;
    let end = offset.saturating_add(len);
    if end > size {
        let from = offset.max(size);
        if write(fd, buf, stamp, from, end - from)? < (end - from) as i64 {
            return Err(rustix::io::Errno::IO);
        }
    }
    Ok(())
}

fn lseek(fd: &OwnedFd, whence: u64, offset: u64) -> rustix::io::Result<i64> {
    let pos = match whence as i32 {
        libc::SEEK_SET => SeekFrom::Start(offset),
        libc::SEEK_CUR => SeekFrom::Current(offset as i64),
        libc::SEEK_END => SeekFrom::End(offset as i64),
        libc::SEEK_DATA => SeekFrom::Data(offset),
        libc::SEEK_HOLE => SeekFrom::Hole(offset),
        _ => return Err(rustix::io::Errno::INVAL),
    };
    rustix::fs::seek(fd, pos).map(|p| p as i64)
}

fn advice(n: u64) -> Advice {
    match n as i32 {
        libc::POSIX_FADV_RANDOM => Advice::Random,
        libc::POSIX_FADV_SEQUENTIAL => Advice::Sequential,
        libc::POSIX_FADV_WILLNEED => Advice::WillNeed,
        libc::POSIX_FADV_DONTNEED => Advice::DontNeed,
        libc::POSIX_FADV_NOREUSE => Advice::NoReuse,
        _ => Advice::Normal,
    }
}

/// A call on a path: rename, unlink, mkdir, rmdir.
fn namespace(state: &Replay, op: OpCode, r: &Record, file: Option<FileId>) -> i64 {
    let path = state.path(path_id(r.arg));
    let done = match op {
        OpCode::Rename => {
            let to = path_id(r.arg2);
            let done = rustix::fs::rename(&path, state.path(to));
            if let (Ok(()), Some(f)) = (&done, file) {
                state.moved(f, to);
            }
            done
        }
        OpCode::Unlink => rustix::fs::unlink(&path),
        OpCode::Mkdir => rustix::fs::mkdir(&path, rustix::fs::Mode::from_raw_mode(0o755)),
        _ => rustix::fs::rmdir(&path),
    };
    result(done)
}

/// Whether a replayed result matches the captured one: equal, or both a successful open
/// (descriptor numbers differ), or an lseek that succeeded or failed as captured. The
/// position an lseek returns is not compared: the replay is positional, so no later call uses
/// it; and the length `SEEK_END` finds while other threads extend the file is a race the
/// capture cannot order when their calls overlapped in time (the program orders those it
/// can: `trace::program`).
pub fn matches(r: &Record, replayed: i64) -> bool {
    match r.op {
        Some(OpCode::Open) => (r.result >= 0 && replayed >= 0) || r.result == replayed,
        Some(OpCode::Close) => true,
        Some(OpCode::Lseek) => (r.result >= 0) == (replayed >= 0),
        _ => r.result == replayed,
    }
}

/// Whether `r` is an open the capture saw fail with `ENOENT` and made no handle for (a probe
/// of whether the file exists) that found the file in the replay (`replayed` is 0, the probe's
/// success): it changes nothing and no later call uses it, so the replay counts it and goes on
/// rather than failing (`probes_found` in the record).
pub fn absent_probe_found(r: &Record, replayed: i64) -> bool {
    const ENOENT: i64 = 2;
    r.op == Some(OpCode::Open) && r.handle.is_none() && r.result == -ENOENT && replayed >= 0
}

/// The kind a call is counted and timed as (`None`: done and counted, not timed).
pub fn kind(state: &Replay, r: &Record) -> Option<OpKind> {
    let trace = &state.loaded.trace;
    Some(match r.op? {
        OpCode::Read => OpKind::Read,
        OpCode::Write => OpKind::Write,
        OpCode::Fsync | OpCode::Fdatasync | OpCode::Syncfs => OpKind::Sync,
        OpCode::SyncFileRange => OpKind::Writeback,
        OpCode::Fallocate => OpKind::Allocate,
        OpCode::Ftruncate => OpKind::Setattr,
        OpCode::Open => {
            let h = trace.handles.get(r.handle? as usize)?;
            let f = trace.files.get(h.file as usize)?;
            // The call's creation flags are in `arg2` (the handle's are the file's, which the
            // kernel keeps without O_CREAT).
            let flags = u64::from(h.flags) | r.arg2;
            let creates = flags & libc::O_CREAT as u64 != 0 && f.start_size.is_none();
            if creates && f.kind == FileKind::File {
                OpKind::Create
            } else {
                OpKind::Open
            }
        }
        OpCode::Close => OpKind::Close,
        OpCode::Rename => OpKind::Rename,
        OpCode::Unlink | OpCode::Rmdir => OpKind::Delete,
        OpCode::Mkdir => OpKind::Create,
        OpCode::Lseek | OpCode::Fadvise => return None,
    })
}

/// The bytes a call moved, as the run counts them.
pub fn bytes(r: &Record, replayed: i64) -> u64 {
    match r.op {
        Some(OpCode::Read | OpCode::Write) => replayed.max(0) as u64,
        _ => 0,
    }
}

/// The result as a message shows it: bytes, or the error.
pub fn shown(op: OpCode, result: i64) -> String {
    if result < 0 {
        let e = std::io::Error::from_raw_os_error((-result) as i32);
        return format!("error {e}");
    }
    match op {
        OpCode::Read | OpCode::Write => format!("{result} bytes"),
        OpCode::Lseek => format!("position {result}"),
        _ => "success".to_string(),
    }
}

/// A record's path argument as a path id (`u32::MAX`, which no trace defines, if it is out of
/// range).
pub fn path_id(arg: u64) -> u32 {
    u32::try_from(arg).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allocation_the_stack_cannot_make_is_written_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 8192]).unwrap();
        let fd: OwnedFd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap()
            .into();
        let (mut buf, mut stamp) = (AlignedBuf::new(4096), 0u64);
        let mut allocate =
            |mode, offset, len| allocate_by_writing(&fd, &mut buf, &mut stamp, mode, offset, len);
        let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len();
        allocate(FallocateFlags::KEEP_SIZE, 8192, 65536).unwrap();
        assert_eq!(size(&path), 8192, "KEEP_SIZE leaves the size");
        allocate(FallocateFlags::empty(), 4096, 16384).unwrap();
        assert_eq!(size(&path), 20480, "the file grows to the range's end");
        assert_eq!(
            &std::fs::read(&path).unwrap()[..8192],
            &[1u8; 8192][..],
            "what was inside the file is not rewritten"
        );
        allocate(FallocateFlags::empty(), 0, 4096).unwrap();
        assert_eq!(
            size(&path),
            20480,
            "a range inside the file changes nothing"
        );
        let punch = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
        assert_eq!(allocate(punch, 0, 4096), Err(rustix::io::Errno::OPNOTSUPP));
    }

    #[test]
    fn only_a_failed_probe_that_found_its_file_is_let_through() {
        let probe = Record {
            op: Some(OpCode::Open),
            handle: None,
            result: -2,
            ..Record::default()
        };
        assert!(absent_probe_found(&probe, 0));
        assert!(
            !absent_probe_found(&probe, -2),
            "failing as captured is a match"
        );
        let denied = Record {
            result: -13,
            ..probe
        };
        assert!(
            !absent_probe_found(&denied, 0),
            "EACCES found is a difference"
        );
        let opened = Record {
            handle: Some(3),
            result: 7,
            ..probe
        };
        assert!(!absent_probe_found(&opened, 0));
        let unlink = Record {
            op: Some(OpCode::Unlink),
            ..probe
        };
        assert!(!absent_probe_found(&unlink, 0));
    }
}
