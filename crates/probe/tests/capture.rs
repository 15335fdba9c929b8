//! The eBPF capture, for real (root): this test binary, re-run as a child with an environment
//! variable saying what to do, makes known calls under a traced directory, and the trace must
//! show exactly them; calls outside the directory and of this (parent) process must be absent;
//! a ring too small for the load counts what it lost.

use bakeoff_core::trace::{
    FileKind, Footer, HandleEntry, Header, Mark, OpCode, PathEntry, Provenance, Record,
    ThreadEntry, Trace, TraceSink,
};
use bakeoff_probe::capture::{layout, Capture, CaptureSpec, Filter};
use std::io::{IoSlice, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

#[path = "capture/cpu.rs"]
mod cpu;
#[path = "capture/gaps.rs"]
mod gaps;
#[path = "capture/state.rs"]
mod state;

/// Set in the child: the traced directory, and what to do there.
const CHILD_DIR: &str = "BAKEOFF_CAPTURE_TEST_DIR";
const CHILD_OUTSIDE: &str = "BAKEOFF_CAPTURE_TEST_OUTSIDE";
const CHILD_FLOOD: &str = "BAKEOFF_CAPTURE_TEST_FLOOD";
const CHILD_APPEND: &str = "BAKEOFF_CAPTURE_TEST_APPEND";
const O_DIRECT: u32 = 0o40000;
const FLOOD_WRITES: u64 = 100_000;

/// A sink the test keeps a hold of while the capture owns it.
struct Shared(Arc<Mutex<Trace>>);

impl TraceSink for Shared {
    fn path(&mut self, e: PathEntry) -> std::io::Result<u32> {
        self.0.lock().unwrap().path(e)
    }
    fn file(&mut self, e: bakeoff_core::trace::FileEntry) -> std::io::Result<u32> {
        self.0.lock().unwrap().file(e)
    }
    fn handle(&mut self, e: HandleEntry) -> std::io::Result<u32> {
        self.0.lock().unwrap().handle(e)
    }
    fn thread(&mut self, e: ThreadEntry) -> std::io::Result<u32> {
        self.0.lock().unwrap().thread(e)
    }
    fn op(&mut self, t: u32, r: &Record) -> std::io::Result<()> {
        self.0.lock().unwrap().op(t, r)
    }
    fn mark(&mut self, m: Mark) -> std::io::Result<()> {
        self.0.lock().unwrap().mark(m)
    }
    fn finish(&mut self, f: Footer) -> std::io::Result<()> {
        self.0.lock().unwrap().finish(f)
    }
}

/// O_DIRECT wants aligned memory.
#[repr(align(4096))]
struct Block([u8; 8192]);

/// The child's calls in the traced directory (see `exact_calls_are_captured`).
fn child_calls(dir: &Path, outside: &Path) {
    let buf = Box::new(Block([7; 8192]));
    let f = (std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true))
    .custom_flags(O_DIRECT as i32)
    .open(dir.join("f"))
    .unwrap();
    assert_eq!(f.write_at(&buf.0, 0).unwrap(), 8192);
    assert_eq!(f.write_at(&buf.0, 16384).unwrap(), 8192);
    f.sync_data().unwrap();
    let mut back = Box::new(Block([0; 8192]));
    assert_eq!(f.read_at(&mut back.0[..4096], 16384).unwrap(), 4096);
    f.sync_all().unwrap();
    f.set_len(65536).unwrap();
    let (a, b) = buf.0.split_at(4096);
    assert_eq!(
        (&f).write_vectored(&[IoSlice::new(a), IoSlice::new(b)])
            .unwrap(),
        8192
    );
    drop(f);
    let mut old = std::fs::File::open(dir.join("old")).unwrap();
    let mut small = [0u8; 100];
    assert_eq!(old.read(&mut small).unwrap(), 100);
    assert_eq!(old.seek(SeekFrom::End(0)).unwrap(), 8192);
    drop(old);
    std::fs::rename(dir.join("f"), dir.join("g")).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::remove_dir(dir.join("sub")).unwrap();
    std::fs::remove_file(dir.join("g")).unwrap();
    // The same file system, outside the traced directory: not in the trace.
    std::fs::write(outside.join("elsewhere"), b"x").unwrap();
}

