//! The format end to end: write, read back, and every way a file can be refused.

use super::testing::{db_like, provenance, random_trace};
use super::*;
use std::io::Cursor as Bytes;

fn encode(trace: &Trace) -> Vec<u8> {
    write_trace(trace, Vec::new()).unwrap()
}

fn read(bytes: &[u8]) -> Result<Trace, TraceError> {
    read_trace(Bytes::new(bytes))
}

#[test]
fn a_database_like_trace_round_trips_and_stays_under_20_bytes_a_record() {
    let trace = db_like(7, 4, 2000);
    let bytes = encode(&trace);
    assert_eq!(read(&bytes).unwrap(), trace);
    let per_record = bytes.len() as f64 / trace.record_count() as f64;
    assert!(per_record <= 20.0, "{per_record:.1} bytes per record");
}

#[test]
fn arbitrary_records_round_trip_whatever_their_fields() {
    for seed in 0..200 {
        let trace = random_trace(seed, (seed % 4) as u32, 60);
        assert_eq!(read(&encode(&trace)).unwrap(), trace, "seed {seed}");
    }
}

#[test]
fn each_kind_of_call_has_its_expected_size() {
    // One thread: a random 8 KiB pread, sequential WAL writes, an fsync.
    let mut t = Trace::new(Header::new([1; 16]), provenance(true));
    let p = t
        .path(PathEntry {
            root: 0,
            path: "base/1".into(),
        })
        .unwrap();
    let f = (t.file(FileEntry {
        path: p,
        kind: FileKind::File,
        start_size: Some(1 << 30),
        end_size: None,
    }))
    .unwrap();
    let h = t
        .handle(HandleEntry {
            file: f,
            flags: 2,
            implicit: true,
        })
        .unwrap();
    let th = t
        .thread(ThreadEntry {
            tid: 1,
            tgid: 1,
            comm: "postgres".into(),
        })
        .unwrap();
    let base = Record {
        handle: Some(h),
        len: 8192,
        result: 8192,
        cpu_ns: 20_000,
        ..Record::default()
    };
    let mut now = 0;
    for i in 0..300u64 {
        now += 150_000;
        let op = [OpCode::Read, OpCode::Write, OpCode::Fsync][(i % 3) as usize];
        let r = match op {
            OpCode::Read => Record {
                op: Some(op),
                offset: (i * 7919 % 100_000) * 8192,
                ..base
            },
            OpCode::Write => Record {
                op: Some(op),
                offset: i * 8192,
                ..base
            },
            _ => Record {
                op: Some(op),
                handle: Some(h),
                cpu_ns: 20_000,
                ..Record::default()
            },
        };
        t.op(
            th,
            &Record {
                start_ns: now,
                dur_ns: 40_000,
                ..r
            },
        )
        .unwrap();
    }
    t.finish(Footer::default()).unwrap();
    let bytes = encode(&t);
    assert_eq!(read(&bytes).unwrap(), t);
    assert!(
        bytes.len() < 300 * 14,
        "{} bytes for 300 records",
        bytes.len()
    );
}

#[test]
fn records_are_written_in_chunks_of_4_kib_or_one_second() {
    let trace = db_like(3, 2, 3000);
    let mut w = TraceWriter::new(Vec::new(), &trace.header, &trace.provenance).unwrap();
    for p in &trace.paths {
        w.path(p.clone()).unwrap();
    }
    for f in &trace.files {
        w.file(f.clone()).unwrap();
    }
    for h in &trace.handles {
        w.handle(h.clone()).unwrap();
    }
    for th in &trace.threads {
        w.thread(th.clone()).unwrap();
    }
    let after_tables = w.bytes_written();
    for r in &trace.ops[0][..10] {
        w.op(0, r).unwrap();
    }
    assert_eq!(w.bytes_written(), after_tables, "10 records stay buffered");
    // A record two seconds later starts a chunk: the first ten are written.
    let late = Record {
        start_ns: trace.ops[0][9].start_ns + 2_000_000_000,
        ..trace.ops[0][10]
    };
    w.op(0, &late).unwrap();
    assert!(w.bytes_written() > after_tables);
    let before = w.bytes_written();
    let mut n = 0;
    while w.bytes_written() == before {
        w.op(1, &trace.ops[1][n]).unwrap();
        n += 1;
    }
    // 4 KiB of records at ~12 bytes each.
    assert!((200..500).contains(&n), "{n} records before a chunk");
    assert!(w.bytes_written() - before >= 4096);
}

