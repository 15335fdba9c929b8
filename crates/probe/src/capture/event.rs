//! The records `capture.bpf.c` writes to its ring buffer, decoded once into [`RawEvent`], and
//! the table of traced system calls with the kind each one's tracepoints carry in their cookie.

use bakeoff_core::trace::OpCode;

/// A traced system call, numbered as `enum op` in `capture.bpf.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syscall {
    /// The attach cookie (`enum op`).
    pub code: u32,
    /// Its tracepoints' name, `sys_enter_<name>`.
    pub name: &'static str,
    /// What a replay does for it; `None`: not replayed, only counted (`uncovered`), or
    /// Linux AIO (the operation is in each iocb).
    pub op: Option<OpCode>,
    /// Its exit is traced too.
    pub exit: bool,
}

const fn call(code: u32, name: &'static str, op: Option<OpCode>) -> Syscall {
    Syscall {
        code,
        name,
        op,
        exit: op.is_some(),
    }
}

/// A call a replay does not make that names paths: its exit is traced, to read them.
const fn named(code: u32, name: &'static str) -> Syscall {
    Syscall {
        code,
        name,
        op: None,
        exit: true,
    }
}

const fn aio(code: u32, name: &'static str, exit: bool) -> Syscall {
    Syscall {
        code,
        name,
        op: None,
        exit,
    }
}

/// `io_submit`: a record per iocb on a traced file.
pub const IO_SUBMIT: u32 = 36;
/// `io_getevents` and `io_pgetevents`: a record per reaped event.
pub const IO_REAPED: [u32; 2] = [37, 38];

/// Every traced call, by code (1..). The order is `enum op`'s.
pub const SYSCALLS: [Syscall; 45] = [
    call(1, "open", Some(OpCode::Open)),
    call(2, "openat", Some(OpCode::Open)),
    call(3, "openat2", Some(OpCode::Open)),
    call(4, "creat", Some(OpCode::Open)),
    call(5, "close", Some(OpCode::Close)),
    call(6, "read", Some(OpCode::Read)),
    call(7, "write", Some(OpCode::Write)),
    call(8, "pread64", Some(OpCode::Read)),
    call(9, "pwrite64", Some(OpCode::Write)),
    call(10, "readv", Some(OpCode::Read)),
    call(11, "writev", Some(OpCode::Write)),
    call(12, "preadv", Some(OpCode::Read)),
    call(13, "pwritev", Some(OpCode::Write)),
    call(14, "preadv2", Some(OpCode::Read)),
    call(15, "pwritev2", Some(OpCode::Write)),
    call(16, "fsync", Some(OpCode::Fsync)),
    call(17, "fdatasync", Some(OpCode::Fdatasync)),
    call(18, "sync_file_range", Some(OpCode::SyncFileRange)),
    call(19, "syncfs", Some(OpCode::Syncfs)),
    call(20, "fallocate", Some(OpCode::Fallocate)),
    call(21, "ftruncate", Some(OpCode::Ftruncate)),
    call(22, "lseek", Some(OpCode::Lseek)),
    call(23, "fadvise64", Some(OpCode::Fadvise)),
    call(24, "rename", Some(OpCode::Rename)),
    call(25, "renameat", Some(OpCode::Rename)),
    call(26, "renameat2", Some(OpCode::Rename)),
    call(27, "unlink", Some(OpCode::Unlink)),
    call(28, "unlinkat", Some(OpCode::Unlink)),
    call(29, "mkdir", Some(OpCode::Mkdir)),
    call(30, "mkdirat", Some(OpCode::Mkdir)),
    call(31, "rmdir", Some(OpCode::Rmdir)),
    call(32, "mmap", None),
    call(33, "copy_file_range", None),
    call(34, "sendfile64", None),
    call(35, "splice", None),
    aio(IO_SUBMIT, "io_submit", false),
    aio(IO_REAPED[0], "io_getevents", true),
    aio(IO_REAPED[1], "io_pgetevents", true),
    named(39, "truncate"),
    named(40, "link"),
    named(41, "linkat"),
    named(42, "symlink"),
    named(43, "symlinkat"),
    call(44, "close_range", None),
    call(45, "msync", None),
];

