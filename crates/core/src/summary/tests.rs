//! Tests of `summary`.

use super::*;
use crate::record::{Latency, Percentile};

fn op(kind: OpKind, ops: u64, bytes: u64, p99_ns: u64) -> OpStats {
    let lat = Latency {
        mean_ns: 1.0,
        min_ns: 1,
        max_ns: p99_ns,
        percentiles: vec![
            Percentile {
                p: 50.0,
                lat_ns: p99_ns / 2,
            },
            Percentile {
                p: 99.0,
                lat_ns: p99_ns,
            },
        ],
        stdev_ns: None,
        histogram: None,
    };
    OpStats {
        kind,
        ops,
        bytes,
        iops: 0.0,
        mb_s: 0.0,
        lat: Some(lat),
        service: None,
    }
}

fn device(read_ops: u64, read_bytes: u64) -> DeviceStats {
    DeviceStats {
        name: "loop0".into(),
        role: "stack".into(),
        model: None,
        loop_backing: None,
        loop_dio: None,
        read_ops,
        read_bytes,
        write_ops: 0,
        write_bytes: 0,
        flush_ops: None,
        read_iops: 0.0,
        write_iops: 0.0,
        avg_read_size_bytes: None,
        avg_write_size_bytes: None,
        avg_read_wait_us: None,
        avg_write_wait_us: None,
        util_pct: 0.0,
        avg_queue_depth: None,
    }
}

fn record(ops: Vec<OpStats>, devices: Vec<DeviceStats>) -> RunRecord {
    let mut r = crate::record::fixture::minimal();
    r.ops = ops;
    r.devices = devices;
    r.measured_ns = 10_000_000_000;
    r
}

#[test]
fn amplification_and_reads_not_from_device_follow_device_bytes() {
    let reads = vec![op(OpKind::Read, 1000, 8192 * 1000, 200_000)];
    // 128 KiB device read per 8 KiB application read: amplification 16, all from the device.
    let s = Summary::compute(&record(reads.clone(), vec![device(1000, 131072 * 1000)]));
    assert_eq!(s.read_iops, Some(100.0));
    assert_eq!(s.read_amplification, Some(16.0));
    assert_eq!(s.device_read_bytes_per_op, Some(131072.0));
    assert_eq!(s.reads_not_from_device_pct, Some(0.0));
    assert_eq!(s.read_lat_p99_us, Some(200.0));
    assert_eq!(s.write_iops, None, "no writes: null, not 0");
    // A quarter of the bytes reached the device: 75 % came from elsewhere.
    let s = Summary::compute(&record(reads.clone(), vec![device(250, 8192 * 250)]));
    assert_eq!(s.reads_not_from_device_pct, Some(75.0));
    // No devices (tmpfs): device figures are null.
    let s = Summary::compute(&record(reads, vec![]));
    assert_eq!(s.read_amplification, None);
    assert_eq!(s.reads_not_from_device_pct, None);
}

#[test]
fn page_cache_hits_are_pages_spanned_less_pages_added() {
    let with_counts = |ops, direct, added| {
        let mut r = record(ops, vec![]);
        r.memory = Some(crate::record::MemoryStats {
            page_cache_added_pages: Some(added),
            ..Default::default()
        });
        let set = crate::settings::Settings::parse_set(&format!("direct={direct}")).unwrap();
        let randread = crate::workload::builtin("randread").unwrap();
        r.plan = randread.plan(&set).unwrap();
        Summary::compute(&r)
    };
    // 1000 reads of 8 KiB span 2000 pages; 500 added: 75 % hits.
    let reads = || vec![op(OpKind::Read, 1000, 8192 * 1000, 200_000)];
    let s = with_counts(reads(), false, 500);
    assert_eq!(s.page_cache_hit_pct, Some(75.0));
    // Readahead added more than the reads spanned: no hit, not a negative share.
    assert_eq!(
        with_counts(reads(), false, 5000).page_cache_hit_pct,
        Some(0.0)
    );
    // 512-byte reads each span one page.
    let small = vec![op(OpKind::Read, 1000, 512 * 1000, 200_000)];
    assert_eq!(
        with_counts(small, false, 100).page_cache_hit_pct,
        Some(90.0)
    );
    // Direct I/O looks nothing up; no counts (tmpfs, no tracefs): null, not 100 or 0.
    assert_eq!(with_counts(reads(), true, 0).page_cache_hit_pct, None);
    assert_eq!(
        Summary::compute(&record(reads(), vec![])).page_cache_hit_pct,
        None
    );
}

#[test]
fn commits_count_apart_from_writes() {
    let ops = vec![
        op(OpKind::Write, 500, 8192 * 500, 100_000),
        op(OpKind::LogWrite, 100, 512 * 100, 300_000),
        op(OpKind::Commit, 400, 512 * 400, 900_000),
    ];
    let s = Summary::compute(&record(ops, vec![]));
    assert_eq!(s.write_iops, Some(60.0), "data and log writes, not commits");
    assert_eq!(s.commits_per_s, Some(40.0));
    assert_eq!(s.commit_lat_p99_us, Some(900.0));
    assert_eq!(s.write_lat_p99_us, Some(100.0), "data writes first");
}