#[test]
fn flush_all_leaves_a_file_that_a_lenient_read_takes_whole() {
    let trace = db_like(5, 3, 500);
    let mut w = TraceWriter::new(Vec::new(), &trace.header, &trace.provenance).unwrap();
    for p in &trace.paths {
        w.path(p.clone()).unwrap();
    }
    for f in &trace.files {
        w.file(f.clone()).unwrap();
    }
    for h in &trace.handles {
        w.handle(h.clone()).unwrap();
    }
    for th in &trace.threads {
        w.thread(th.clone()).unwrap();
    }
    for (i, ops) in trace.ops.iter().enumerate() {
        for r in ops {
            w.op(i as u32, r).unwrap();
        }
    }
    w.flush_all().unwrap();
    let bytes = w.into_inner();
    let e = read(&bytes).unwrap_err();
    assert!(e.is_truncated(), "{e}");
    assert!(e.to_string().contains("trace show"), "{e}");
    let lenient = read_trace_lenient(Bytes::new(&bytes)).unwrap();
    assert_eq!(lenient.truncated_at, Some(bytes.len() as u64));
    assert_eq!(lenient.trace.ops, trace.ops);
    assert_eq!(lenient.trace.footer.ops, trace.record_count());
    // Cut within the last chunk: everything before it is still there.
    let cut = read_trace_lenient(Bytes::new(&bytes[..bytes.len() - 3])).unwrap();
    assert!(cut.trace.record_count() < trace.record_count());
    assert_eq!(cut.truncated_at, Some(bytes.len() as u64 - 3));
    // A complete file reads the same either way.
    let whole = encode(&trace);
    let lenient = read_trace_lenient(Bytes::new(&whole)).unwrap();
    assert_eq!((lenient.trace, lenient.truncated_at), (trace, None));
}

#[test]
fn the_writer_refuses_what_its_reader_would() {
    let mut w = TraceWriter::new(Vec::new(), &Header::new([0; 16]), &provenance(false)).unwrap();
    let file = FileEntry {
        path: 0,
        kind: FileKind::File,
        start_size: None,
        end_size: None,
    };
    assert!(w.file(file).is_err(), "a file of an undefined path");
    let long = PathEntry {
        root: 0,
        path: "x".repeat(4097),
    };
    assert!(w.path(long).is_err());
    let th = w
        .thread(ThreadEntry {
            tid: 1,
            tgid: 1,
            comm: "t".into(),
        })
        .unwrap();
    let read = Record {
        op: Some(OpCode::Read),
        handle: Some(0),
        ..Record::default()
    };
    assert!(w.op(th, &read).is_err(), "an undefined handle");
    assert!(
        w.op(
            th + 1,
            &Record {
                handle: None,
                ..read
            }
        )
        .is_err(),
        "an undefined thread"
    );
    assert!(
        w.op(th, &Record::default()).is_err(),
        "a record without an op"
    );
    let unlink = Record {
        op: Some(OpCode::Unlink),
        arg: 3,
        ..Record::default()
    };
    assert!(w.op(th, &unlink).is_err(), "an undefined path");
    w.finish(Footer::default()).unwrap();
    assert!(
        w.mark(Mark {
            t_ns: 0,
            name: "late".into()
        })
        .is_err(),
        "after the end"
    );
}

#[test]
fn a_summary_has_the_tables_and_counts_without_the_records() {
    let trace = db_like(11, 3, 700);
    let dir = std::env::temp_dir().join(format!("bakeoff-trace-summary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.trace");
    std::fs::write(&path, encode(&trace)).unwrap();
    let s = read_summary(&path).unwrap();
    assert_eq!(read_trace_file(&path).unwrap(), trace);
    std::fs::write(dir.join("cut.trace"), &encode(&trace)[..2000]).unwrap();
    let cut = read_summary(&dir.join("cut.trace")).unwrap_err();
    let missing = read_trace_file(&dir.join("none.trace"))
        .unwrap_err()
        .to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        (s.trace.header, &s.trace.provenance, &s.trace.paths),
        (trace.header, &trace.provenance, &trace.paths)
    );
    assert_eq!(
        (&s.trace.files, &s.trace.handles, &s.trace.threads),
        (&trace.files, &trace.handles, &trace.threads)
    );
    assert_eq!(
        (&s.trace.marks, &s.trace.footer),
        (&trace.marks, &trace.footer)
    );
    assert_eq!(s.records_per_thread, vec![700, 700, 700]);
    assert_eq!(TraceSummary::of(&trace, s.file_bytes), s);
    assert!(
        s.bytes_per_record() > 5.0 && s.bytes_per_record() <= 20.0,
        "{}",
        s.bytes_per_record()
    );
    assert!(cut.is_truncated(), "{cut}");
    assert!(missing.contains("none.trace"), "{missing}");
}

