//! Hand-made traces for the analysis' tests, filled through [`Trace`]'s [`TraceSink`]: one
//! handle per file (so a file's id is its handle's), a clock that every call advances.

use crate::trace::model::{
    FileEntry, FileId, FileKind, Footer, HandleEntry, Header, OpCode, PathEntry, Provenance,
    Record, RootInfo, ThreadEntry, ThreadId, Trace, TraceSink,
};

/// Builds a [`Trace`] call by call.
pub(crate) struct Build {
    pub trace: Trace,
    /// Start of the next call, ns.
    pub clock_ns: u64,
    /// Time between two calls' starts.
    pub step_ns: u64,
    /// Each call's duration.
    pub dur_ns: u64,
}

impl Build {
    /// An empty trace on one ext4 root named `data`, calls 1 ms apart lasting 100 µs.
    pub fn new() -> Build {
        let provenance = Provenance {
            schema_version: 1,
            bakeoff_version: "0.0.0-test".into(),
            kernel: "6.18.44".into(),
            roots: vec![RootInfo {
                name: "data".into(),
                path: "/srv/pg".into(),
                fs_type: "ext4".into(),
                mount_options: "rw,relatime".into(),
            }],
            stack: Some("ext4".into()),
            database: Some("postgres tpcc".into()),
            filter: "pid 4711".into(),
            started_unix_s: 1_795_000_000,
            ..Provenance::default()
        };
        Build {
            trace: Trace::new(Header::new([0xab; 16]), provenance),
            clock_ns: 0,
            step_ns: 1_000_000,
            dur_ns: 100_000,
        }
    }

    fn entry(&mut self, path: &str, kind: FileKind, size: u64, flags: u32) -> FileId {
        let t = &mut self.trace;
        let path = (t.path(PathEntry {
            root: 0,
            path: path.into(),
        }))
        .unwrap();
        let start_size = Some(size);
        let file = (t.file(FileEntry {
            path,
            kind,
            start_size,
            end_size: start_size,
        }))
        .unwrap();
        let handle = (t.handle(HandleEntry {
            file,
            flags,
            implicit: true,
        }))
        .unwrap();
        assert_eq!(file, handle, "one handle per file");
        file
    }

    /// A regular file of `size` bytes opened with `flags`.
    pub fn file(&mut self, path: &str, size: u64, flags: u32) -> FileId {
        self.entry(path, FileKind::File, size, flags)
    }

    /// A directory.
    pub fn dir(&mut self, path: &str) -> FileId {
        self.entry(path, FileKind::Dir, 4096, 0)
    }

    /// A thread.
    pub fn thread(&mut self, tid: u32, comm: &str) -> ThreadId {
        let entry = ThreadEntry {
            tid,
            tgid: 4711,
            comm: comm.into(),
        };
        self.trace.thread(entry).unwrap()
    }

    /// One call of `t` at the clock, which then advances.
    pub fn call(&mut self, t: ThreadId, mut r: Record) {
        r.start_ns = self.clock_ns;
        if r.dur_ns == 0 {
            r.dur_ns = self.dur_ns;
        }
        self.trace.op(t, &r).unwrap();
        self.clock_ns += self.step_ns;
    }

    fn io(&mut self, t: ThreadId, op: OpCode, file: FileId, offset: u64, len: u64) {
        let r = Record {
            op: Some(op),
            handle: Some(file),
            offset,
            len,
            result: len as i64,
            ..Record::default()
        };
        self.call(t, r);
    }

    /// A read.
    pub fn read(&mut self, t: ThreadId, file: FileId, offset: u64, len: u64) {
        self.io(t, OpCode::Read, file, offset, len);
    }

    /// A write.
    pub fn write(&mut self, t: ThreadId, file: FileId, offset: u64, len: u64) {
        self.io(t, OpCode::Write, file, offset, len);
    }

    /// An fsync.
    pub fn fsync(&mut self, t: ThreadId, file: FileId) {
        self.io(t, OpCode::Fsync, file, 0, 0);
    }

    /// An fdatasync.
    pub fn fdatasync(&mut self, t: ThreadId, file: FileId) {
        self.io(t, OpCode::Fdatasync, file, 0, 0);
    }

    /// The trace, its footer counting what was recorded over the clock's time.
    pub fn finish(self) -> Trace {
        self.finish_with(Footer::default())
    }

    /// The trace with `footer` (its ops and duration filled in).
    pub fn finish_with(mut self, footer: Footer) -> Trace {
        let footer = Footer {
            ops: self.trace.record_count(),
            duration_ns: self.clock_ns,
            ..footer
        };
        self.trace.finish(footer).unwrap();
        self.trace
    }
}
