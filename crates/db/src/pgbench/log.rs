//! pgbench's per-transaction log (`-l`), PostgreSQL 15: `client_id transaction_no time
//! script_no time_epoch time_us [schedule_lag] [retries]`, `time` in microseconds (from the
//! scheduled start under `-R`, so it includes the schedule lag), or `skipped` (too late under
//! `--latency-limit`) or `failed` (`serialization`, `deadlock` with `--failures-detailed`);
//! `time_epoch.time_us` is when the transaction ended (or was skipped). bakeoff never passes
//! `--max-tries`, so `retries` never appears.

use crate::postgres::PgError;
use bakeoff_engine::histogram::LatencyCounts;
use std::path::Path;

/// One line of a pgbench per-transaction log.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LogLine {
    /// A transaction that completed: its latency and when it ended.
    Done {
        /// Latency in µs (from the scheduled start under a rate).
        latency_us: u64,
        /// Schedule lag in µs, under a rate.
        lag_us: Option<u64>,
        /// When it ended, µs since the epoch.
        end_us: u64,
    },
    /// Skipped under `--latency-limit`.
    Skipped,
    /// Failed (serialization, deadlock).
    Failed,
}

/// Parses one log line (`with_lag`: the run had a rate, so a schedule lag follows the time);
/// `None` if it is not one.
pub fn parse_log_line(line: &str, with_lag: bool) -> Option<LogLine> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 6 {
        return None;
    }
    let number = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    number(0)?;
    number(1)?;
    let end_us = number(4)? * 1_000_000 + number(5)?;
    match f[2] {
        "skipped" => Some(LogLine::Skipped),
        "failed" | "serialization" | "deadlock" | "other" => Some(LogLine::Failed),
        t => Some(LogLine::Done {
            latency_us: t.parse().ok()?,
            lag_us: if with_lag { Some(number(6)?) } else { None },
            end_us,
        }),
    }
}

/// The transactions of a run's logs.
#[derive(Clone, Default)]
pub struct LogTally {
    /// Transactions completed.
    pub completed: u64,
    /// Skipped.
    pub skipped: u64,
    /// Failed.
    pub failed: u64,
    /// Latency of the completed ones.
    pub latency: LatencyCounts,
    /// Latency minus schedule lag (the service time), under a rate.
    pub service: Option<LatencyCounts>,
    /// The first transaction's start, µs since the epoch.
    pub first_start_us: u64,
    /// The last transaction's end.
    pub last_end_us: u64,
    /// Completions per second of the window, from its start.
    pub per_second: Vec<u64>,
}

impl std::fmt::Debug for LogTally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogTally")
            .field("completed", &self.completed)
            .field("skipped", &self.skipped)
            .field("failed", &self.failed)
            .field("first_start_us", &self.first_start_us)
            .field("last_end_us", &self.last_end_us)
            .field("per_second", &self.per_second)
            .finish_non_exhaustive()
    }
}

impl LogTally {
    /// Transactions per second from the first start to the last end.
    pub fn rate(&self) -> f64 {
        let span_us = self.last_end_us.saturating_sub(self.first_start_us);
        match span_us {
            0 => 0.0,
            _ => self.completed as f64 * 1e6 / span_us as f64,
        }
    }

    /// Tallies the log files of a run: `(name, text)` each (`with_lag`: the run had a rate).
    pub fn from_logs(logs: &[(String, String)], with_lag: bool) -> Result<LogTally, String> {
        let mut t = LogTally::default();
        let mut ends = Vec::new();
        let mut first_start = u64::MAX;
        for (name, text) in logs {
            for (n, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let parsed = parse_log_line(line, with_lag);
                match parsed.ok_or_else(|| format!("line {} of {name}: {line:?}", n + 1))? {
                    LogLine::Skipped => t.skipped += 1,
                    LogLine::Failed => t.failed += 1,
                    LogLine::Done {
                        latency_us,
                        lag_us,
                        end_us,
                    } => {
                        t.completed += 1;
                        t.latency.record(latency_us * 1000);
                        if let Some(lag) = lag_us {
                            let service = t.service.get_or_insert_with(LatencyCounts::default);
                            service.record(latency_us.saturating_sub(lag) * 1000);
                        }
                        first_start = first_start.min(end_us.saturating_sub(latency_us));
                        ends.push(end_us);
                    }
                }
            }
        }
        if let Some(&last) = ends.iter().max() {
            t.first_start_us = first_start;
            t.last_end_us = last;
            let seconds = (last - first_start) / 1_000_000 + 1;
            t.per_second = vec![0; seconds as usize];
            for end in ends {
                t.per_second[((end - first_start) / 1_000_000) as usize] += 1;
            }
        }
        Ok(t)
    }
}

