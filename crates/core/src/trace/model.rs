//! What a trace holds, in memory: the tables (paths, files, handles, threads), each thread's
//! calls in order, the marks, the provenance and the footer's counts. The capture produces these
//! through a [`TraceSink`]; the format's writer is one sink and [`Trace`] (all in memory) another;
//! the reader gives a [`Trace`] back.

use serde::{Deserialize, Serialize};

mod memory;
pub use memory::Trace;
use std::collections::BTreeMap;

/// Index of a path in [`Trace::paths`].
pub type PathId = u32;
/// Index of a file in [`Trace::files`].
pub type FileId = u32;
/// Index of a handle (an opened file with its flags) in [`Trace::handles`].
pub type HandleId = u32;
/// Index of a thread in [`Trace::threads`] and [`Trace::ops`].
pub type ThreadId = u32;

/// The first eight bytes of every trace file.
pub const MAGIC: [u8; 8] = *b"BKTRACE\0";
/// The format's major version: a reader refuses any other.
pub const FORMAT_MAJOR: u16 = 1;
/// The format's minor version: additions a reader of the same major can skip.
pub const FORMAT_MINOR: u16 = 0;

/// What a call did. The numbers are the format's (docs/trace.md): never reuse one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum OpCode {
    /// open/openat/openat2/creat: `handle` is the handle it made, `arg` the path it named,
    /// `arg2` the flags of the call that change the file (`O_CREAT`, `O_EXCL`, `O_TRUNC`: the
    /// handle's flags are the file's, which no longer hold them), `result` the descriptor or
    /// `-errno`.
    Open = 1,
    /// close of `handle`.
    Close = 2,
    /// A read of `len` bytes at `offset` (pread, read at the file position, their vector forms,
    /// or an asynchronous read); `result` the bytes read or `-errno`.
    Read = 3,
    /// A write of `len` bytes at `offset`, as [`OpCode::Read`].
    Write = 4,
    /// fsync of `handle`.
    Fsync = 5,
    /// fdatasync of `handle`.
    Fdatasync = 6,
    /// sync_file_range of `len` bytes at `offset`; `arg` its flags.
    SyncFileRange = 7,
    /// syncfs through `handle`.
    Syncfs = 8,
    /// fallocate of `len` bytes at `offset`; `arg` its mode.
    Fallocate = 9,
    /// ftruncate (or truncate) to `len` bytes.
    Ftruncate = 10,
    /// lseek to `offset` with `arg` = whence; `result` the new position.
    Lseek = 11,
    /// posix_fadvise of `len` bytes at `offset`; `arg` the advice.
    Fadvise = 12,
    /// rename of path `arg` to path `arg2`.
    Rename = 13,
    /// unlink of path `arg`.
    Unlink = 14,
    /// mkdir of path `arg`.
    Mkdir = 15,
    /// rmdir of path `arg`.
    Rmdir = 16,
}

impl OpCode {
    /// Every code, in number order.
    pub const ALL: [OpCode; 16] = [
        OpCode::Open,
        OpCode::Close,
        OpCode::Read,
        OpCode::Write,
        OpCode::Fsync,
        OpCode::Fdatasync,
        OpCode::SyncFileRange,
        OpCode::Syncfs,
        OpCode::Fallocate,
        OpCode::Ftruncate,
        OpCode::Lseek,
        OpCode::Fadvise,
        OpCode::Rename,
        OpCode::Unlink,
        OpCode::Mkdir,
        OpCode::Rmdir,
    ];

    /// The code of a number, `None` for a number no version of the format used.
    pub fn from_u8(n: u8) -> Option<OpCode> {
        OpCode::ALL.into_iter().find(|op| *op as u8 == n)
    }

    /// Whether the call names a handle (the others name paths).
    pub fn takes_handle(self) -> bool {
        !matches!(
            self,
            OpCode::Rename | OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir
        )
    }

