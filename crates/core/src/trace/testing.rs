//! Synthetic traces for tests (here, and in other crates through the `testing` feature):
//! [`db_like`], shaped like a database's calls, and [`arb_trace`], arbitrary valid traces for
//! property tests. Both are deterministic in their seed.

use super::model::{
    FileEntry, FileId, FileKind, Footer, HandleEntry, HandleId, Header, Mark, OpCode, PathEntry,
    PathId, Provenance, Record, RootInfo, ThreadEntry, Trace, TraceSink,
};
use proptest::prelude::*;
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

const BLOCK: u64 = 8192;
const DATA_BLOCKS: u64 = 8192;
const WAL_SEGMENT: u64 = 16 << 20;
const O_RDWR: u32 = 2;
const ENOENT: i64 = 2;

/// The provenance of a synthetic capture.
pub fn provenance(cpu_ns_recorded: bool) -> Provenance {
    Provenance {
        schema_version: 1,
        bakeoff_version: "synthetic".into(),
        kernel: "6.18.0".into(),
        roots: vec![RootInfo {
            name: "data".into(),
            path: "/srv/db".into(),
            fs_type: "ext4".into(),
            mount_options: "rw,relatime".into(),
        }],
        filter: "synthetic".into(),
        started_unix_s: 1_700_000_000,
        app_memory_bytes: 256 << 20,
        ring_bytes: 32 << 20,
        cpu_ns_recorded,
        ..Provenance::default()
    }
}

/// One thread's clock and randomness while its calls are made.
struct Clock<'a> {
    rng: &'a mut XorShiftRng,
    now: u64,
}

impl Clock<'_> {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    /// A call of `op` after a think time of 20-200 µs, lasting 5-100 µs.
    fn call(&mut self, op: OpCode) -> Record {
        self.now += 20_000 + self.below(180_000);
        let dur_ns = 5_000 + self.below(95_000);
        let cpu_ns = 1_000 + self.below(49_000);
        Record {
            op: Some(op),
            start_ns: self.now,
            dur_ns,
            cpu_ns,
            ..Record::default()
        }
    }

    fn io(&mut self, op: OpCode, handle: u32, offset: u64, len: u64) -> Record {
        let r = self.call(op);
        Record {
            handle: Some(handle),
            offset,
            len,
            result: len as i64,
            ..r
        }
    }
}

/// A database-like trace: `threads` threads of `ops_per_thread` calls each. Thread 0 is the WAL
/// writer (opens the WAL segment, writes it sequentially in 8 KiB with an fdatasync every four,
/// renames it and unlinks the old one at the end); the others are sessions reading and writing
/// three data files at random 8 KiB offsets, some asynchronously, with an occasional fsync.
/// Thread 1 (or 0 alone) fails once to open a missing file (-ENOENT). Marks `window_start` and
/// `window_end` bracket the middle.
pub fn db_like(seed: u64, threads: u32, ops_per_thread: u32) -> Trace {
    let id: [u8; 16] = seed.to_le_bytes().repeat(2).try_into().expect("16 bytes");
    let mut t = Trace::new(Header::new(id), provenance(true));
    let db = DbTables::add(&mut t);
    let mut rng = XorShiftRng::seed_from_u64(seed);
    for i in 0..threads.max(1) {
        let comm = if i == 0 { "walwriter" } else { "postgres" };
        let entry = ThreadEntry {
            tid: 1000 + i,
            tgid: 1000,
            comm: comm.into(),
        };
        let id = t.thread(entry).expect(SINK);
        let mut clock = Clock {
            rng: &mut rng,
            now: u64::from(i) * 7_000,
        };
        let calls = match i {
            0 => wal_writer(&mut clock, ops_per_thread, db.wal_handle, db.wal_paths),
            _ => session(&mut clock, ops_per_thread, &db.data_handles),
        };
        for r in calls {
            t.op(id, &r).expect(SINK);
        }
    }
    // The session's first call, or the WAL writer's second (after its open).
    let (thread, index) = if threads > 1 { (1, 0) } else { (0, 1) };
    if let Some(r) = t.ops.get_mut(thread).and_then(|ops| ops.get_mut(index)) {
        let (op, arg, result) = (Some(OpCode::Open), u64::from(db.missing), -ENOENT);
        *r = Record {
            op,
            arg,
            result,
            handle: None,
            offset: 0,
            len: 0,
            is_async: false,
            ..*r
        };
    }
    let end = t
        .ops
        .iter()
        .flatten()
        .map(Record::end_ns)
        .max()
        .expect(SINK);
    for (name, t_ns) in [("window_start", end / 10), ("window_end", end - end / 10)] {
        t.mark(Mark {
            t_ns,
            name: name.into(),
        })
        .expect(SINK);
    }
    let (ops, end_sizes) = (t.record_count(), db.end_sizes);
    let footer = Footer {
        ops,
        duration_ns: end,
        end_sizes,
        ..Footer::default()
    };
    t.finish(footer).expect(SINK);
    t
}

