use super::*;
use crate::trace::model::*;

/// A trace of `threads` threads on files `a` (16 KiB, exists at start) and `new` (created in
/// the trace); handle 0 is `a`, handle 1 is `new`; path 2 is `renamed`.
fn trace(threads: u32) -> Trace {
    let mut t = Trace::new(Header::new([1; 16]), Provenance::default());
    for (name, size) in [("a", Some(16384)), ("new", None)] {
        let path = t
            .path(PathEntry {
                root: 0,
                path: name.into(),
            })
            .unwrap();
        let file = (t.file(FileEntry {
            path,
            kind: FileKind::File,
            start_size: size,
            end_size: size,
        }))
        .unwrap();
        t.handle(HandleEntry {
            file,
            flags: 0,
            implicit: size.is_some(),
        })
        .unwrap();
    }
    t.path(PathEntry {
        root: 0,
        path: "renamed".into(),
    })
    .unwrap();
    for tid in 0..threads {
        t.thread(ThreadEntry {
            tid,
            tgid: 1,
            comm: "db".into(),
        })
        .unwrap();
    }
    t
}

fn rec(op: OpCode, handle: u32, offset: u64, len: u64, start_ns: u64) -> Record {
    Record {
        op: Some(op),
        handle: op.takes_handle().then_some(handle),
        offset,
        len,
        result: len as i64,
        start_ns,
        dur_ns: 10,
        ..Record::default()
    }
}

fn deps(p: &Program, thread: usize, op: usize) -> Vec<(u32, u32)> {
    p.threads[thread]
        .deps_of(op)
        .iter()
        .map(|d| (d.thread, d.count))
        .collect()
}

#[test]
fn a_sync_waits_for_other_threads_writes_that_ended_before_it() {
    let mut t = trace(3);
    t.op(0, &rec(OpCode::Write, 0, 0, 8192, 100)).unwrap();
    t.op(0, &rec(OpCode::Write, 0, 8192, 8192, 200)).unwrap();
    t.op(2, &rec(OpCode::Write, 0, 0, 8192, 305)).unwrap(); // ends after the fsync starts
    t.op(1, &rec(OpCode::Fsync, 0, 0, 0, 300)).unwrap();
    let p = program(&t);
    assert_eq!(
        deps(&p, 1, 0),
        vec![(0, 2)],
        "the last write of thread 0, not thread 2's"
    );
    assert!(
        deps(&p, 0, 1).is_empty(),
        "a thread does not wait for itself"
    );
    assert_eq!(p.edge_count(), 1);
}

#[test]
fn a_read_waits_for_another_threads_write_to_a_block_it_overlaps() {
    let mut t = trace(2);
    t.op(0, &rec(OpCode::Write, 0, 0, 4096, 100)).unwrap();
    t.op(0, &rec(OpCode::Write, 0, 8192, 100, 120)).unwrap();
    t.op(1, &rec(OpCode::Read, 0, 4096, 4096, 200)).unwrap(); // block 0: the first write
    t.op(1, &rec(OpCode::Read, 0, 0, 100, 300)).unwrap(); // block 0 again: deduplicated
    t.op(1, &rec(OpCode::Read, 0, 16384, 8192, 400)).unwrap(); // block 2: nobody wrote it
    t.op(1, &rec(OpCode::Read, 0, 8000, 1000, 500)).unwrap(); // blocks 0 and 1: the second
    let p = program(&t);
    assert_eq!(deps(&p, 1, 0), vec![(0, 1)]);
    assert!(deps(&p, 1, 1).is_empty(), "already waited for");
    assert!(deps(&p, 1, 2).is_empty());
    assert_eq!(deps(&p, 1, 3), vec![(0, 2)]);
}

