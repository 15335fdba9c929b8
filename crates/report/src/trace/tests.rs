use super::*;
use bakeoff_core::trace::{
    FileEntry, FileKind, Footer, HandleEntry, Header, LostCounts, OpCode, PathEntry, Provenance,
    Record, RootInfo, ThreadEntry, Trace, TraceSink,
};

/// Two files and two threads: random 8 KiB reads of a table, 4 KiB log appends with a sync;
/// the capture lost 3 calls and saw 2 mmaps.
fn trace(lost: u64) -> Trace {
    let provenance = Provenance {
        schema_version: 1,
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
    let mut t = Trace::new(Header::new([0xab; 16]), provenance);
    for (path, flags) in [("base/1/16384", 0o40000), ("pg_wal/0001", 0)] {
        let p = t
            .path(PathEntry {
                root: 0,
                path: path.into(),
            })
            .unwrap();
        let size = Some(1 << 20);
        let f = (t.file(FileEntry {
            path: p,
            kind: FileKind::File,
            start_size: size,
            end_size: size,
        }))
        .unwrap();
        t.handle(HandleEntry {
            file: f,
            flags,
            implicit: true,
        })
        .unwrap();
    }
    let backend = t
        .thread(ThreadEntry {
            tid: 100,
            tgid: 100,
            comm: "postgres".into(),
        })
        .unwrap();
    let writer = t
        .thread(ThreadEntry {
            tid: 101,
            tgid: 100,
            comm: "walwriter".into(),
        })
        .unwrap();
    let io = |op, handle, offset, len, start_ns| Record {
        op: Some(op),
        handle: Some(handle),
        offset,
        len,
        result: len as i64,
        start_ns,
        dur_ns: 100_000,
        ..Record::default()
    };
    for i in 0..40u64 {
        let at = i * 50_000_000;
        t.op(
            backend,
            &io(OpCode::Read, 0, (i * 37 % 64) * 8192, 8192, at),
        )
        .unwrap();
        t.op(writer, &io(OpCode::Write, 1, i * 4096, 4096, at + 1))
            .unwrap();
        t.op(writer, &io(OpCode::Fdatasync, 1, 0, 0, at + 2))
            .unwrap();
    }
    let footer = Footer {
        ops: 120,
        duration_ns: 2_000_000_000,
        lost: LostCounts {
            ring_full: lost,
            ..LostCounts::default()
        },
        uncovered: vec![("mmap".into(), 2)],
        end_sizes: Vec::new(),
    };
    t.finish(footer).unwrap();
    t
}

#[test]
fn the_text_shows_provenance_losses_mix_files_threads_and_histograms() {
    let text = render(&TraceStats::of(&trace(3)).with_file_size(1200));
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
            .to_string()
    };
    assert_eq!(
        line("trace"),
        format!(
            "trace    {} (format 1.0), captured 2026-11-18 11:06:40 UTC for 2.00 s",
            "ab".repeat(16)
        )
    );
    assert_eq!(
        line("source"),
        "source   postgres tpcc on ext4, pid 4711, kernel 6.18.44"
    );
    assert_eq!(line("roots"), "roots    data /srv/pg (ext4, rw,relatime)");
    assert!(line("LOST").starts_with("LOST     3 calls not in the trace (ring buffer full 3)"));
    assert!(
        line("UNCOVERED").contains("2 calls on the traced files")
            && line("UNCOVERED").contains("mmap 2")
    );
    assert_eq!(
        line("calls"),
        "calls    120 (60.0/s), 20.0 syncs/s; read 320 KiB, written 160 KiB; trace 1.2 KiB (10.0 B/call)"
    );
    assert_eq!(
        line("mix"),
        "mix      fdatasync 33.3%, read 33.3%, write 33.3%"
    );
    let table = line("data/base/1/16384");
    for cell in ["data", "1 MiB", "320 KiB", "O_DIRECT"] {
        assert!(table.contains(cell), "{cell} in {table}");
    }
    assert!(line("data/pg_wal/0001").contains("log"));
    let writer = line("101 walwriter");
    assert!(writer.contains("4 KiB / 4 KiB / 4 KiB"), "{writer}");
    assert!(writer.contains("80") && writer.contains("1.00"), "{writer}");
    assert!(line("8 KiB").contains("100.0%"), "the size histogram");
    assert!(text.contains("\nread sizes\n") && text.contains("\nwrite offsets\n"));
    assert!(line("in call").contains("peak"));
}

#[test]
fn a_complete_trace_has_no_lost_line() {
    let text = render(&TraceStats::of(&trace(0)));
    assert!(!text.contains("LOST"), "{text}");
    assert!(text.contains("UNCOVERED"));
}

#[test]
fn the_json_has_its_schema_version_and_every_figure() {
    let json = render_json(&TraceStats::of(&trace(3)));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schema_version"], TRACE_SCHEMA_VERSION);
    assert_eq!(v["capture_id"], "ab".repeat(16));
    assert_eq!(v["totals"]["records"], 120);
    assert_eq!(v["totals"]["lost"], 3);
    assert_eq!(v["lost"]["ring_full"], 3);
    assert_eq!(v["files"][1]["class"], "log");
    assert_eq!(v["threads"][0]["comm"], "postgres");
    assert_eq!(v["sizes"][0]["buckets"][0]["from"], 8192);
    assert_eq!(v["seconds"].as_array().unwrap().len(), 2);
    assert_eq!(v["provenance"]["kernel"], "6.18.44");
}

#[test]
fn control_characters_from_the_trace_are_not_printed() {
    let mut t = trace(0);
    t.threads[0].comm = "evil\x1b[2J\nname".into();
    let text = render(&TraceStats::of(&t));
    assert!(!text.contains('\x1b'), "{text}");
    assert!(text.contains("evil?[2J?name"), "{text}");
}