/// What the in-memory sink can only refuse past 2^32 entries.
const SINK: &str = "the in-memory trace takes it";

/// The tables of [`db_like`]: three data files, a WAL segment and the name it is renamed to,
/// and a path that does not exist.
struct DbTables {
    data_handles: Vec<HandleId>,
    wal_handle: HandleId,
    wal_paths: [PathId; 2],
    missing: PathId,
    end_sizes: Vec<(FileId, Option<u64>)>,
}

impl DbTables {
    fn add(t: &mut Trace) -> DbTables {
        let mut path = |p: &str| {
            t.path(PathEntry {
                root: 0,
                path: p.into(),
            })
            .expect(SINK)
        };
        let data: Vec<PathId> = (1..=3).map(|i| path(&format!("base/16384/{i}"))).collect();
        let wal_paths = ["1", "2"].map(|n| path(&format!("pg_wal/00000001000000000000000{n}")));
        let missing = path("base/16384/9999");
        let mut sized = data
            .iter()
            .map(|p| (*p, DATA_BLOCKS * BLOCK))
            .collect::<Vec<_>>();
        sized.push((wal_paths[0], WAL_SEGMENT));
        let mut end_sizes = Vec::new();
        let mut handles = Vec::new();
        for (i, (path, size)) in sized.into_iter().enumerate() {
            let (start_size, end_size) = (Some(size), Some(size));
            let entry = FileEntry {
                path,
                kind: FileKind::File,
                start_size,
                end_size,
            };
            let file = t.file(entry).expect(SINK);
            end_sizes.push((file, end_size));
            // The data files were open before the capture; the WAL is opened in it.
            let implicit = i < data.len();
            let handle = HandleEntry {
                file,
                flags: O_RDWR,
                implicit,
            };
            handles.push(t.handle(handle).expect(SINK));
        }
        let wal_handle = handles.pop().expect("the WAL's handle");
        DbTables {
            data_handles: handles,
            wal_handle,
            wal_paths,
            missing,
            end_sizes,
        }
    }
}

fn wal_writer(c: &mut Clock, n: u32, h: u32, [old, new]: [u32; 2]) -> Vec<Record> {
    let mut calls = vec![Record {
        handle: Some(h),
        arg: u64::from(old),
        result: 7,
        ..c.call(OpCode::Open)
    }];
    let mut offset = 0;
    while calls.len() + 3 < n as usize {
        if calls.len() % 5 == 0 {
            calls.push(Record {
                handle: Some(h),
                ..c.call(OpCode::Fdatasync)
            });
        } else {
            calls.push(c.io(OpCode::Write, h, offset, BLOCK));
            offset = (offset + BLOCK) % WAL_SEGMENT;
        }
    }
    calls.push(Record {
        handle: Some(h),
        ..c.call(OpCode::Close)
    });
    calls.push(Record {
        arg: u64::from(old),
        arg2: u64::from(new),
        ..c.call(OpCode::Rename)
    });
    calls.push(Record {
        arg: u64::from(new),
        ..c.call(OpCode::Unlink)
    });
    calls.truncate(n as usize);
    calls
}

fn session(c: &mut Clock, n: u32, handles: &[u32]) -> Vec<Record> {
    (0..n)
        .map(|_| {
            let h = handles[c.below(handles.len() as u64) as usize];
            let offset = c.below(DATA_BLOCKS) * BLOCK;
            match c.below(100) {
                0..=69 => c.io(OpCode::Read, h, offset, BLOCK),
                70..=84 => Record {
                    is_async: true,
                    ..c.io(OpCode::Read, h, offset, BLOCK)
                },
                85..=97 => c.io(OpCode::Write, h, offset, BLOCK),
                _ => Record {
                    handle: Some(h),
                    ..c.call(OpCode::Fsync)
                },
            }
        })
        .collect()
}

/// A value that is often at an edge: 0, small, 512-aligned, or anything up to `u64::MAX`.
fn edgy(rng: &mut XorShiftRng) -> u64 {
    match rng.next_u32() % 6 {
        0 => 0,
        1 => u64::from(rng.next_u32() % 300),
        2 => (rng.next_u64() >> 20) * 512,
        3 => u64::MAX - u64::from(rng.next_u32() % 3),
        _ => rng.next_u64(),
    }
}