    /// The name `trace show` and the docs use (`pwrite` is `write`).
    pub fn name(self) -> &'static str {
        match self {
            OpCode::Open => "open",
            OpCode::Close => "close",
            OpCode::Read => "read",
            OpCode::Write => "write",
            OpCode::Fsync => "fsync",
            OpCode::Fdatasync => "fdatasync",
            OpCode::SyncFileRange => "sync_file_range",
            OpCode::Syncfs => "syncfs",
            OpCode::Fallocate => "fallocate",
            OpCode::Ftruncate => "ftruncate",
            OpCode::Lseek => "lseek",
            OpCode::Fadvise => "fadvise",
            OpCode::Rename => "rename",
            OpCode::Unlink => "unlink",
            OpCode::Mkdir => "mkdir",
            OpCode::Rmdir => "rmdir",
        }
    }
}

/// One call of one thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// What it did; `None` only in a `Default` value (never in a trace).
    pub op: Option<OpCode>,
    /// Submitted asynchronously (Linux AIO or io_uring): `start_ns` is the submission and
    /// `dur_ns` runs until its completion was seen (io_uring's completion, AIO's reap).
    pub is_async: bool,
    /// Start, in nanoseconds since the capture started.
    pub start_ns: u64,
    /// How long the call took.
    pub dur_ns: u64,
    /// The handle it used or made ([`OpCode::takes_handle`]).
    pub handle: Option<HandleId>,
    /// Byte offset (reads, writes, ranges, lseek's target).
    pub offset: u64,
    /// Bytes asked for (reads, writes, ranges, a truncate's length).
    pub len: u64,
    /// What the call returned: bytes for reads and writes, the position for lseek, 0 or a
    /// descriptor otherwise; `-errno` when it failed.
    pub result: i64,
    /// The op's argument (see [`OpCode`]): flags, whence, advice, a path.
    pub arg: u64,
    /// A second path (rename's new name).
    pub arg2: u64,
    /// CPU time the thread used since its previous call (0 when the capture did not record it).
    pub cpu_ns: u64,
}

impl Record {
    /// When the call ended.
    pub fn end_ns(&self) -> u64 {
        self.start_ns.saturating_add(self.dur_ns)
    }
}

/// A path a call named, relative to its root.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathEntry {
    /// Index of the root in [`Provenance::roots`].
    pub root: u16,
    /// `/`-separated, relative to the root (anonymized when the trace says so).
    pub path: String,
}

/// A regular file or a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
}

/// A file the trace touched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Its path when the capture first saw it (at the start, or at its creation).
    pub path: PathId,
    /// File or directory.
    pub kind: FileKind,
    /// Its size when the capture started; `None` when the capture saw it created.
    pub start_size: Option<u64>,
    /// Its size when the capture ended; `None` when it no longer existed.
    pub end_size: Option<u64>,
}

/// A file opened with given flags: each thread of a replay opens its own descriptor for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleEntry {
    /// The file.
    pub file: FileId,
    /// The open flags the calls saw (`O_DIRECT`, `O_DSYNC`, `O_SYNC`, ...), as the kernel's
    /// numbers.
    pub flags: u32,
    /// Already open when the capture started (or inherited), so no `Open` record made it.
    pub implicit: bool,
}

/// A traced thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadEntry {
    /// Its thread id when captured.
    pub tid: u32,
    /// Its process.
    pub tgid: u32,
    /// Its name (`comm`: `postgres`, `mariadbd`, `ib_pg_flush_co`).
    pub comm: String,
}

/// A named instant (`window_start`, `window_end` from `run --capture`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// Nanoseconds since the capture started.
    pub t_ns: u64,
    /// Its name.
    pub name: String,
}

/// One captured directory tree (`--under`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootInfo {
    /// `data`, `log`, or the directory's name.
    pub name: String,
    /// The directory (anonymized when the trace is).
    pub path: String,
    /// Its file system (`ext4`, `zfs`, `fuse.zfs-fuse`).
    pub fs_type: String,
    /// Its mount options.
    pub mount_options: String,
}