#[test]
fn every_damage_is_named() {
    let trace = db_like(1, 2, 300);
    let good = encode(&trace);
    assert!(matches!(read(&[]), Err(TraceError::Empty)));
    assert!(matches!(
        read(b"PK\x03\x04 a zip file"),
        Err(TraceError::NotATrace)
    ));
    assert!(matches!(
        read(&good[..5]),
        Err(TraceError::Truncated { offset: 5 })
    ));
    let mut v2 = good.clone();
    v2[8] = 2;
    let e = read(&v2).unwrap_err();
    assert!(matches!(e, TraceError::Version { major: 2, .. }), "{e}");
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    assert!(matches!(read(&flipped), Err(TraceError::Crc { .. })));
    let mut id = good.clone();
    id[20] ^= 1; // the capture id, covered by the first chunk's CRC
    assert!(matches!(
        read(&id),
        Err(TraceError::Crc {
            chunk: 0,
            offset: 32
        })
    ));
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(matches!(read(&trailing), Err(TraceError::Malformed { .. })));
    let e = read(&good[..good.len() - 1]).unwrap_err();
    assert!(matches!(e, TraceError::Truncated { .. }), "{e}");
}

/// A file of the header, the provenance, and the given chunks, with valid CRCs.
fn forge(chunks: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut out = encode(&Trace::new(Header::new([0; 16]), provenance(false)));
    let end = out.len() - 16 - (5 + 10 + 4);
    out.truncate(end);
    for (kind, payload) in chunks {
        let len = (payload.len() as u32).to_le_bytes();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&[*kind]);
        crc.update(&len);
        crc.update(payload);
        out.push(*kind);
        out.extend_from_slice(&len);
        out.extend_from_slice(payload);
        out.extend_from_slice(&crc.finalize().to_le_bytes());
    }
    out
}

#[test]
fn forged_chunks_with_valid_crcs_are_still_refused() {
    assert!(read(&forge(&[])).unwrap_err().is_truncated());
    // A file of path 0 that was never defined.
    let e = read(&forge(&[(0x03, vec![0, 0, 0, 0, 0])])).unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::Undefined {
                what: "path",
                id: 0,
                ..
            }
        ),
        "{e}"
    );
    // A path longer than 4096 bytes.
    let mut path = vec![0, 0, 0x81, 0x20];
    path.extend(std::iter::repeat_n(b'a', 4097));
    let e = read(&forge(&[(0x02, path)])).unwrap_err();
    assert!(matches!(e, TraceError::TooLong { limit: 4096, .. }), "{e}");
    // A thread, then a record with op code 20.
    let thread = (0x05, vec![0, 1, 1, 1, b't']);
    let e = read(&forge(&[thread.clone(), (0x06, vec![0, 0, 1, 20, 0, 0])])).unwrap_err();
    assert!(matches!(e, TraceError::InvalidOp { code: 20, .. }), "{e}");
    // A count of records the chunk cannot hold.
    let e = read(&forge(&[thread.clone(), (0x06, vec![0, 0, 100, 5])])).unwrap_err();
    assert!(matches!(e, TraceError::Malformed { .. }), "{e}");
    // Ids out of order.
    let e = read(&forge(&[(0x05, vec![1, 1, 1, 1, b't'])])).unwrap_err();
    assert!(matches!(e, TraceError::Malformed { .. }), "{e}");
    // A chunk over 16 MiB is refused before it is read.
    let mut huge = forge(&[]);
    huge.extend_from_slice(&[0x06, 0, 0, 0, 2]);
    let e = read(&huge).unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::TooLong {
                what: "a chunk",
                ..
            }
        ),
        "{e}"
    );
    // An unknown kind from a later minor version is skipped; the file is still cut.
    assert!(read(&forge(&[(0x40, vec![1, 2, 3])]))
        .unwrap_err()
        .is_truncated());
}

#[test]
fn a_provenance_that_is_not_json_is_named() {
    let mut bytes = encode(&Trace::new(Header::new([0; 16]), provenance(false)));
    bytes.truncate(32);
    let payload = b"{not json";
    let len = (payload.len() as u32).to_le_bytes();
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes);
    crc.update(&[1]);
    crc.update(&len);
    crc.update(payload);
    bytes.push(1);
    bytes.extend_from_slice(&len);
    bytes.extend_from_slice(payload);
    bytes.extend_from_slice(&crc.finalize().to_le_bytes());
    let e = read(&bytes).unwrap_err();
    assert!(
        matches!(e, TraceError::Provenance { offset: 32, .. }),
        "{e}"
    );
}
