//! Replays of small synthetic traces on a temporary directory (no root needed): exact counts
//! per kind, the cross-thread order kept, captured errors and short reads accepted, a differing
//! result failing the run, the files laid out as the capture started, and the original timing.

use bakeoff_core::plan::{OpKind, Plan};
use bakeoff_core::settings::Settings;
use bakeoff_core::trace::plan::plan_replay;
use bakeoff_core::trace::*;
use bakeoff_engine::replay::{self, ReplayCounts};
use bakeoff_engine::{execute, lay_out, LayoutError, RunOutput, Target};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const MS: u64 = 1_000_000;

/// A trace under construction (each test its own capture id: the loaded traces are shared).
struct B(Trace);

impl B {
    fn new(id: u8) -> B {
        let provenance = Provenance {
            roots: vec![RootInfo {
                name: "data".into(),
                ..RootInfo::default()
            }],
            ..Provenance::default()
        };
        B(Trace::new(Header::new([id; 16]), provenance))
    }

    fn path(&mut self, path: &str) -> PathId {
        (self.0)
            .path(PathEntry {
                root: 0,
                path: path.into(),
            })
            .unwrap()
    }

    /// A file (or directory) at `path`, `start` its size when the capture started; its path.
    fn file(&mut self, path: &str, kind: FileKind, start: Option<u64>) -> (FileId, PathId) {
        let p = self.path(path);
        let entry = FileEntry {
            path: p,
            kind,
            start_size: start,
            end_size: None,
        };
        (self.0.file(entry).unwrap(), p)
    }

    fn handle(&mut self, file: FileId, flags: i32) -> HandleId {
        let entry = HandleEntry {
            file,
            flags: flags as u32,
            implicit: false,
        };
        self.0.handle(entry).unwrap()
    }

    fn thread(&mut self) -> ThreadId {
        let n = self.0.threads.len() as u32;
        let entry = ThreadEntry {
            tid: 100 + n,
            tgid: 100,
            comm: "db".into(),
        };
        self.0.thread(entry).unwrap()
    }

    /// A call of `thread` starting at `start_ns`, lasting 1 µs.
    fn op(&mut self, thread: ThreadId, op: OpCode, start_ns: u64, r: Record) {
        let record = Record {
            op: Some(op),
            start_ns,
            dur_ns: 1000,
            ..r
        };
        self.0.op(thread, &record).unwrap();
    }

    fn io(
        &mut self,
        thread: ThreadId,
        op: OpCode,
        h: HandleId,
        at: (u64, u64),
        result: i64,
        t: u64,
    ) {
        let r = Record {
            handle: Some(h),
            offset: at.0,
            len: at.1,
            result,
            ..Record::default()
        };
        self.op(thread, op, t, r);
    }

    fn on(&mut self, thread: ThreadId, op: OpCode, h: HandleId, t: u64) {
        self.io(thread, op, h, (0, 0), 0, t);
    }

    fn finish(mut self) -> Trace {
        let footer = Footer {
            ops: self.0.record_count(),
            ..Footer::default()
        };
        self.0.finish(footer).unwrap();
        self.0
    }
}

/// Plans, loads and lays out `trace` under a new directory.
fn prepare(trace: Trace, set: &str) -> (tempfile::TempDir, Plan, bakeoff_engine::Dataset) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plan = plan_replay(&trace, "test.trace", &Settings::parse_set(set).unwrap()).unwrap();
    replay::load(trace, plan.replay.as_ref().unwrap());
    let target = Target::Directory(dir.path().into());
    let data = lay_out(&plan, &target, &|_, _| true).unwrap();
    (dir, plan, data)
}

