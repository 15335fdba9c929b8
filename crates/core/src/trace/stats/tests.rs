use super::build::Build;
use super::*;
use crate::trace::model::{Footer, Record};

/// A backend reading random 8 KiB blocks and committing through the log, a writer flushing.
fn small() -> Trace {
    let mut b = Build::new();
    let table = b.file("base/1/16384", 1 << 20, O_DIRECT);
    let wal = b.file("pg_wal/0001", 1 << 20, O_DSYNC);
    let backend = b.thread(100, "postgres");
    let writer = b.thread(101, "walwriter");
    for i in 0..10u64 {
        b.read(backend, table, (i * 37 % 16) * 8192, 8192);
        b.write(writer, wal, i * 4096, 4096);
    }
    b.read(backend, table, 0, 8192);
    b.fdatasync(writer, wal);
    let footer = Footer {
        lost: LostCounts {
            ring_full: 3,
            unmatched_exit: 1,
            ..LostCounts::default()
        },
        uncovered: vec![("mmap".into(), 2)],
        ..Footer::default()
    };
    b.finish_with(footer)
}

#[test]
fn totals_count_records_bytes_rates_and_what_was_lost() {
    let s = TraceStats::of(&small());
    let t = &s.totals;
    assert_eq!(t.records, 22);
    assert_eq!(t.ops["read"], 11);
    assert_eq!(t.ops["write"], 10);
    assert_eq!(t.ops["fdatasync"], 1);
    assert_eq!((t.bytes_read, t.bytes_written), (11 * 8192, 10 * 4096));
    assert!((t.duration_s - 0.022).abs() < 1e-9, "{}", t.duration_s);
    assert!((t.ops_per_s - 1000.0).abs() < 1e-6, "{}", t.ops_per_s);
    assert!((t.syncs_per_s - 1.0 / 0.022).abs() < 1e-6);
    assert_eq!((t.lost, t.uncovered, s.lost.ring_full), (4, 2, 3));
    assert_eq!(s.uncovered[0].call, "mmap");
    assert_eq!(s.capture_id, "ab".repeat(16));
    assert_eq!((t.trace_bytes, t.bytes_per_record), (None, None));
    let sized = s.with_file_size(220);
    assert_eq!(sized.totals.trace_bytes, Some(220));
    assert_eq!(sized.totals.bytes_per_record, Some(10.0));
}

#[test]
fn files_have_their_class_working_set_sequential_share_and_flags() {
    let s = TraceStats::of(&small());
    let (table, wal) = (&s.files[0], &s.files[1]);
    assert_eq!(table.path, "data/base/1/16384");
    assert_eq!(table.class, FileClass::Data);
    // i × 37 mod 16 for i < 10 hits 10 distinct blocks; the last read is block 0 again.
    assert_eq!(table.working_set_bytes, 10 * 8192);
    assert_eq!(table.flags, vec!["O_DIRECT"]);
    assert_eq!((table.reads, table.writes), (11, 0));
    assert_eq!(wal.class, FileClass::Log);
    assert_eq!(wal.seq_share, Some(1.0));
    assert_eq!(
        wal.working_set_bytes,
        5 * 8192,
        "ten 4 KiB appends fill five blocks"
    );
    assert_eq!(
        (wal.syncs, wal.flags.clone()),
        (1, vec!["O_DSYNC".to_string()])
    );
    assert_eq!(s.working_set.read_bytes, 10 * 8192);
    assert_eq!(s.working_set.written_bytes, 5 * 8192);
    assert_eq!(s.working_set.bytes, 15 * 8192);
}

#[test]
fn threads_have_their_mix_sizes_rates_and_syncs() {
    let s = TraceStats::of(&small());
    let (backend, writer) = (&s.threads[0], &s.threads[1]);
    assert_eq!((backend.comm.as_str(), backend.tid), ("postgres", 100));
    assert_eq!(backend.modal_size, Some(8192));
    assert_eq!(writer.ops["write"], 10);
    assert_eq!(writer.seq_share, Some(1.0));
    assert_eq!(writer.syncs_per_write, Some(0.1));
    assert_eq!(backend.syncs_per_write, None);
    assert_eq!(backend.active_s, 1);
    assert_eq!(backend.ops_per_active_s, 11.0);
    assert!((writer.io_per_s - 10.0 / 0.022).abs() < 1e-6);
    assert_eq!(backend.async_share, 0.0);
}