/// The calls a replay does not make that name paths (counted when one is under a root).
pub const NAMING: std::ops::RangeInclusive<u32> = 39..=43;

/// An io_uring request submitted (`arg`: 1 read, 2 write, 3 fsync, 4 fdatasync), tagged by its
/// address; the file is known here only for a plain descriptor.
pub const URING_SUBMIT: u32 = 46;
/// An io_uring request completed: its tag, result and file.
pub const URING_DONE: u32 = 47;
/// An io_uring request a replay does not make (`arg`: its opcode), on a traced file, or
/// naming paths (no file: `dev` 0).
pub const URING_OTHER: u32 = 48;

/// The code of `unlinkat`, whose `AT_REMOVEDIR` flag makes it an rmdir.
const UNLINKAT: u32 = 28;
/// `AT_REMOVEDIR`.
const AT_REMOVEDIR: u32 = 0x200;

/// The call of a code.
pub fn syscall(code: u32) -> Option<&'static Syscall> {
    SYSCALLS.get(usize::try_from(code).ok()?.checked_sub(1)?)
}

/// Size of `struct event`.
pub const EVENT_LEN: usize = 128;
/// Size of each path string after a `struct path_event`'s event.
pub const PATH_LEN: usize = 256;

/// One finished call, as the kernel saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawEvent {
    /// Start (`bpf_ktime_get_ns`, CLOCK_MONOTONIC).
    pub start: u64,
    /// Duration in nanoseconds.
    pub dur: u64,
    /// The file's inode (calls on a descriptor, successful opens).
    pub ino: u64,
    /// The file's size at the start of the call.
    pub size: u64,
    /// Byte offset.
    pub offset: u64,
    /// Bytes asked for.
    pub len: u64,
    /// What the call returned.
    pub ret: i64,
    /// Inode of the directory the first path is relative to; for Linux AIO, the iocb's
    /// address (the tag that pairs a submission with its completion).
    pub base_ino: u64,
    /// Inode of the directory the second path is relative to.
    pub base2_ino: u64,
    /// The call (`enum op`).
    pub code: u32,
    /// Thread.
    pub tid: u32,
    /// Process.
    pub tgid: u32,
    /// The file's superblock dev (kernel encoding, `major << 20 | minor`).
    pub dev: u32,
    /// The file's `f_flags`.
    pub flags: u32,
    /// The call's own argument (open flags, whence, advice, mode, an iocb's opcode, ...).
    pub arg: u32,
    /// Superblock dev of the first path's base directory.
    pub base_dev: u32,
    /// Superblock dev of the second path's base directory.
    pub base2_dev: u32,
    /// The thread's name.
    pub comm: String,
    /// The thread's CPU time since its previous recorded call ended (0: unknown, for a thread
    /// found running, until its first recorded call).
    pub cpu_ns: u64,
    /// The path the call named (open, rename's old name, unlink, mkdir, rmdir).
    pub path: Option<String>,
    /// Rename's new name.
    pub path2: Option<String>,
}