/// Where and how the trace was captured: kept as JSON in the file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Version of this JSON.
    pub schema_version: u32,
    /// The bakeoff that captured it.
    pub bakeoff_version: String,
    /// `uname -r` of the capturing machine.
    pub kernel: String,
    /// The captured trees.
    pub roots: Vec<RootInfo>,
    /// The stack it ran on, as given to `run --capture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The database and workload (`postgres tpcc`), for `run --capture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// The run's settings, for `run --capture`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Whose calls: `pid 4711`, `command pgbench ...`, `cgroup /sys/fs/cgroup/db`.
    pub filter: String,
    /// When the capture started (Unix seconds).
    pub started_unix_s: u64,
    /// Anonymous and shared memory of the captured processes at the start (a replay can hold as
    /// much, so its page cache is no larger than the database's was).
    pub app_memory_bytes: u64,
    /// Size of the capture's ring buffer.
    pub ring_bytes: u64,
    /// Paths were replaced (`--anonymize`).
    pub anonymized: bool,
    /// Records carry `cpu_ns`.
    pub cpu_ns_recorded: bool,
}

/// The fixed part at the start of a trace file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The format's major version.
    pub major: u16,
    /// The format's minor version.
    pub minor: u16,
    /// Random, made at capture: a replay names the trace it played by it.
    pub capture_id: [u8; 16],
}

impl Header {
    /// A header of this format's version.
    pub fn new(capture_id: [u8; 16]) -> Header {
        Header {
            major: FORMAT_MAJOR,
            minor: FORMAT_MINOR,
            capture_id,
        }
    }

    /// The capture id as 32 hex digits.
    pub fn capture_id_hex(&self) -> String {
        self.capture_id.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// What the capture lost, each counted where it happened; all zero in a complete trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostCounts {
    /// Calls dropped because the ring buffer was full.
    pub ring_full: u64,
    /// Calls dropped because the kernel could not give their thread the state that holds a
    /// call in progress (out of memory, or busy in a nested program on that CPU).
    pub pending_full: u64,
    /// Calls whose user-space arguments (a path, an iovec, an iocb) could not be read.
    pub user_read_failed: u64,
    /// Asynchronous submissions cut at the per-call limit.
    pub async_truncated: u64,
    /// Ends of calls whose start was not seen.
    pub unmatched_exit: u64,
    /// Calls still in progress when the capture stopped.
    pub unfinished_at_end: u64,
}

impl LostCounts {
    /// All losses together.
    pub fn total(&self) -> u64 {
        self.ring_full
            + self.pending_full
            + self.user_read_failed
            + self.async_truncated
            + self.unmatched_exit
            + self.unfinished_at_end
    }
}

/// The end of a trace: what it holds and what it could not.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footer {
    /// Records written.
    pub ops: u64,
    /// From the capture's start to its end.
    pub duration_ns: u64,
    /// What was lost.
    pub lost: LostCounts,
    /// Calls seen on the traced files that the trace does not replay (`mmap`, `copy_file_range`,
    /// ...), by name, with their counts.
    pub uncovered: Vec<(String, u64)>,
    /// Each file's size when the capture ended, by file id (`None`: gone).
    pub end_sizes: Vec<(FileId, Option<u64>)>,
}

/// Where the capture sends what it sees: the trace writer, or [`Trace`] in memory. Tables come
/// before the first record that uses them.
pub trait TraceSink {
    /// A path; its id is the number of paths before it.
    fn path(&mut self, entry: PathEntry) -> std::io::Result<PathId>;
    /// A file; its id is the number of files before it.
    fn file(&mut self, entry: FileEntry) -> std::io::Result<FileId>;
    /// A handle; its id is the number of handles before it.
    fn handle(&mut self, entry: HandleEntry) -> std::io::Result<HandleId>;
    /// A thread; its id is the number of threads before it.
    fn thread(&mut self, entry: ThreadEntry) -> std::io::Result<ThreadId>;
    /// One call of `thread`, after that thread's previous one (in start order).
    fn op(&mut self, thread: ThreadId, record: &Record) -> std::io::Result<()>;
    /// A named instant.
    fn mark(&mut self, mark: Mark) -> std::io::Result<()>;
    /// The end: nothing is sent after it.
    fn finish(&mut self, footer: Footer) -> std::io::Result<()>;
}