#[test]
fn calls_on_a_file_wait_for_its_create_and_rename_and_an_unlink_for_the_last_calls() {
    let mut t = trace(3);
    t.op(0, &rec(OpCode::Open, 1, 0, 0, 100)).unwrap(); // creates `new`
    t.op(1, &rec(OpCode::Write, 1, 0, 8192, 200)).unwrap();
    let rename = Record {
        arg: 1,
        arg2: 2,
        result: 0,
        ..rec(OpCode::Rename, 0, 0, 0, 300)
    };
    t.op(0, &rename).unwrap();
    t.op(2, &rec(OpCode::Read, 1, 0, 8192, 400)).unwrap();
    let unlink = Record {
        arg: 2,
        result: 0,
        ..rec(OpCode::Unlink, 0, 0, 0, 500)
    };
    t.op(1, &unlink).unwrap();
    let p = program(&t);
    assert_eq!(
        deps(&p, 1, 0),
        vec![(0, 1)],
        "the write waits for the create"
    );
    assert_eq!(
        deps(&p, 0, 1),
        vec![(1, 1)],
        "the rename waits for the write"
    );
    assert_eq!(
        p.threads[0].files[1],
        Some(1),
        "the rename's path is the created file"
    );
    // The read waits for the rename (which follows the create) and for the write.
    assert_eq!(deps(&p, 2, 0), vec![(0, 2), (1, 1)]);
    assert_eq!(
        deps(&p, 1, 1),
        vec![(0, 2), (2, 1)],
        "the unlink at the new name waits for the rename and the read"
    );
}

#[test]
fn a_failed_write_or_open_makes_no_edge() {
    let mut t = trace(2);
    let failed = Record {
        result: -28,
        ..rec(OpCode::Write, 0, 0, 8192, 100)
    };
    t.op(0, &failed).unwrap();
    let missing = Record {
        result: -2,
        ..rec(OpCode::Open, 1, 0, 0, 100)
    };
    t.op(0, &missing).unwrap();
    t.op(1, &rec(OpCode::Read, 0, 0, 8192, 300)).unwrap();
    t.op(1, &rec(OpCode::Fdatasync, 1, 0, 0, 400)).unwrap();
    let p = program(&t);
    assert_eq!(p.edge_count(), 0);
}

#[test]
fn calls_of_no_length_at_one_instant_never_wait_for_each_other() {
    let mut t = trace(2);
    let zero = |op| Record {
        dur_ns: 0,
        ..rec(op, 0, 0, 8192, 100)
    };
    t.op(0, &zero(OpCode::Write)).unwrap();
    t.op(1, &zero(OpCode::Write)).unwrap();
    t.op(1, &zero(OpCode::Fsync)).unwrap();
    t.op(0, &zero(OpCode::Read)).unwrap();
    let p = program(&t);
    assert_eq!(
        p.edge_count(),
        0,
        "an end at a start's instant is not before it"
    );
}

#[test]
fn a_read_over_blocks_of_several_writes_waits_once_for_the_latest() {
    let mut t = trace(2);
    for k in 0..4 {
        t.op(0, &rec(OpCode::Write, 0, k * 8192, 8192, 100 + k * 20))
            .unwrap();
    }
    t.op(1, &rec(OpCode::Read, 0, 0, 32768, 500)).unwrap();
    let p = program(&t);
    assert_eq!(deps(&p, 1, 0), vec![(0, 4)]);
}

/// PostgreSQL's relation cache file: a backend's open finds no `pg_internal.init` (ENOENT),
/// another writes `pg_internal.init.PID` and renames it there. The rename must wait for the
/// failed open, or a fast replay opens a file the capture did not find.
#[test]
fn a_rename_onto_a_path_waits_for_another_threads_failed_open_of_it() {
    let mut t = trace(2);
    let missing = Record {
        result: -2,
        arg: 2,
        ..rec(OpCode::Open, 0, 0, 0, 100)
    };
    t.op(0, &missing).unwrap();
    let create = Record {
        arg: 1,
        arg2: 0o100,
        ..rec(OpCode::Open, 1, 0, 0, 150)
    };
    t.op(1, &create).unwrap();
    let rename = Record {
        arg: 1,
        arg2: 2,
        ..rec(OpCode::Rename, 0, 0, 0, 300)
    };
    t.op(1, &rename).unwrap();
    let found = Record {
        arg: 2,
        ..rec(OpCode::Open, 1, 0, 0, 500)
    };
    t.op(0, &found).unwrap();
    let p = program(&t);
    assert_eq!(
        deps(&p, 1, 1),
        vec![(0, 1)],
        "the rename waits for the failed open"
    );
    assert_eq!(
        deps(&p, 0, 1),
        vec![(1, 2)],
        "the later open waits for the rename"
    );
}