fn run(plan: &Plan, data: &bakeoff_engine::Dataset) -> (RunOutput, ReplayCounts) {
    replay::run_counted(plan, data, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

fn ops(out: &RunOutput, kind: OpKind) -> u64 {
    out.ops.iter().find(|o| o.kind == kind).map_or(0, |o| o.ops)
}

fn size(dir: &Path, path: &str) -> Option<u64> {
    let full = dir.join("bakeoff-replay/data").join(path);
    std::fs::metadata(full).ok().map(|m| m.len())
}

#[test]
fn every_call_is_replayed_and_counted_under_its_kind() {
    let mut b = B::new(1);
    let (f1, _) = b.file("base/1", FileKind::File, Some(65536));
    let (f2, _) = b.file("base/2", FileKind::File, Some(10000));
    b.file("pg_wal", FileKind::Dir, Some(4096));
    let (seg, seg_path) = b.file("pg_wal/seg", FileKind::File, None);
    let (missing, _) = b.file("base/missing", FileKind::File, None);
    let done = b.path("pg_wal/seg.done");
    let (_, newdir) = b.file("newdir", FileKind::Dir, None);
    let (h1, h2) = (b.handle(f1, libc::O_RDWR), b.handle(f2, libc::O_RDWR));
    let hseg = b.handle(seg, libc::O_RDWR | libc::O_CREAT);
    let hmiss = b.handle(missing, libc::O_RDWR);
    let (t0, t1) = (b.thread(), b.thread());
    b.io(t0, OpCode::Read, h1, (0, 8192), 8192, 10_000);
    b.io(t0, OpCode::Write, h1, (8192, 8192), 8192, 20_000);
    b.on(t0, OpCode::Fdatasync, h1, 30_000);
    let open = |h, arg, result| Record {
        handle: Some(h),
        arg,
        result,
        ..Record::default()
    };
    b.op(t0, OpCode::Open, 40_000, open(hseg, u64::from(seg_path), 5));
    b.io(t0, OpCode::Write, hseg, (0, 4096), 4096, 50_000);
    b.on(t0, OpCode::Fsync, hseg, 60_000);
    b.on(t0, OpCode::Close, hseg, 70_000);
    let seek_end = Record {
        handle: Some(h1),
        arg: libc::SEEK_END as u64,
        result: 65536,
        ..Record::default()
    };
    b.op(t0, OpCode::Lseek, 80_000, seek_end);
    b.io(t0, OpCode::Ftruncate, h1, (0, 65536), 0, 90_000);
    b.io(t0, OpCode::Fallocate, h1, (65536, 8192), 0, 100_000);
    let range = Record {
        arg: libc::SYNC_FILE_RANGE_WRITE as u64,
        ..Record::default()
    };
    b.op(
        t0,
        OpCode::SyncFileRange,
        110_000,
        Record {
            handle: Some(h1),
            len: 8192,
            ..range
        },
    );
    // Thread 1: a short read at the end of a file, a probe of a missing file, then namespace
    // calls after thread 0 closed the segment.
    b.io(t1, OpCode::Read, h2, (8192, 8192), 1808, 10_000);
    let enoent = -i64::from(libc::ENOENT);
    let probe = open(hmiss, u64::from(b.0.files[missing as usize].path), enoent);
    b.op(t1, OpCode::Open, 20_000, probe);
    let path = |arg, arg2| Record {
        arg,
        arg2,
        ..Record::default()
    };
    b.op(
        t1,
        OpCode::Rename,
        200_000,
        path(u64::from(seg_path), u64::from(done)),
    );
    b.op(t1, OpCode::Unlink, 210_000, path(u64::from(done), 0));
    b.op(t1, OpCode::Mkdir, 220_000, path(u64::from(newdir), 0));
    b.op(t1, OpCode::Rmdir, 230_000, path(u64::from(newdir), 0));
    let trace = b.finish();
    let calls = trace.record_count();
    let (dir, plan, data) = prepare(trace, "");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    let expected = [
        (OpKind::Read, 2),
        (OpKind::Write, 2),
        (OpKind::Sync, 2),
        (OpKind::Create, 2),
        (OpKind::Open, 1),
        (OpKind::Close, 1),
        (OpKind::Setattr, 1),
        (OpKind::Allocate, 1),
        (OpKind::Writeback, 1),
        (OpKind::Rename, 1),
        (OpKind::Delete, 2),
    ];
    for (kind, n) in expected {
        assert_eq!(ops(&out, kind), n, "{kind:?}");
    }
    let timed: u64 = expected.iter().map(|(_, n)| n).sum();
    assert_eq!(out.ops.iter().map(|o| o.ops).sum::<u64>(), timed);
    assert_eq!(
        (counts.calls, counts.untimed),
        (calls, 1),
        "the lseek is done, not timed"
    );
    let read = out.ops.iter().find(|o| o.kind == OpKind::Read).unwrap();
    assert_eq!(read.bytes, 8192 + 1808);
    assert_eq!(
        size(dir.path(), "base/1"),
        Some(73728),
        "the fallocate grew it"
    );
    assert_eq!(size(dir.path(), "pg_wal/seg"), None);
    assert_eq!(size(dir.path(), "pg_wal/seg.done"), None);
    assert_eq!(out.roles.len(), 1);
    assert_eq!(out.roles[0].name, "db");
}

#[test]
fn the_layout_holds_the_start_sizes_and_is_repaired_for_the_same_capture() {
    let mut b = B::new(2);
    let (f, _) = b.file("base/1", FileKind::File, Some(3 << 20));
    b.file("base/empty", FileKind::File, Some(0));
    b.file("global", FileKind::Dir, Some(4096));
    b.file("base/new", FileKind::File, None);
    let h = b.handle(f, libc::O_RDWR);
    let t = b.thread();
    b.io(t, OpCode::Read, h, (0, 8192), 8192, 1000);
    let trace = b.finish();
    let (dir, plan, data) = prepare(trace, "");
    assert!(!data.reused);
    assert_eq!(data.written_bytes, 3 << 20);
    assert_eq!(size(dir.path(), "base/1"), Some(3 << 20));
    assert_eq!(size(dir.path(), "base/empty"), Some(0));
    assert!(dir.path().join("bakeoff-replay/data/global").is_dir());
    // What a replay changes is put back: a grown file cut, a created file removed.
    let base1 = dir.path().join("bakeoff-replay/data/base/1");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&base1)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    std::fs::write(dir.path().join("bakeoff-replay/data/base/new"), b"x").unwrap();
    let target = Target::Directory(dir.path().into());
    let again = lay_out(&plan, &target, &|_, _| true).unwrap();
    assert!(again.reused);
    assert_eq!(size(dir.path(), "base/1"), Some(3 << 20));
    assert_eq!(size(dir.path(), "base/new"), None);
    let device = Target::Device("/dev/null".into());
    let refused = lay_out(&plan, &device, &|_, _| true).unwrap_err();
    assert!(
        matches!(refused, LayoutError::NeedsDirectory { .. }),
        "{refused}"
    );
}

/// Thread 0 is busy with `n` syncs of one file before its write to another at 100 ms; thread
/// 1's call on that file is captured after the write ended.
fn busy_writer(id: u8, n: u64, then: OpCode) -> Trace {
    let mut b = B::new(id);
    let (busy, _) = b.file("busy", FileKind::File, Some(8192));
    let (f, _) = b.file("shared", FileKind::File, Some(0));
    let (hb, h) = (b.handle(busy, libc::O_RDWR), b.handle(f, libc::O_RDWR));
    let (t0, t1) = (b.thread(), b.thread());
    for i in 0..n {
        b.io(t0, OpCode::Write, hb, (0, 4096), 4096, i * 10_000);
        b.on(t0, OpCode::Fsync, hb, i * 10_000 + 5000);
    }
    b.io(t0, OpCode::Write, h, (0, 8192), 8192, 100 * MS);
    match then {
        OpCode::Read => b.io(t1, OpCode::Read, h, (0, 8192), 8192, 101 * MS),
        _ => b.on(t1, then, h, 101 * MS),
    }
    b.finish()
}

#[test]
fn a_read_waits_for_the_other_threads_write_it_read() {
    // Without the edge the read would find an empty file and read 0 bytes, not 8192.
    let (_dir, plan, data) = prepare(busy_writer(3, 30, OpCode::Read), "");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(counts.edges, 1);
    assert_eq!(ops(&out, OpKind::Read), 1);
}

#[test]
fn an_fsync_waits_for_the_other_threads_write() {
    let (_dir, plan, data) = prepare(busy_writer(4, 30, OpCode::Fsync), "");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(counts.edges, 1);
    assert_eq!(
        counts.dependency_waits, 1,
        "the fsync's thread had nothing else to do"
    );
    assert!(counts.wait_ns > 0);
    assert_eq!(ops(&out, OpKind::Sync), 31);
}

/// Two threads write the log, then each syncs it: under group commit the first sync to run
/// makes both writes durable, and the other is not made.
#[test]
fn under_group_commit_a_sync_another_threads_sync_covered_is_not_made() {
    let mut b = B::new(53);
    let (log, _) = b.file("wal", FileKind::File, Some(16384));
    let h = b.handle(log, libc::O_RDWR);
    let (t0, t1) = (b.thread(), b.thread());
    b.io(t0, OpCode::Write, h, (0, 8192), 8192, 1000);
    b.io(t1, OpCode::Write, h, (8192, 8192), 8192, 1500);
    b.on(t0, OpCode::Fsync, h, 3000);
    b.on(t1, OpCode::Fdatasync, h, 4500);
    let trace = b.finish();
    for (set, merged) in [("syncs=each", 0), ("syncs=merge", 1)] {
        let (_dir, plan, data) = prepare(trace.clone(), set);
        let (out, counts) = run(&plan, &data);
        assert!(out.error.is_none(), "{set}: {:?}", out.error);
        assert_eq!(counts.syncs_merged, merged, "{set}");
        assert_eq!(
            ops(&out, OpKind::Sync),
            2,
            "{set}: a merged sync counts as made"
        );
    }
}

#[test]
fn a_result_that_differs_fails_the_run_naming_the_file_the_call_and_both_results() {
    let mut b = B::new(5);
    let (f, _) = b.file("base/1", FileKind::File, Some(4096));
    let h = b.handle(f, libc::O_RDWR);
    let t = b.thread();
    b.io(t, OpCode::Read, h, (0, 8192), 8192, 1000);
    b.io(t, OpCode::Read, h, (0, 4096), 4096, 2000);
    let (_dir, plan, data) = prepare(b.finish(), "");
    let (out, _) = run(&plan, &data);
    let e = out
        .error
        .as_ref()
        .expect("the short read differs")
        .to_string();
    for part in [
        "bakeoff-replay/data/base/1",
        "read of 8192 bytes at offset 0",
        "call 0",
        "captured 8192 bytes, replayed 4096 bytes",
    ] {
        assert!(e.contains(part), "{part}: {e}");
    }
    assert_eq!(
        ops(&out, OpKind::Read),
        0,
        "the run stopped at the difference"
    );
}

#[test]
fn a_failed_open_that_fails_again_is_success_and_one_that_succeeds_is_not() {
    let enoent = -i64::from(libc::ENOENT);
    for (id, present, ok) in [(6, None, true), (7, Some(0), false)] {
        let mut b = B::new(id);
        let (f, p) = b.file("base/probe", FileKind::File, present);
        let h = b.handle(f, libc::O_RDWR);
        let t = b.thread();
        let probe = Record {
            handle: Some(h),
            arg: u64::from(p),
            result: enoent,
            ..Record::default()
        };
        b.op(t, OpCode::Open, 1000, probe);
        let (_dir, plan, data) = prepare(b.finish(), "");
        let (out, _) = run(&plan, &data);
        assert_eq!(out.error.is_none(), ok, "{:?}", out.error);
        assert_eq!(ops(&out, OpKind::Open), u64::from(ok));
    }
}

#[test]
fn execute_runs_a_replay_plan() {
    let mut b = B::new(8);
    let (f, _) = b.file("base/1", FileKind::File, Some(8192));
    let h = b.handle(f, libc::O_RDWR);
    let t = b.thread();
    b.io(t, OpCode::Write, h, (0, 8192), 8192, 1000);
    let (_dir, plan, data) = prepare(b.finish(), "");
    let out = execute(&plan, &data, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(ops(&out, OpKind::Write), 1);
    assert!(
        out.measured < Duration::from_secs(1),
        "the run ends with the trace"
    );
}

/// One thread: a write at 0 and one at 300 ms (a 300 ms trace).
fn spaced(id: u8) -> Trace {
    let mut b = B::new(id);
    let (f, _) = b.file("base/1", FileKind::File, Some(8192));
    let h = b.handle(f, libc::O_RDWR);
    let t = b.thread();
    b.io(t, OpCode::Write, h, (0, 4096), 4096, 0);
    b.io(t, OpCode::Write, h, (4096, 4096), 4096, 300 * MS);
    b.finish()
}

#[test]
fn original_timing_keeps_the_captured_schedule_divided_by_the_speed() {
    for (id, set, secs) in [
        (9, "timing=original", 0.3),
        (10, "timing=original,speed=2x", 0.15),
        (11, "timing=fast", 0.0),
    ] {
        let (_dir, plan, data) = prepare(spaced(id), set);
        let (out, _) = run(&plan, &data);
        assert!(out.error.is_none(), "{set}: {:?}", out.error);
        assert_eq!(ops(&out, OpKind::Write), 2, "{set}");
        // The window's start is stamped a few ms after the schedule's origin (the harness
        // reads the latency counts first).
        let took = out.measured.as_secs_f64();
        assert!(
            took > secs - 0.02 && took < secs + 0.1,
            "{set}: {took} s, not {secs}"
        );
    }
}

#[test]
fn original_timing_counts_latency_from_the_scheduled_time() {
    // The small write is due 1 µs after the big one starts, and is issued only once it ended:
    // its latency holds that wait, its service time does not.
    let mut b = B::new(12);
    let (f, _) = b.file("base/1", FileKind::File, Some(0));
    let h = b.handle(f, libc::O_RDWR);
    let t = b.thread();
    b.io(t, OpCode::Write, h, (0, 32 << 20), 32 << 20, 0);
    b.io(t, OpCode::Write, h, (32 << 20, 4096), 4096, 1000);
    let (_dir, plan, data) = prepare(b.finish(), "timing=original");
    let (out, _) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    let write = out.ops.iter().find(|o| o.kind == OpKind::Write).unwrap();
    let (lat, service) = (write.lat.as_ref().unwrap(), write.service.as_ref().unwrap());
    assert_eq!(write.ops, 2);
    assert!(
        lat.min_ns > 10 * service.min_ns,
        "latency from the schedule: min {} ns, service min {} ns",
        lat.min_ns,
        service.min_ns
    );
}

/// One thread writing at 0, 150 ms and 250 ms; marks at 100 ms and 200 ms.
fn marked(id: u8) -> Trace {
    let mut b = B::new(id);
    let (f, _) = b.file("base/1", FileKind::File, Some(8192));
    let h = b.handle(f, libc::O_RDWR);
    let t = b.thread();
    for at in [0, 150, 250] {
        b.io(t, OpCode::Write, h, (0, 4096), 4096, at * MS);
    }
    b.0.mark(Mark {
        t_ns: 100 * MS,
        name: "window_start".into(),
    })
    .unwrap();
    b.0.mark(Mark {
        t_ns: 200 * MS,
        name: "window_end".into(),
    })
    .unwrap();
    b.finish()
}

#[test]
fn a_marked_window_measures_only_the_calls_between_the_marks() {
    let (_dir, plan, data) = prepare(marked(13), "timing=original,window=marked");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(
        counts.calls, 2,
        "the call after the end mark is not replayed"
    );
    assert_eq!(
        ops(&out, OpKind::Write),
        1,
        "the call before the start mark is warm-up"
    );
    let took = out.measured.as_secs_f64();
    assert!(
        (0.09..0.13).contains(&took),
        "{took} s, not the 100 ms between the marks"
    );
    let (_dir, plan, data) = prepare(marked(14), "window=marked");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(counts.calls, 2);
    // timing=fast: the window opens when the thread reaches the start mark, and its call
    // there waits until the harness has counted what came before.
    assert_eq!(
        ops(&out, OpKind::Write),
        1,
        "the call in the window, and only it"
    );
    let write = out.ops.iter().find(|o| o.kind == OpKind::Write);
    assert!(
        write.and_then(|w| w.lat.as_ref()).is_some(),
        "the call in the window is timed"
    );
    assert!(
        out.measured > Duration::ZERO,
        "the harness saw the window open"
    );
}

/// Thread 0 syncs 200 times before the start mark (each a flush of the device under the
/// test's directory) and writes once in the window; thread 1 only writes once in the window.
fn slow_warm_up(id: u8) -> Trace {
    let mut b = B::new(id);
    let (f, _) = b.file("base/1", FileKind::File, Some(1 << 20));
    let (g, _) = b.file("base/2", FileKind::File, Some(8192));
    let (hf, hg) = (b.handle(f, libc::O_RDWR), b.handle(g, libc::O_RDWR));
    let (slow, quick) = (b.thread(), b.thread());
    for k in 0..200 {
        b.io(
            slow,
            OpCode::Write,
            hf,
            (k * 4096, 4096),
            4096,
            MS + k * 400_000,
        );
        b.on(slow, OpCode::Fdatasync, hf, MS + k * 400_000 + 200_000);
    }
    b.io(slow, OpCode::Write, hf, (0, 4096), 4096, 150 * MS);
    b.io(quick, OpCode::Write, hg, (0, 4096), 4096, 160 * MS);
    for (t_ns, name) in [(100 * MS, "window_start"), (200 * MS, "window_end")] {
        let name = name.into();
        b.0.mark(Mark { t_ns, name }).unwrap();
    }
    b.finish()
}

#[test]
fn a_fast_window_opens_when_every_thread_has_reached_the_start_mark() {
    let (_dir, plan, data) = prepare(slow_warm_up(50), "timing=fast,window=marked");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(counts.calls, 402, "every call before the end mark is made");
    // Had the quick thread opened the window at its first call, the slow thread's warm-up
    // syncs (and writes) would be in it.
    assert_eq!(
        ops(&out, OpKind::Sync),
        0,
        "no warm-up sync is in the window"
    );
    assert_eq!(
        ops(&out, OpKind::Write),
        2,
        "the window's two writes, and only they"
    );
}

#[test]
fn a_whole_replay_compares_every_files_size_with_the_captured_end_size() {
    let mut b = B::new(51);
    let (grown, _) = b.file("base/1", FileKind::File, Some(8192));
    let (other, _) = b.file("base/2", FileKind::File, Some(8192));
    let h = b.handle(grown, libc::O_RDWR);
    let t = b.thread();
    b.io(t, OpCode::Write, h, (8192, 4096), 4096, MS);
    b.0.files[grown as usize].end_size = Some(12288);
    // As if the database had written this file through a mapping the capture cannot see.
    b.0.files[other as usize].end_size = Some(16384);
    let (_dir, plan, data) = prepare(b.finish(), "timing=fast");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(
        (counts.end_sizes_checked, counts.end_sizes_differ),
        (2, 1),
        "the written file has its end size, the other does not"
    );
    let mut windowed = marked(52);
    windowed.files[0].end_size = Some(8192);
    let (_dir, plan, data) = prepare(windowed, "timing=fast,window=marked");
    let (_, counts) = run(&plan, &data);
    assert_eq!(
        counts.end_sizes_checked, 0,
        "a marked window does not make the calls after its end: nothing to compare"
    );
}

#[test]
fn think_cpu_burns_the_captured_cpu_time_before_a_call() {
    let mut trace = spaced(15);
    trace.provenance.cpu_ns_recorded = true;
    trace.ops[0][1].cpu_ns = 200 * MS;
    let mut other = trace.clone();
    other.header = Header::new([16; 16]);
    for (trace, set, at_least, below) in [(trace, "think=cpu", 0.2, 1.0), (other, "", 0.0, 0.1)] {
        let (_dir, plan, data) = prepare(trace, set);
        let (out, _) = run(&plan, &data);
        assert!(out.error.is_none(), "{:?}", out.error);
        let took = out.measured.as_secs_f64();
        assert!(took >= at_least * 0.9 && took < below, "{set}: {took} s");
    }
}

#[test]
fn asynchronous_calls_overlap_and_complete_where_the_capture_saw_them_complete() {
    // Four writes submitted together, each completing 1 ms later; the thread reads all four
    // blocks once it saw them complete, and so does another thread (through its edges). The
    // file starts empty: a read before a write finished would come back short.
    let mut b = B::new(17);
    let (f, _) = b.file("base/aio", FileKind::File, Some(0));
    let h = b.handle(f, libc::O_RDWR);
    let (t0, t1) = (b.thread(), b.thread());
    for k in 0..4u64 {
        let write = Record {
            is_async: true,
            handle: Some(h),
            offset: k * 8192,
            len: 8192,
            result: 8192,
            dur_ns: MS,
            ..Record::default()
        };
        b.0.op(
            t0,
            &Record {
                op: Some(OpCode::Write),
                start_ns: 1000 + k,
                ..write
            },
        )
        .unwrap();
    }
    b.io(t0, OpCode::Read, h, (0, 32768), 32768, 2 * MS);
    b.io(t1, OpCode::Read, h, (0, 32768), 32768, 3 * MS);
    let (_dir, plan, data) = prepare(b.finish(), "");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(counts.async_calls, 4);
    assert_eq!((ops(&out, OpKind::Write), ops(&out, OpKind::Read)), (4, 2));
    assert_eq!(counts.edges, 1, "thread 1 waits for the last write");
}

#[test]
fn a_thread_waiting_for_another_still_publishes_its_asynchronous_completions() {
    // Thread 1's asynchronous write ends at 1.1 ms; thread 0's fsync at 2 ms waits for it and
    // its write of `g` at 3 ms follows; thread 1's read of `g` at 10 ms waits for that write.
    // Thread 1 must publish its write's completion while it waits, or both wait for ever.
    let mut b = B::new(18);
    let (f, _) = b.file("f", FileKind::File, Some(8192));
    let (g, _) = b.file("g", FileKind::File, Some(0));
    let (hf, hg) = (b.handle(f, libc::O_RDWR), b.handle(g, libc::O_RDWR));
    let (t0, t1) = (b.thread(), b.thread());
    let write = Record {
        is_async: true,
        handle: Some(hf),
        len: 8192,
        result: 8192,
        dur_ns: 100_000,
        ..Record::default()
    };
    b.0.op(
        t1,
        &Record {
            op: Some(OpCode::Write),
            start_ns: 1_000_000,
            ..write
        },
    )
    .unwrap();
    b.io(t1, OpCode::Read, hg, (0, 8192), 8192, 10 * MS);
    b.on(t0, OpCode::Fsync, hf, 2 * MS);
    b.io(t0, OpCode::Write, hg, (0, 8192), 8192, 3 * MS);
    let (_dir, plan, data) = prepare(b.finish(), "");
    let (out, counts) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(counts.calls, 4);
    assert!(
        out.measured < Duration::from_millis(500),
        "{:?}: it waited until the cap",
        out.measured
    );
}

#[test]
fn a_trace_whose_paths_leave_their_root_is_refused() {
    let mut b = B::new(19);
    b.file("../../etc/passwd", FileKind::File, Some(10));
    b.thread();
    let trace = b.finish();
    let plan = plan_replay(&trace, "bad.trace", &Settings::default()).unwrap();
    replay::load(trace, plan.replay.as_ref().unwrap());
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = Target::Directory(dir.path().into());
    let e = lay_out(&plan, &target, &|_, _| true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("leaves its root") && e.contains("../../etc/passwd"),
        "{e}"
    );
}

/// PostgreSQL's way with a new WAL segment: a probe that finds no `wal`, a `tmp` created and
/// renamed to `wal`. A second replay on the same layout starts as the capture did: no `wal`.
#[test]
fn a_second_replay_on_a_repaired_layout_finds_no_file_the_first_one_renamed() {
    let mut b = B::new(30);
    let (f, tmp) = b.file("pg_wal/tmp", FileKind::File, None);
    b.file("pg_wal", FileKind::Dir, Some(4096));
    let wal = b.path("pg_wal/wal");
    let h = b.handle(f, libc::O_RDWR | libc::O_CREAT);
    let t = b.thread();
    let probe = Record {
        arg: u64::from(wal),
        result: -i64::from(libc::ENOENT),
        ..Record::default()
    };
    b.op(t, OpCode::Open, 1000, probe);
    let create = Record {
        handle: Some(h),
        arg: u64::from(tmp),
        arg2: libc::O_CREAT as u64,
        result: 5,
        ..Record::default()
    };
    b.op(t, OpCode::Open, 2000, create);
    b.io(t, OpCode::Write, h, (0, 8192), 8192, 3000);
    let rename = Record {
        arg: u64::from(tmp),
        arg2: u64::from(wal),
        ..Record::default()
    };
    b.op(t, OpCode::Rename, 4000, rename);
    let (dir, plan, data) = prepare(b.finish(), "");
    let (out, _) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(size(dir.path(), "pg_wal/wal"), Some(8192));
    let target = Target::Directory(dir.path().into());
    let again = lay_out(&plan, &target, &|_, _| true).unwrap();
    assert!(again.reused);
    assert_eq!(
        size(dir.path(), "pg_wal/wal"),
        None,
        "made by the first replay"
    );
    let (out, _) = run(&plan, &again);
    assert!(out.error.is_none(), "{:?}", out.error);
}

/// A rename over a file unlinks it, but a thread that had it open (opened before the replay
/// starts, as the capture found it open) still reads the old file: 8 KiB, not the renamed
/// 16 KiB, after the rename.
#[test]
fn a_file_replaced_by_a_rename_stays_readable_through_a_descriptor_open_before() {
    let mut b = B::new(41);
    let (old, at) = b.file("wal/current", FileKind::File, Some(8192));
    let (new, from) = b.file("wal/next", FileKind::File, Some(16384));
    let (h_old, h_new) = (b.handle(old, libc::O_RDWR), b.handle(new, libc::O_RDWR));
    let t = b.thread();
    b.io(t, OpCode::Read, h_new, (0, 16384), 16384, 1000);
    let rename = Record {
        arg: u64::from(from),
        arg2: u64::from(at),
        ..Record::default()
    };
    b.op(t, OpCode::Rename, 2000, rename);
    let u = b.thread();
    b.io(u, OpCode::Read, h_old, (0, 16384), 8192, 4000);
    let trace = b.finish();
    let program = bakeoff_core::trace::program::program(&trace);
    assert_eq!(
        program.threads[1].deps_of(0).len(),
        1,
        "the read waits for the rename"
    );
    let (_dir, plan, data) = prepare(trace, "");
    let (out, _) = run(&plan, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!((ops(&out, OpKind::Read), ops(&out, OpKind::Rename)), (2, 1));
}
