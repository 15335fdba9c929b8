use super::*;
use bakeoff_core::trace::{Header, Provenance, Trace};
use std::sync::{Arc, Mutex};

/// A sink the test keeps a hold of while the tables own it.
struct Shared(Arc<Mutex<Trace>>);

impl TraceSink for Shared {
    fn path(&mut self, e: PathEntry) -> std::io::Result<PathId> {
        self.0.lock().unwrap().path(e)
    }
    fn file(&mut self, e: FileEntry) -> std::io::Result<FileId> {
        self.0.lock().unwrap().file(e)
    }
    fn handle(&mut self, e: HandleEntry) -> std::io::Result<HandleId> {
        self.0.lock().unwrap().handle(e)
    }
    fn thread(&mut self, e: ThreadEntry) -> std::io::Result<ThreadId> {
        self.0.lock().unwrap().thread(e)
    }
    fn op(&mut self, t: ThreadId, r: &Record) -> std::io::Result<()> {
        self.0.lock().unwrap().op(t, r)
    }
    fn mark(&mut self, m: Mark) -> std::io::Result<()> {
        self.0.lock().unwrap().mark(m)
    }
    fn finish(&mut self, f: Footer) -> std::io::Result<()> {
        self.0.lock().unwrap().finish(f)
    }
}

/// Tables over root `/data` (dev 8) holding file `f` (inode 4), and the trace they write.
fn tables() -> (Tables, Arc<Mutex<Trace>>) {
    let mut index = PathIndex::new(vec![(8, "/data".into())]);
    let f = Loc {
        root: 0,
        rel: "f".into(),
    };
    index.insert((8, 4), f, false, Some(1 << 20));
    let trace = Arc::new(Mutex::new(Trace::new(
        Header::new([1; 16]),
        Provenance::default(),
    )));
    let sink = Box::new(Shared(trace.clone()));
    (Tables::new(sink, index, 0, false), trace)
}

/// An `io_submit` of one AIO pwrite by process `tgid` at iocb address `iocb`.
fn submit(tgid: u32, iocb: u64, offset: u64, start: u64) -> RawEvent {
    RawEvent {
        code: IO_SUBMIT,
        tid: tgid,
        tgid,
        dev: 8,
        ino: 4,
        base_ino: iocb,
        arg: 1,
        offset,
        len: 8192,
        start,
        ..RawEvent::default()
    }
}

/// Its reap by `io_getevents` in process `tgid`, with result `ret`.
fn reap(tgid: u32, iocb: u64, ret: i64, start: u64) -> RawEvent {
    RawEvent {
        code: IO_REAPED[0],
        tid: tgid,
        tgid,
        base_ino: iocb,
        ret,
        start,
        ..RawEvent::default()
    }
}

#[test]
fn aio_calls_of_two_processes_at_the_same_iocb_address_stay_apart() {
    let (mut t, trace) = tables();
    // Forked processes: the same iocb address in each one's memory.
    t.event(&submit(100, 0x7000, 0, 10));
    t.event(&submit(200, 0x7000, 65536, 20));
    t.event(&reap(200, 0x7000, 8192, 30));
    t.event(&reap(100, 0x7000, -5, 40));
    t.finish(Footer::default()).unwrap();
    let trace = trace.lock().unwrap();
    let mut calls = Vec::new();
    for (thread, ops) in trace.threads.iter().zip(&trace.ops) {
        calls.extend(
            ops.iter()
                .map(|r| (thread.tgid, r.offset, r.result, r.dur_ns)),
        );
    }
    assert_eq!(
        calls,
        vec![(100, 0, -5, 30), (200, 65536, 8192, 10)],
        "each reap ends its own process's call"
    );
    assert_eq!(trace.footer.lost.unfinished_at_end, 0);
}

/// A call named by its path (`code`: unlink 27, mkdir 29), absolute, that succeeded.
fn on_path(code: u32, path: &std::path::Path, start: u64) -> RawEvent {
    RawEvent {
        code,
        tid: 1,
        tgid: 1,
        path: Some(path.to_str().unwrap().into()),
        start,
        ..RawEvent::default()
    }
}

/// A call on a descriptor of inode `ino` (`code`: write 7, close 5, fsync 16).
fn on_fd(code: u32, ino: u64, start: u64) -> RawEvent {
    RawEvent {
        code,
        tid: 1,
        tgid: 1,
        dev: 8,
        ino,
        len: 4096,
        ret: 4096,
        start,
        ..RawEvent::default()
    }
}

#[test]
fn a_directory_made_on_a_freed_inode_is_a_new_file() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&dir).unwrap());
    // File `f` had the inode the directory gets once `f` is unlinked.
    let mut index = PathIndex::new(vec![(8, root.path().to_path_buf())]);
    let f = Loc {
        root: 0,
        rel: "f".into(),
    };
    index.insert((8, ino), f, false, Some(4096));
    let trace = Arc::new(Mutex::new(Trace::new(
        Header::new([1; 16]),
        Provenance::default(),
    )));
    let mut t = Tables::new(Box::new(Shared(trace.clone())), index, 0, false);
    t.event(&on_fd(7, ino, 10));
    t.event(&on_fd(5, ino, 20));
    t.event(&on_path(27, &root.path().join("f"), 30));
    t.event(&on_path(29, &dir, 40));
    t.event(&RawEvent {
        ret: 0,
        ..on_fd(16, ino, 50)
    });
    t.finish(Footer::default()).unwrap();
    let trace = trace.lock().unwrap();
    let fsync = trace.ops[0].last().unwrap();
    assert_eq!(fsync.op, Some(OpCode::Fsync));
    let file = &trace.files[trace.handles[fsync.handle.unwrap() as usize].file as usize];
    assert_eq!(trace.paths[file.path as usize].path, "d");
    assert_eq!(file.kind, FileKind::Dir);
}

#[test]
fn a_submission_whose_reap_was_lost_stops_holding_its_thread_back() {
    let (mut t, trace) = tables();
    t.event(&submit(100, 0x7000, 0, 10));
    // The reap of that call was lost (more events than the program reads, a full ring); the
    // program reuses the iocb for its next call.
    t.event(&RawEvent {
        code: 7,
        ..submit(100, 0, 8192, 20)
    });
    t.event(&submit(100, 0x7000, 16384, 30));
    t.event(&reap(100, 0x7000, 8192, 40));
    t.event(&RawEvent {
        code: 7,
        ..submit(100, 0, 24576, 50)
    });
    let sent = trace
        .lock()
        .unwrap()
        .ops
        .iter()
        .map(Vec::len)
        .sum::<usize>();
    assert_eq!(
        sent, 3,
        "the write at 20, the AIO call at 30 and the write at 50 went on"
    );
    t.finish(Footer::default()).unwrap();
}