/// PostgreSQL asks a relation's length with `lseek(SEEK_END)` while other backends extend it:
/// the length must be the captured one, so the probe waits for the extends before it and the
/// extends after it wait for the probe.
#[test]
fn a_size_probe_and_the_writes_that_extend_the_file_keep_their_order() {
    let mut t = trace(2);
    t.op(0, &rec(OpCode::Write, 0, 16384, 8192, 100)).unwrap();
    let probe = Record {
        arg: 2,
        result: 24576,
        ..rec(OpCode::Lseek, 0, 0, 0, 200)
    };
    t.op(1, &probe).unwrap();
    t.op(0, &rec(OpCode::Write, 0, 24576, 8192, 300)).unwrap();
    t.op(0, &rec(OpCode::Write, 0, 0, 8192, 400)).unwrap();
    let p = program(&t);
    assert_eq!(
        deps(&p, 1, 0),
        vec![(0, 1)],
        "the probe waits for the extend before it"
    );
    assert_eq!(
        deps(&p, 0, 1),
        vec![(1, 1)],
        "the next extend waits for the probe"
    );
    assert_eq!(
        deps(&p, 0, 2),
        vec![],
        "a write inside the file waits for no probe"
    );
}

/// Syncs of one file that the capture saw one after another stay so; one that started while
/// another thread's was under way keeps no order with it.
#[test]
fn a_sync_waits_for_another_threads_sync_of_the_file_that_ended_before_it() {
    let mut t = trace(3);
    t.op(0, &rec(OpCode::Fdatasync, 0, 0, 0, 100)).unwrap();
    t.op(1, &rec(OpCode::Fdatasync, 0, 0, 0, 200)).unwrap();
    let overlapping = Record {
        dur_ns: 100,
        ..rec(OpCode::Fsync, 0, 0, 0, 300)
    };
    t.op(0, &overlapping).unwrap();
    t.op(2, &rec(OpCode::Fsync, 0, 0, 0, 350)).unwrap();
    let p = program(&t);
    assert_eq!(
        deps(&p, 1, 0),
        vec![(0, 1)],
        "the second sync waits for the first"
    );
    assert_eq!(
        deps(&p, 2, 0),
        vec![(0, 1), (1, 1)],
        "the last waits for the syncs that had ended, not for thread 0's under way (0, 2)"
    );
    let merged = program_with(&t, SyncRule::Merge);
    assert!(
        (0..3).all(|thread| merged.threads[thread].deps.is_empty()),
        "under group commit the replay orders a file's syncs as the threads come to them"
    );
}

/// A write inside the file leaves its size as it was: a later probe does not wait for it,
/// only for the last write that made the file longer.
#[test]
fn a_size_probe_waits_for_the_last_extend_and_not_for_writes_inside_the_file() {
    let mut t = trace(3);
    t.op(0, &rec(OpCode::Write, 0, 16384, 8192, 100)).unwrap();
    t.op(2, &rec(OpCode::Write, 0, 0, 8192, 200)).unwrap();
    let probe = Record {
        arg: 2,
        result: 24576,
        ..rec(OpCode::Lseek, 0, 0, 0, 300)
    };
    t.op(1, &probe).unwrap();
    let p = program(&t);
    assert_eq!(
        deps(&p, 1, 0),
        vec![(0, 1)],
        "the probe waits for the extend, not for the later write inside the file"
    );
}

/// A damaged trace's lengths and offsets are data, not loop bounds: a write that would end
/// past 2^64 and one of a petabyte are taken as the most one call moves, without an overflow
/// or a loop over billions of blocks.
#[test]
fn a_damaged_length_or_offset_neither_overflows_nor_loops() {
    let mut t = trace(2);
    t.op(0, &rec(OpCode::Write, 0, u64::MAX - 100, 8192, 100))
        .unwrap();
    t.op(0, &rec(OpCode::Write, 0, 0, 1 << 50, 200)).unwrap();
    t.op(1, &rec(OpCode::Read, 0, u64::MAX - 10, 4096, 300))
        .unwrap();
    t.op(1, &rec(OpCode::Read, 0, 0, u64::MAX, 400)).unwrap();
    let p = program(&t);
    assert_eq!(
        deps(&p, 1, 0),
        vec![(0, 1)],
        "the block at the end of the range"
    );
    assert_eq!(deps(&p, 1, 1), vec![(0, 2)], "block 0: the second write");
}