/// Tallies every log file in `dir` (one per thread: `prefix.PID`, `prefix.PID.N`).
pub(super) fn tally_logs(dir: &Path, with_lag: bool) -> Result<LogTally, PgError> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(PgError::io("reading", dir))? {
        let path = entry.map_err(PgError::io("reading", dir))?.path();
        let text = std::fs::read_to_string(&path).map_err(PgError::io("reading", &path))?;
        logs.push((path.display().to_string(), text));
    }
    if logs.is_empty() {
        return Err(PgError::Environment(format!(
            "pgbench wrote no log in {}",
            dir.display()
        )));
    }
    LogTally::from_logs(&logs, with_lag)
        .map_err(|e| PgError::Environment(format!("not a pgbench log line: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from pgbench 15.18: two threads, the second with a rate and a latency limit.
    const PLAIN: &str = "0 1 2875 0 1795465709 115348\n0 2 709 0 1795465709 116080\n";
    const PLAIN_2: &str = "1 1 3150 0 1795465709 115662\n1 2 701 0 1795465710 116377\n";
    const RATED: &str = "0 1 2628 0 1795465714 422561 93\n0 2 skipped 0 1795465714 422582 0\n";

    #[test]
    fn log_lines_parse_with_and_without_a_schedule_lag() {
        let done = |latency_us, lag_us, end_us| LogLine::Done {
            latency_us,
            lag_us,
            end_us,
        };
        let first = PLAIN.lines().next().unwrap();
        assert_eq!(
            parse_log_line(first, false),
            Some(done(2875, None, 1_795_465_709_115_348))
        );
        let rated: Vec<_> = RATED.lines().map(|l| parse_log_line(l, true)).collect();
        assert_eq!(rated[0], Some(done(2628, Some(93), 1_795_465_714_422_561)));
        assert_eq!(rated[1], Some(LogLine::Skipped));
        assert_eq!(
            parse_log_line("3 9 failed 0 1795465714 1", false),
            Some(LogLine::Failed)
        );
        assert_eq!(parse_log_line("0 1 2628 0 1795465714", false), None);
        assert_eq!(
            parse_log_line("0 1 2628 0 1795465714 422561", true),
            None,
            "no lag"
        );
        assert_eq!(parse_log_line("client 1 2 0 1 1", false), None);
    }

    #[test]
    fn a_tally_counts_latencies_seconds_and_the_rate_over_its_window() {
        let logs = [
            ("a".to_string(), PLAIN.to_string()),
            ("b".into(), PLAIN_2.into()),
        ];
        let t = LogTally::from_logs(&logs, false).unwrap();
        assert_eq!((t.completed, t.skipped, t.failed), (4, 0, 0));
        let h = t.latency.to_histogram();
        assert_eq!(h.len(), 4);
        assert!(h.max() >= 3_150_000 && h.min() <= 701_000);
        // The window runs from the earliest start (115348 - 2875 µs) to the last end.
        assert_eq!(t.first_start_us, 1_795_465_709_112_473);
        assert_eq!(t.last_end_us, 1_795_465_710_116_377);
        assert_eq!(t.per_second, vec![3, 1]);
        assert!((t.rate() - 4.0 / 1.003904).abs() < 1e-9, "{}", t.rate());
        let rated = LogTally::from_logs(&[("r".to_string(), RATED.to_string())], true).unwrap();
        assert_eq!((rated.completed, rated.skipped), (1, 1));
        let service = rated.service.unwrap().to_histogram();
        assert_eq!(service.len(), 1);
        assert!(service.max() >= 2_535_000 && service.max() < 2_540_000);
        let err = LogTally::from_logs(&[("x".to_string(), "junk\n".to_string())], false);
        assert!(err.unwrap_err().contains("line 1 of x"));
        assert_eq!(LogTally::default().rate(), 0.0);
    }
}