/// Runs this test again as a child, with `env` telling it what to do.
fn run_child(test: &str, env: &[(&str, &Path)]) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn start(dir: &Path, buffer_bytes: u64) -> (Capture, Arc<Mutex<Trace>>) {
    start_with(dir, buffer_bytes, false)
}

fn start_with(dir: &Path, buffer_bytes: u64, anonymize: bool) -> (Capture, Arc<Mutex<Trace>>) {
    let trace = Arc::new(Mutex::new(Trace::new(
        Header::new([1; 16]),
        Provenance::default(),
    )));
    let spec = CaptureSpec {
        filter: Filter::ChildrenOfSelf,
        under: vec![("data".into(), dir.to_path_buf())],
        anonymize,
        buffer_bytes,
    };
    let capture = Capture::start(spec, Box::new(Shared(trace.clone())), Provenance::default())
        .unwrap_or_else(|e| panic!("starting the capture: {e}"));
    (capture, trace)
}

/// Every record, in start order, with its path strings resolved for the assertions.
fn records(trace: &Trace) -> Vec<Record> {
    let mut all: Vec<Record> = trace.ops.iter().flatten().copied().collect();
    all.sort_by_key(|r| r.start_ns);
    all
}

#[test]
fn exact_calls_are_captured() {
    if let (Some(dir), Some(outside)) =
        (std::env::var_os(CHILD_DIR), std::env::var_os(CHILD_OUTSIDE))
    {
        child_calls(Path::new(&dir), Path::new(&outside));
        return;
    }
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let dir = scratch.path().join("data");
    let outside = scratch.path().join("other");
    std::fs::create_dir(&dir).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(dir.join("old"), [1u8; 8192]).unwrap();
    let (capture, trace) = start(&dir, 1 << 20);
    // This process is not traced, only what it starts.
    std::fs::write(dir.join("mine"), b"parent").unwrap();
    capture.mark("window_start");
    run_child(
        "exact_calls_are_captured",
        &[(CHILD_DIR, &dir), (CHILD_OUTSIDE, &outside)],
    );
    let summary = capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    assert_eq!(summary.lost.total(), 0, "{:?}", summary.lost);
    assert_eq!(summary.ops, trace.record_count());
    assert_eq!(trace.marks.len(), 1);
    let paths: Vec<&str> = trace.paths.iter().map(|p| p.path.as_str()).collect();
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("mine") || p.contains("elsewhere")),
        "{paths:?}"
    );
    let path = |id: u64| trace.paths[id as usize].path.clone();
    let got: Vec<(OpCode, u64, u64, i64)> = (records(&trace).iter())
        .map(|r| {
            // A descriptor's number is the child's business: an open succeeded or not.
            let result = if r.op == Some(OpCode::Open) {
                i64::from(r.result >= 0)
            } else {
                r.result
            };
            (r.op.unwrap(), r.offset, r.len, result)
        })
        .collect();
    use OpCode::*;
    let want = vec![
        (Open, 0, 0, 1),
        (Write, 0, 8192, 8192),
        (Write, 16384, 8192, 8192),
        (Fdatasync, 0, 0, 0),
        (Read, 16384, 4096, 4096),
        (Fsync, 0, 0, 0),
        (Ftruncate, 0, 65536, 0),
        (Write, 0, 8192, 8192),
        (Close, 0, 0, 0),
        (Open, 0, 0, 1),
        (Read, 0, 100, 100),
        (Lseek, 0, 0, 8192),
        (Close, 0, 0, 0),
        (Rename, 0, 0, 0),
        (Mkdir, 0, 0, 0),
        (Rmdir, 0, 0, 0),
        (Unlink, 0, 0, 0),
    ];
    assert_eq!(got, want);
    let recs = records(&trace);
    assert!(recs.iter().all(|r| r.dur_ns > 0 && r.start_ns > 0));
    assert_eq!(path(recs[0].arg), "f");
    let h = &trace.handles[recs[0].handle.unwrap() as usize];
    assert_eq!(h.flags & O_DIRECT, O_DIRECT, "flags {:o}", h.flags);
    assert_eq!(h.flags & 3, 2, "O_RDWR in {:o}", h.flags);
    assert!(!h.implicit);
    assert!(recs[1..9].iter().all(|r| r.handle == recs[0].handle));
    assert_eq!((recs[11].arg, path(recs[9].arg)), (2, "old".to_string())); // SEEK_END
    assert_eq!(
        (path(recs[13].arg), path(recs[13].arg2)),
        ("f".into(), "g".into())
    );
    assert_eq!(
        (path(recs[14].arg), path(recs[15].arg), path(recs[16].arg)),
        ("sub".into(), "sub".into(), "g".into())
    );
    let f = &trace.files[trace.handles[recs[0].handle.unwrap() as usize].file as usize];
    assert_eq!(
        (f.kind, f.start_size, f.end_size),
        (FileKind::File, None, None)
    );
    let old = &trace.files[trace.handles[recs[9].handle.unwrap() as usize].file as usize];
    assert_eq!((old.start_size, old.end_size), (Some(8192), Some(8192)));
    let tgids: std::collections::BTreeSet<u32> = trace.threads.iter().map(|t| t.tgid).collect();
    assert_eq!(tgids.len(), 1);
    assert!(!tgids.contains(&std::process::id()));
}

