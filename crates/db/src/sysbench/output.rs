//! What sysbench 1.0 prints, parsed: the per-second reports of `--report-interval=1`, the latency
//! histogram of `--histogram=on` and the closing statistics. The formats are those of sysbench's
//! `db_report_intermediate`, `sb_histogram_print` and `db_report_cumulative`; the unit tests
//! read a real 1.0.20 run's output (fixtures/sysbench-1.0.20-run.txt) and one under `--rate`
//! (fixtures/sysbench-1.0.20-rate.txt).
//!
//! Under `--rate`, sysbench prints a `queue length` line after each report (not a report) and its
//! histogram still counts every transaction. Whether its latency includes the time an event
//! waited in the rate queue is not settled: in the run captured the queue stayed empty (`queue
//! length: 0`).

use bakeoff_engine::histogram::LatencyCounts;

/// One per-second report: `[ 1s ] thds: 4 tps: 411.92 qps: 8252.34 (r/w/o: 5777.88/1648.68/
/// 825.78) lat (ms,99%): 12.98 err/s: 0.00 reconn/s: 0.00`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Interval {
    /// Seconds since the start, at the report's end.
    pub t_s: u32,
    /// Threads running.
    pub threads: u32,
    /// Transactions per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// Reads per second.
    pub reads: f64,
    /// Writes per second.
    pub writes: f64,
    /// Other queries (BEGIN, COMMIT) per second.
    pub other: f64,
    /// The latency percentile asked for (`--percentile`), ms.
    pub lat_pct_ms: f64,
    /// Ignored errors per second (deadlocks sysbench retried).
    pub err_s: f64,
    /// Reconnects per second.
    pub reconn_s: f64,
}

/// The statistics sysbench prints at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// `transactions:  N  (X per sec.)`: N.
    pub transactions: u64,
    /// X.
    pub tps: f64,
    /// `queries:  N  (X per sec.)`: N.
    pub queries: u64,
    /// X.
    pub qps: f64,
    /// `read:` queries.
    pub reads: u64,
    /// `write:` queries.
    pub writes: u64,
    /// `other:` queries.
    pub other: u64,
    /// `ignored errors:` (deadlocks and the like sysbench retried).
    pub ignored_errors: u64,
    /// `reconnects:`.
    pub reconnects: u64,
    /// `total time: 30.0025s`.
    pub total_time_s: f64,
    /// `Latency (ms):` `min:`.
    pub lat_min_ms: f64,
    /// `avg:`.
    pub lat_avg_ms: f64,
    /// `max:`.
    pub lat_max_ms: f64,
    /// `99th percentile:` (the percentile asked for).
    pub lat_pct_ms: f64,
}

/// A per-second report, or `None` for any other line (`[ 1s ] queue length: 0, concurrency:
/// 0`, printed under `--rate`, is not one).
pub fn parse_interval(line: &str) -> Option<Interval> {
    let rest = line.trim().strip_prefix('[')?;
    let (t, rest) = rest.split_once("s ]")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let after = |key: &str| -> Option<&str> {
        let at = words.iter().position(|w| *w == key)?;
        words.get(at + 1).copied()
    };
    let num = |key: &str| -> Option<f64> { after(key)?.parse().ok() };
    let rwo = after("(r/w/o:")?.trim_end_matches(')');
    let parts: Vec<f64> = rwo.split('/').filter_map(|p| p.parse().ok()).collect();
    let [reads, writes, other] = parts[..] else {
        return None;
    };
    let lat_at = words.iter().position(|w| w.starts_with("(ms,"))?;
    Some(Interval {
        t_s: t.trim().parse().ok()?,
        threads: after("thds:")?.parse().ok()?,
        tps: num("tps:")?,
        qps: num("qps:")?,
        reads,
        writes,
        other,
        lat_pct_ms: words.get(lat_at + 1)?.parse().ok()?,
        err_s: num("err/s:").unwrap_or(0.0),
        reconn_s: num("reconn/s:").unwrap_or(0.0),
    })
}

/// Every per-second report in `out`.
pub fn parse_intervals(out: &str) -> Vec<Interval> {
    out.lines().filter_map(parse_interval).collect()
}

/// The closing statistics; `None` without a `transactions:` line.
pub fn parse_summary(out: &str) -> Option<Summary> {
    let mut s = Summary::default();
    let mut transactions = None;
    let first = |rest: &str| -> Option<f64> {
        let w = rest.split_whitespace().next()?;
        w.trim_end_matches('s').parse().ok()
    };
    let per_sec = |rest: &str| -> Option<f64> {
        let (_, paren) = rest.split_once('(')?;
        paren.split_whitespace().next()?.parse().ok()
    };
    let count = |rest: &str| first(rest).map_or(0, |v| v as u64);
    for line in out.lines().map(str::trim) {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        match key {
            "transactions" => {
                transactions = first(rest).map(|v| v as u64);
                s.tps = per_sec(rest).unwrap_or(0.0);
            }
            "queries" => {
                s.queries = count(rest);
                s.qps = per_sec(rest).unwrap_or(0.0);
            }
            "read" => s.reads = count(rest),
            "write" => s.writes = count(rest),
            "other" => s.other = count(rest),
            "ignored errors" => s.ignored_errors = count(rest),
            "reconnects" => s.reconnects = count(rest),
            "total time" => s.total_time_s = first(rest).unwrap_or(0.0),
            "min" => s.lat_min_ms = first(rest).unwrap_or(0.0),
            "avg" => s.lat_avg_ms = first(rest).unwrap_or(0.0),
            "max" => s.lat_max_ms = first(rest).unwrap_or(0.0),
            k if k.ends_with(" percentile") => s.lat_pct_ms = first(rest).unwrap_or(0.0),
            _ => {}
        }
    }
    s.transactions = transactions?;
    Some(s)
}