/// An arbitrary valid trace from `seed`: any op with any field values (within the tables'
/// ids), starts in any order, flags and names of any length up to the limits' neighbourhood.
pub fn random_trace(seed: u64, threads: u32, ops_per_thread: u32) -> Trace {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let cpu = rng.next_u32() % 2 == 0;
    let provenance = Provenance {
        anonymized: rng.next_u32() % 2 == 0,
        ..provenance(cpu)
    };
    let mut t = Trace::new(Header::new([rng.next_u32() as u8; 16]), provenance);
    let text = |rng: &mut XorShiftRng| -> String {
        let len = rng.next_u32() % 40;
        (0..len)
            .map(|_| char::from(b' ' + (rng.next_u32() % 95) as u8))
            .collect::<String>()
            + "é"
    };
    let n_paths = 1 + rng.next_u32() % 6;
    for _ in 0..n_paths {
        let path = PathEntry {
            root: (rng.next_u32() % 3) as u16,
            path: text(&mut rng),
        };
        t.path(path).expect(SINK);
    }
    let size = |rng: &mut XorShiftRng| Some(edgy(rng)).filter(|_| rng.next_u32() % 4 != 0);
    for _ in 0..1 + rng.next_u32() % 5 {
        let kind = if rng.next_u32() % 5 == 0 {
            FileKind::Dir
        } else {
            FileKind::File
        };
        let entry = FileEntry {
            path: rng.next_u32() % n_paths,
            kind,
            start_size: size(&mut rng),
            end_size: size(&mut rng),
        };
        t.file(entry).expect(SINK);
    }
    let n_files = t.files.len() as u32;
    let n_handles = 1 + rng.next_u32() % 6;
    for _ in 0..n_handles {
        let entry = HandleEntry {
            file: rng.next_u32() % n_files,
            flags: rng.next_u32(),
            implicit: rng.next_u32() % 2 == 0,
        };
        t.handle(entry).expect(SINK);
    }
    for i in 0..threads {
        let entry = ThreadEntry {
            tid: rng.next_u32(),
            tgid: rng.next_u32(),
            comm: text(&mut rng),
        };
        t.thread(entry).expect(SINK);
        for _ in 0..ops_per_thread {
            let r = random_record(&mut rng, n_paths, n_handles, cpu);
            t.op(i, &r).expect(SINK);
        }
    }
    for _ in 0..rng.next_u32() % 3 {
        t.mark(Mark {
            t_ns: edgy(&mut rng),
            name: text(&mut rng),
        })
        .expect(SINK);
    }
    let lost = super::model::LostCounts {
        ring_full: edgy(&mut rng),
        unfinished_at_end: edgy(&mut rng),
        ..Default::default()
    };
    let uncovered = (0..rng.next_u32() % 3)
        .map(|_| (text(&mut rng), edgy(&mut rng)))
        .collect();
    let end_sizes = (0..rng.next_u32() % 4)
        .map(|_| (rng.next_u32() % n_files, size(&mut rng)))
        .collect();
    let footer = Footer {
        ops: t.record_count(),
        duration_ns: edgy(&mut rng),
        lost,
        uncovered,
        end_sizes,
    };
    t.finish(footer).expect(SINK);
    t
}

fn random_record(rng: &mut XorShiftRng, paths: u32, handles: u32, cpu: bool) -> Record {
    let op = OpCode::ALL[(rng.next_u32() % 16) as usize];
    let path_arg = |rng: &mut XorShiftRng| u64::from(rng.next_u32() % paths);
    let (arg, arg2) = match op {
        OpCode::Open | OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir => (path_arg(rng), 0),
        OpCode::Rename => (path_arg(rng), path_arg(rng)),
        _ => (edgy(rng), edgy(rng)),
    };
    let handle = Some(rng.next_u32() % handles).filter(|_| rng.next_u32() % 5 != 0);
    let (offset, len) = (edgy(rng), edgy(rng));
    let result = match rng.next_u32() % 3 {
        0 => len as i64,
        1 => -i64::from(rng.next_u32() % 140),
        _ => edgy(rng) as i64,
    };
    let cpu_ns = if cpu || rng.next_u32() % 4 == 0 {
        edgy(rng)
    } else {
        0
    };
    Record {
        op: Some(op),
        is_async: rng.next_u32() % 4 == 0,
        start_ns: edgy(rng),
        dur_ns: edgy(rng),
        handle,
        offset,
        len,
        result,
        arg,
        arg2,
        cpu_ns,
    }
}

/// Arbitrary valid traces of up to 3 threads and 40 records each.
pub fn arb_trace() -> impl Strategy<Value = Trace> {
    (any::<u64>(), 0..4u32, 0..40u32)
        .prop_map(|(seed, threads, ops)| random_trace(seed, threads, ops))
}

/// Database-like traces of 1 to 4 threads and 250 to 1,000 records each.
pub fn arb_db_like() -> impl Strategy<Value = Trace> {
    (any::<u64>(), 1..5u32, 250..1000u32)
        .prop_map(|(seed, threads, ops)| db_like(seed, threads, ops))
}