#[test]
fn a_mirror_writes_each_copy() {
    let writes = vec![op(OpKind::Write, 1000, 8192 * 1000, 100_000)];
    let mut dev = device(0, 0);
    (dev.write_ops, dev.write_bytes) = (2000, 2 * 8192 * 1000 * 3 / 2);
    let mut r = record(writes, vec![dev]);
    r.stack = Some(crate::record::StackInfo {
        redundancy: Some(2.0),
        ..Default::default()
    });
    let s = Summary::compute(&r);
    assert_eq!(s.write_amplification, Some(3.0));
    assert_eq!(s.write_amplification_per_copy, Some(1.5));
}

#[test]
fn file_operations_count_as_operations() {
    let ops = vec![
        op(OpKind::Create, 100, 0, 50_000),
        op(OpKind::Read, 50, 8192 * 50, 90_000),
    ];
    let mut r = record(ops, vec![]);
    r.cpu = Some(crate::record::CpuStats {
        cpus: 2,
        busy_pct: 1.0,
        user_pct: 0.0,
        system_pct: 0.0,
        iowait_pct: 0.0,
        irq_pct: 0.0,
        softirq_pct: 0.0,
        steal_pct: 0.0,
        busy_us: 1500.0,
        split: Some(crate::record::CpuSplit {
            tool_us: 1500.0,
            ..Default::default()
        }),
    });
    let s = Summary::compute(&r);
    assert_eq!(s.file_ops_per_s, Some(15.0), "creates and reads, over 10 s");
    assert_eq!(s.cpu_us_per_op, Some(10.0), "1500 µs over 150 operations");
    let s = Summary::compute(&record(vec![op(OpKind::Read, 5, 5, 5)], vec![]));
    assert_eq!(s.file_ops_per_s, None, "no file operations: null");
}

#[test]
fn device_mb_s_is_the_window_average_and_the_peak_its_busiest_measured_second() {
    let reads = vec![op(OpKind::Read, 1000, 8192 * 1000, 100_000)];
    let mut r = record(reads, vec![device(1000, 50_000_000)]);
    let sample = |measured, mb: f64| crate::record::Sample {
        t_s: 1.0,
        measured,
        read_iops: 0.0,
        write_iops: 0.0,
        read_mb_s: 0.0,
        write_mb_s: 0.0,
        cpu_busy_pct: None,
        device_read_iops: None,
        device_write_iops: None,
        device_read_mb_s: Some(mb),
        device_write_mb_s: None,
        dirty_bytes: None,
        cached_bytes: None,
        lat: Vec::new(),
    };
    // The warm-up's 99 MB/s second is not the window's.
    r.samples = vec![sample(false, 99.0), sample(true, 3.0), sample(true, 7.5)];
    let s = Summary::compute(&r);
    assert_eq!(s.device_read_mb_s, Some(5.0), "50 MB over 10 s");
    assert_eq!(s.device_read_mb_s_peak, Some(7.5));
    assert_eq!(s.device_write_mb_s_peak, None, "no samples of it: null");
    assert_eq!(s.log_device_write_mb_s, None, "no log stack");
}

#[test]
fn an_older_summary_gains_new_figures_and_keeps_its_own() {
    let mut old = Summary {
        read_iops: Some(1.0),
        ..Summary::default()
    };
    let fresh = Summary {
        read_iops: Some(2.0),
        device_read_mb_s_peak: Some(7.5),
        ..Summary::default()
    };
    old.fill_missing(&fresh);
    assert_eq!(old.read_iops, Some(1.0), "as written");
    assert_eq!(old.device_read_mb_s_peak, Some(7.5), "added");
}

#[test]
fn version_1_records_read_cache_hit_pct() {
    let s: Summary = serde_json::from_str(r#"{"cache_hit_pct": 12.5}"#).unwrap();
    assert_eq!(s.reads_not_from_device_pct, Some(12.5));
}

#[test]
fn skipped_delivery_districts_are_a_share_of_the_districts_the_deliveries_visited() {
    let ops = vec![
        op(OpKind::NewOrder, 900, 0, 1000),
        op(OpKind::Delivery, 40, 0, 1000),
    ];
    let mut r = record(ops, vec![]);
    r.database = Some(crate::record::database::DatabaseRun {
        delivery_skipped_districts: 6,
        ..Default::default()
    });
    // 40 Deliveries visit 400 districts; 6 skipped.
    let s = Summary::compute(&r);
    assert_eq!(s.delivery_skipped_pct, Some(1.5));
    r.ops.truncate(1);
    assert_eq!(
        Summary::compute(&r).delivery_skipped_pct,
        None,
        "no Delivery"
    );
}