/// The latency histogram (`Latency histogram (values are in milliseconds)`, then `value |***
/// count` lines), each count at its value; empty without one.
pub fn parse_histogram(out: &str) -> LatencyCounts {
    let mut counts = LatencyCounts::default();
    let mut lines = out.lines();
    if lines.by_ref().any(|l| l.starts_with("Latency histogram")) {
        for line in lines {
            let Some((value, bar)) = line.split_once('|') else {
                if line.trim().starts_with("value") {
                    continue; // the header
                }
                break;
            };
            let ms: Option<f64> = value.trim().parse().ok();
            let n: Option<u64> = bar.split_whitespace().last().and_then(|c| c.parse().ok());
            if let (Some(ms), Some(n)) = (ms, n) {
                let ns = (ms * 1e6).round() as u64;
                (0..n).for_each(|_| counts.record(ns));
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = include_str!("fixtures/sysbench-1.0.20-run.txt");
    const RATE: &str = include_str!("fixtures/sysbench-1.0.20-rate.txt");

    #[test]
    fn the_closing_statistics_are_read() {
        let s = parse_summary(RUN).unwrap();
        assert_eq!((s.transactions, s.tps), (3356, 838.13));
        assert_eq!((s.queries, s.qps), (67153, 16770.74));
        assert_eq!((s.reads, s.writes, s.other), (47012, 13427, 6714));
        assert_eq!((s.ignored_errors, s.reconnects), (2, 0));
        assert_eq!(s.total_time_s, 4.0039);
        assert_eq!(
            (s.lat_min_ms, s.lat_avg_ms, s.lat_max_ms),
            (0.81, 2.38, 19.65)
        );
        assert_eq!(s.lat_pct_ms, 7.98);
        assert_eq!(parse_summary("Threads started!\n"), None);
    }

    #[test]
    fn every_transaction_is_in_the_histogram_at_its_value() {
        let h = parse_histogram(RUN).to_histogram();
        assert_eq!(h.len(), 3356, "the counts add up to the transactions");
        let ms = |ns: u64| ns as f64 / 1e6;
        assert!((ms(h.min()) - 0.811).abs() < 0.001, "{}", h.min());
        assert!((ms(h.max()) - 19.645).abs() < 0.02, "{}", h.max());
        assert!((ms(h.mean() as u64) - 2.38).abs() < 0.1, "{}", h.mean());
        assert_eq!(
            parse_histogram(RATE).to_histogram().len(),
            569,
            "under --rate too"
        );
        assert!(parse_histogram("no histogram").is_empty());
    }

    #[test]
    fn the_per_second_reports_are_read_and_the_rate_queue_lines_are_not() {
        let run = parse_intervals(RUN);
        assert_eq!(run.iter().map(|i| i.t_s).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!((run[0].err_s, run[0].lat_pct_ms), (1.0, 5.77));
        let rate = parse_intervals(RATE);
        assert_eq!(rate.len(), 3, "the queue-length lines are not reports");
        assert_eq!((rate[1].tps, rate[1].threads), (199.06, 2));
        assert_eq!(parse_summary(RATE).unwrap().transactions, 569);
    }

    #[test]
    fn an_interval_line_is_read_and_other_lines_are_not() {
        let line = "[ 1s ] thds: 4 tps: 411.92 qps: 8252.34 (r/w/o: 5777.88/1648.68/825.78) \
                    lat (ms,99%): 12.98 err/s: 0.00 reconn/s: 0.00";
        let i = parse_interval(line).unwrap();
        assert_eq!((i.t_s, i.threads), (1, 4));
        assert_eq!((i.tps, i.qps), (411.92, 8252.34));
        assert_eq!((i.reads, i.writes, i.other), (5777.88, 1648.68, 825.78));
        assert_eq!((i.lat_pct_ms, i.err_s, i.reconn_s), (12.98, 0.0, 0.0));
        assert_eq!(
            parse_interval("[ 1s ] queue length: 0, concurrency: 0"),
            None
        );
        assert_eq!(parse_interval("Threads started!"), None);
        assert_eq!(
            parse_interval("[ 1s ] thds: 4 tps: x qps: 1 (r/w/o: 1/2)"),
            None
        );
    }
}