#[test]
fn percentiles_and_mode_of_sizes() {
    let mut b = Build::new();
    let f = b.file("f", 1 << 30, 0);
    let t = b.thread(1, "db");
    for i in 0..100u64 {
        let len = if i < 60 {
            8192
        } else if i < 99 {
            65536
        } else {
            1 << 20
        };
        b.read(t, f, i << 20, len);
    }
    let s = TraceStats::of(&b.finish());
    let th = &s.threads[0];
    assert_eq!(
        (th.modal_size, th.p50_size, th.p99_size),
        (Some(8192), Some(8192), Some(65536))
    );
    let reads = &s.sizes[0];
    assert_eq!(reads.op, "read");
    let counts: Vec<(u64, u64)> = reads.buckets.iter().map(|b| (b.from, b.count)).collect();
    assert_eq!(counts, vec![(8192, 60), (65536, 39), (1 << 20, 1)]);
    assert_eq!(s.offsets[0].buckets[0], Bucket { from: 0, count: 1 });
    assert!(s.sizes[1].buckets.is_empty(), "no writes");
}

#[test]
fn seconds_count_ops_bytes_and_threads_inside_a_call() {
    let mut b = Build::new();
    let f = b.file("f", 1 << 20, 0);
    let (t1, t2) = (b.thread(1, "a"), b.thread(2, "b"));
    b.step_ns = 0;
    b.dur_ns = 500_000_000;
    b.read(t1, f, 0, 4096);
    b.read(t2, f, 8192, 4096);
    // An asynchronous write in flight from 1.5 s for one second.
    b.clock_ns = 1_500_000_000;
    let w = Record {
        op: Some(OpCode::Write),
        is_async: true,
        handle: Some(f),
        len: 4096,
        result: 4096,
        dur_ns: 1_000_000_000,
        ..Record::default()
    };
    b.call(t1, w);
    b.clock_ns = 3_000_000_000;
    let s = TraceStats::of(&b.finish());
    assert_eq!(s.seconds.len(), 3);
    assert_eq!((s.seconds[0].ops, s.seconds[0].bytes), (2, 8192));
    assert!((s.seconds[0].in_call - 1.0).abs() < 1e-9);
    assert!((s.seconds[1].in_flight - 0.5).abs() < 1e-9);
    assert!((s.seconds[2].in_flight - 0.5).abs() < 1e-9);
    assert_eq!(s.seconds[2].ops, 0);
    let t = &s.threads[0];
    assert_eq!(t.async_share, 0.5);
    assert_eq!(t.mean_in_flight, Some(1.0));
}

#[test]
fn a_trace_without_calls_has_empty_figures() {
    let s = TraceStats::of(&Build::new().finish());
    assert_eq!(s.totals.records, 0);
    assert_eq!(s.totals.ops_per_s, 0.0);
    assert!(s.seconds.is_empty() && s.files.is_empty() && s.threads.is_empty());
}

#[test]
fn flag_names_tell_o_sync_from_o_dsync() {
    assert_eq!(flag_names(O_SYNC | O_DIRECT), vec!["O_DIRECT", "O_SYNC"]);
    assert_eq!(flag_names(O_DSYNC), vec!["O_DSYNC"]);
    assert!(
        flag_names(0o2 | 0o100).is_empty(),
        "O_RDWR|O_CREAT are not shown"
    );
}

#[test]
fn utc_text_of_known_instants() {
    assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
    assert_eq!(utc_text(951_782_400), "2000-02-29 00:00:00 UTC");
    assert_eq!(utc_text(1_795_000_000), "2026-11-18 11:06:40 UTC");
}

#[test]
fn a_damaged_length_touches_at_most_two_gib() {
    assert_eq!(blocks(8192, 8192), 1..=1);
    assert_eq!(blocks(0, 0), 0..=0);
    assert_eq!(blocks(0, u64::MAX).count(), 262_144);
    assert_eq!(blocks(u64::MAX - 1, u64::MAX).count(), 1);
}
