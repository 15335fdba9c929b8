//! The real sysbench against a managed MariaDB server: `prepare` fills its tables, a timed run
//! reports the TPS it printed, every transaction is in its latency histogram, and InnoDB counted
//! the commits and the redo the run wrote (root, MariaDB and sysbench; in CI for real).

mod my_common;
use bakeoff_db::sysbench::{RunOptions, Sysbench};
use bakeoff_testkit::shared;
use my_common::*;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[test]
fn sysbench_reports_the_tps_it_printed_and_every_transaction_in_the_histogram() {
    if !privileged()
        || !bakeoff_testkit::require(
            std::path::Path::new("/usr/bin/sysbench").exists(),
            "sysbench",
        )
    {
        return;
    }
    let _turn = shared();
    let (_images, stack, server) = tmpfs_server(512, 2);
    let sysbench = Sysbench::for_server(&server);
    assert!(sysbench.version().unwrap().starts_with("sysbench 1."));
    let opts = RunOptions {
        tables: 2,
        table_size: 5000,
        threads: 2,
        runtime: Duration::from_secs(4),
        ..RunOptions::default()
    };
    let never = AtomicBool::new(false);
    let prepared = sysbench.prepare_until(&opts, &never).unwrap().unwrap();
    assert_eq!(prepared.rows, 10_000);
    let before = server.stats().unwrap();
    let report = sysbench.run_until(&opts, &never).unwrap().unwrap();
    let counted = server.stats().unwrap().since(&before);
    let s = report.summary;
    assert!(s.transactions > 100, "{s:?}");
    assert!((s.total_time_s - 4.0).abs() < 0.5, "{s:?}");
    let rate = s.transactions as f64 / s.total_time_s;
    assert!(
        (rate - s.tps).abs() / s.tps < 0.01,
        "{rate} vs the printed {}",
        s.tps
    );
    // oltp_read_write: 14 reads, 4 writes and BEGIN/COMMIT per transaction; a deadlock
    // sysbench ignores adds its ROLLBACK.
    assert_eq!(s.queries, s.reads + s.writes + s.other);
    let others = 2 * s.transactions..=2 * (s.transactions + s.ignored_errors);
    assert!(others.contains(&s.other), "{s:?}");
    let stats = report.op_stats();
    assert_eq!(stats.ops, s.transactions);
    let hist = report.histogram.to_histogram();
    assert_eq!(
        hist.len(),
        s.transactions,
        "every transaction is in the histogram"
    );
    let lat = stats.lat.unwrap();
    assert!(lat.max_ns as f64 >= s.lat_avg_ms * 1e6, "{lat:?} vs {s:?}");
    assert!(
        (3..=5).contains(&report.intervals.len()),
        "{:?}",
        report.intervals
    );
    // Every interval line is read with its threads; a second may pass with no transaction
    // when the other lanes' tests keep both CPUs busy, but not all of them.
    assert!(
        report.intervals.iter().all(|i| i.threads == 2)
            && report.intervals.iter().any(|i| i.tps > 0.0),
        "{:?}",
        report.intervals
    );
    let commits = counted.com_commit.unwrap();
    assert!(
        commits >= s.transactions,
        "InnoDB's {commits} COMMITs for {s:?}"
    );
    assert!(
        counted.os_log_written.unwrap() > 1000 * s.transactions / 10,
        "{counted:?}"
    );
    let bad = RunOptions {
        test: "oltp_everything".into(),
        ..opts
    };
    let err = sysbench.run_until(&bad, &never).unwrap_err().to_string();
    assert!(err.contains("oltp_read_write, oltp_read_only"), "{err}");
    stack.destroy().unwrap();
}