impl RawEvent {
    /// What a replay does for it (`unlinkat` with `AT_REMOVEDIR` is an rmdir).
    pub fn op(&self) -> Option<OpCode> {
        if self.code == UNLINKAT && self.arg & AT_REMOVEDIR != 0 {
            return Some(OpCode::Rmdir);
        }
        syscall(self.code)?.op
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

/// A NUL-terminated string of at most `len` bytes at `at`; `None` when empty.
fn c_string(b: &[u8], at: usize, len: usize) -> Option<String> {
    let bytes = &b[at..at + len];
    let end = bytes.iter().position(|c| *c == 0).unwrap_or(len);
    (end > 0).then(|| String::from_utf8_lossy(&bytes[..end]).into_owned())
}

/// Decodes one ring-buffer record; `None` for a record of another size (another version of the
/// program: nothing is guessed).
pub fn decode(b: &[u8]) -> Option<RawEvent> {
    let with_paths = b.len() == EVENT_LEN + 2 * PATH_LEN;
    if b.len() != EVENT_LEN && !with_paths {
        return None;
    }
    let (path, path2) = if with_paths {
        (
            c_string(b, EVENT_LEN, PATH_LEN),
            c_string(b, EVENT_LEN + PATH_LEN, PATH_LEN),
        )
    } else {
        (None, None)
    };
    Some(RawEvent {
        start: u64_at(b, 0),
        dur: u64_at(b, 8),
        ino: u64_at(b, 16),
        size: u64_at(b, 24),
        offset: u64_at(b, 32),
        len: u64_at(b, 40),
        ret: u64_at(b, 48) as i64,
        base_ino: u64_at(b, 56),
        base2_ino: u64_at(b, 64),
        code: u32_at(b, 72),
        tid: u32_at(b, 76),
        tgid: u32_at(b, 80),
        dev: u32_at(b, 84),
        flags: u32_at(b, 88),
        arg: u32_at(b, 92),
        base_dev: u32_at(b, 96),
        base2_dev: u32_at(b, 100),
        comm: c_string(b, 104, 16).unwrap_or_default(),
        cpu_ns: u64_at(b, 120),
        path,
        path2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(with_paths: bool) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [10u64, 20, 30, 40, 8192, 4096, (-5i64) as u64, 50, 60] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        for v in [9u32, 101, 100, 0x80_0001, 0o40000, 7, 0x80_0001, 0] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(b"postgres\0\0\0\0\0\0\0\0");
        b.extend_from_slice(&70u64.to_ne_bytes());
        if with_paths {
            let mut p = [0u8; 2 * PATH_LEN];
            p[..6].copy_from_slice(b"base/1");
            p[PATH_LEN..PATH_LEN + 3].copy_from_slice(b"new");
            b.extend_from_slice(&p);
        }
        b
    }

    #[test]
    fn a_record_decodes_field_by_field() {
        let e = decode(&fixture(false)).unwrap();
        assert_eq!((e.start, e.dur, e.ino, e.size), (10, 20, 30, 40));
        assert_eq!((e.offset, e.len, e.ret), (8192, 4096, -5));
        assert_eq!((e.base_ino, e.base2_ino), (50, 60));
        assert_eq!((e.code, e.tid, e.tgid, e.dev), (9, 101, 100, 0x80_0001));
        assert_eq!(
            (e.flags, e.arg, e.base_dev, e.base2_dev),
            (0o40000, 7, 0x80_0001, 0)
        );
        assert_eq!((e.comm.as_str(), e.cpu_ns), ("postgres", 70));
        assert_eq!((&e.path, &e.path2), (&None, &None));
        assert_eq!(e.op(), Some(OpCode::Write));
    }

    #[test]
    fn a_record_with_paths_carries_both_strings() {
        let e = decode(&fixture(true)).unwrap();
        assert_eq!(e.path.as_deref(), Some("base/1"));
        assert_eq!(e.path2.as_deref(), Some("new"));
    }

    #[test]
    fn a_record_of_another_size_is_refused() {
        assert_eq!(decode(&[0; 64]), None);
        assert_eq!(decode(&fixture(false)[..EVENT_LEN - 1]), None);
    }

    #[test]
    fn codes_follow_the_programs_numbering() {
        for (i, s) in SYSCALLS.iter().enumerate() {
            assert_eq!(s.code as usize, i + 1, "{}", s.name);
            assert_eq!(syscall(s.code), Some(s));
        }
        assert_eq!(syscall(0), None);
        let rmdir = RawEvent {
            code: UNLINKAT,
            arg: AT_REMOVEDIR,
            ..RawEvent::default()
        };
        assert_eq!(rmdir.op(), Some(OpCode::Rmdir));
    }
}