#[test]
fn anonymized_paths_keep_their_shape_and_lose_their_names() {
    if let (Some(dir), Some(outside)) =
        (std::env::var_os(CHILD_DIR), std::env::var_os(CHILD_OUTSIDE))
    {
        child_calls(Path::new(&dir), Path::new(&outside));
        return;
    }
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let (dir, outside) = (scratch.path().join("data"), scratch.path().join("other"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(dir.join("old"), [1u8; 8192]).unwrap();
    let (capture, trace) = start_with(&dir, 1 << 20, true);
    let root = capture.provenance().roots[0].path.clone();
    assert!(
        capture.provenance().anonymized && !root.contains("data"),
        "{root}"
    );
    let test = "anonymized_paths_keep_their_shape_and_lose_their_names";
    run_child(test, &[(CHILD_DIR, &dir), (CHILD_OUTSIDE, &outside)]);
    capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    let mut paths: Vec<&str> = trace.paths.iter().map(|p| p.path.as_str()).collect();
    paths.sort();
    // f, old, g (the rename's new name) and the directory sub, in order of appearance.
    assert_eq!(paths, ["d0", "f0", "f1", "f2"]);
}

#[test]
fn a_full_ring_counts_what_it_lost() {
    if let Some(dir) = std::env::var_os(CHILD_FLOOD) {
        let f = std::fs::File::create(Path::new(&dir).join("flood")).unwrap();
        for i in 0..FLOOD_WRITES {
            f.write_at(b"x", i).unwrap();
        }
        return;
    }
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let (capture, trace) = start(scratch.path(), 1);
    assert_eq!(
        capture.provenance().ring_bytes,
        4096,
        "the smallest ring: one page"
    );
    // The consumer is held up (the sink is busy) while the child runs: the ring fills for
    // certain, however fast the consumer would have been.
    let busy = trace.lock().unwrap();
    run_child(
        "a_full_ring_counts_what_it_lost",
        &[(CHILD_FLOOD, scratch.path())],
    );
    drop(busy);
    let summary = capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    let writes = (trace.ops.iter().flatten())
        .filter(|r| r.op == Some(OpCode::Write) && r.len == 1)
        .count() as u64;
    assert!(summary.lost.ring_full > 0, "{summary:?}");
    // Every write is in the trace or counted. The count also holds reservations for calls
    // the trace would have dropped (files of the same file system outside the directory), so
    // it is at least, not exactly, what is missing.
    assert!(
        writes + summary.lost.ring_full >= FLOOD_WRITES,
        "{writes} writes in the trace, {summary:?}"
    );
    assert!(writes < FLOOD_WRITES);
}

#[test]
fn the_tracepoint_layout_is_what_the_program_reads() {
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    // Mounts tracefs if needed (as the capture does) and checks each call's format file.
    let scratch = bakeoff_testkit::scratch_dir();
    let (capture, _trace) = start(scratch.path(), 4096);
    capture.finish().unwrap();
    for call in ["pwrite64", "openat", "renameat2", "io_submit"] {
        layout::check_call(call).unwrap_or_else(|e| panic!("{e}"));
    }
    let text =
        std::fs::read_to_string("/sys/kernel/tracing/events/syscalls/sys_enter_pwrite64/format")
            .unwrap();
    let fields = layout::parse_format(&text);
    let at = |name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .map(|f| (f.offset, f.size))
    };
    assert_eq!(at("__syscall_nr"), Some((8, 4)));
    assert_eq!(
        (at("fd"), at("buf"), at("count"), at("pos")),
        (Some((16, 8)), Some((24, 8)), Some((32, 8)), Some((40, 8)))
    );
    let exit =
        std::fs::read_to_string("/sys/kernel/tracing/events/syscalls/sys_exit_pwrite64/format")
            .unwrap();
    let fields = layout::parse_format(&exit);
    assert_eq!(
        fields
            .iter()
            .find(|f| f.name == "ret")
            .map(|f| (f.offset, f.size)),
        Some((16, 8))
    );
}

#[test]
fn linux_aio_is_captured_from_submission_to_reap() {
    let Some((_turn, scratch)) = fio_scene() else {
        return;
    };
    let file = scratch.path().join("fio.dat");
    let (writes, handles) = fio_writes(&file, &["--ioengine=libaio", "--io_size=256k"]);
    assert_eq!(writes.len(), 64, "256 KiB in 4 KiB writes");
    for w in &writes {
        assert_eq!((w.len, w.result, w.offset % 4096), (4096, 4096, 0), "{w:?}");
        assert!(w.offset < 1 << 20 && w.dur_ns > 0, "{w:?}");
        assert_eq!(
            handles[w.handle.unwrap() as usize].flags & O_DIRECT,
            O_DIRECT
        );
    }
}

/// Runs fio on `file` with `args`, under a capture of the file's directory; the async writes.
fn fio_writes(file: &Path, args: &[&str]) -> (Vec<Record>, Vec<HandleEntry>) {
    let (writes, handles, _) = fio_capture(file, args);
    (writes, handles)
}

/// [`fio_writes`], and the calls counted as not in the trace.
fn fio_capture(file: &Path, args: &[&str]) -> (Vec<Record>, Vec<HandleEntry>, Vec<(String, u64)>) {
    let (capture, trace) = start(file.parent().unwrap(), 1 << 20);
    let out = Command::new("fio")
        .args(["--name=capture", "--direct=1", "--rw=randwrite"])
        .args(["--bs=4k", "--size=1M", "--iodepth=4"])
        .args(args)
        .arg(format!("--filename={}", file.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    assert_eq!(summary.lost.total(), 0, "{:?}", summary.lost);
    for ops in &trace.ops {
        assert!(
            ops.windows(2).all(|p| p[0].start_ns <= p[1].start_ns),
            "start order"
        );
    }
    let writes = (trace.ops.iter().flatten())
        .filter(|r| r.is_async && r.op == Some(OpCode::Write))
        .copied()
        .collect();
    (writes, trace.handles.clone(), summary.uncovered)
}

#[test]
fn io_uring_is_captured_from_submission_to_completion() {
    let Some((_turn, scratch)) = fio_scene() else {
        return;
    };
    let file = scratch.path().join("fio.dat");
    // A descriptor per request, then registered files (the SQE holds an index).
    for (args, count) in [
        (&["--ioengine=io_uring", "--io_size=256k"][..], 64),
        (
            &["--ioengine=io_uring", "--io_size=128k", "--registerfiles=1"][..],
            32,
        ),
    ] {
        let (writes, handles) = fio_writes(&file, args);
        assert_eq!(writes.len(), count, "{args:?}");
        for w in &writes {
            assert_eq!((w.len, w.result, w.offset % 4096), (4096, 4096, 0), "{w:?}");
            assert!(w.offset < 1 << 20 && w.dur_ns > 0, "{w:?}");
            assert_eq!(
                handles[w.handle.unwrap() as usize].flags & O_DIRECT,
                O_DIRECT
            );
        }
    }
}

#[test]
fn a_pid_and_what_it_starts_later_are_followed() {
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let dir = scratch.path();
    let script = format!(
        "sleep 1; dd if=/dev/zero of={}/p bs=4k count=3 2>/dev/null",
        dir.display()
    );
    let mut shell = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    let trace = Arc::new(Mutex::new(Trace::new(
        Header::new([2; 16]),
        Provenance::default(),
    )));
    let spec = CaptureSpec {
        filter: Filter::Pids(vec![shell.id()]),
        under: vec![("data".into(), dir.to_path_buf())],
        anonymize: false,
        buffer_bytes: 1 << 20,
    };
    let capture = Capture::start(spec, Box::new(Shared(trace.clone())), Provenance::default())
        .unwrap_or_else(|e| panic!("starting the capture: {e}"));
    assert_eq!(capture.provenance().filter, format!("pid {}", shell.id()));
    std::fs::write(dir.join("mine"), b"not traced").unwrap();
    assert!(shell.wait().unwrap().success());
    capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    let writes: Vec<(u64, u64)> = (trace.ops.iter().flatten())
        .filter(|r| r.op == Some(OpCode::Write))
        .map(|r| (r.offset, r.len))
        .collect();
    assert_eq!(writes, [(0, 4096), (4096, 4096), (8192, 4096)]);
    let paths: Vec<&str> = trace.paths.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["p"]);
}

/// Linux ignores pwrite's offset on a file opened with `O_APPEND` (pwrite(2), BUGS): the
/// trace says where the data went, the file's end, or a replay writes elsewhere.
#[test]
fn a_pwrite_on_an_append_only_file_is_recorded_at_the_end() {
    if let Some(file) = std::env::var_os(CHILD_APPEND) {
        let f = (std::fs::OpenOptions::new().append(true).open(file)).unwrap();
        assert_eq!(f.write_at(&[2u8; 4096], 0).unwrap(), 4096);
        assert_eq!(f.metadata().unwrap().len(), 12288, "appended");
        return;
    }
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let log = scratch.path().join("log");
    std::fs::write(&log, [1u8; 8192]).unwrap();
    let (capture, trace) = start(scratch.path(), 1 << 20);
    let test = "a_pwrite_on_an_append_only_file_is_recorded_at_the_end";
    run_child(test, &[(CHILD_APPEND, &log)]);
    capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    let writes: Vec<(u64, u64)> = (trace.ops.iter().flatten())
        .filter(|r| r.op == Some(OpCode::Write))
        .map(|r| (r.offset, r.len))
        .collect();
    assert_eq!(writes, [(8192, 4096)]);
}

/// A privileged test's turn and a scratch directory holding `fio.dat` (1 MiB of zeros) for
/// fio to write in; `None` when the test cannot run here (a failure under CI=true).
fn fio_scene() -> Option<(bakeoff_testkit::TurnGuard, tempfile::TempDir)> {
    let turn = bakeoff_testkit::privileged_turn()?;
    let fio = bakeoff_testkit::command::succeeds("fio", &["--version"]);
    if !bakeoff_testkit::require(fio, "fio") {
        return None;
    }
    let scratch = bakeoff_testkit::scratch_dir();
    std::fs::write(scratch.path().join("fio.dat"), vec![0u8; 1 << 20]).unwrap();
    Some((turn, scratch))
}
