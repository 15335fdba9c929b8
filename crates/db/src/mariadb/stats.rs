//! What InnoDB and the server counted, for the run record: redo written (and synced, where the
//! version counts it), the
//! doublewrite buffer, data-file writes, reads and syncs, buffer-pool hits and misses, commits
//! and rollbacks, all from `SHOW GLOBAL STATUS`. A snapshot before and after a run; their
//! difference is the run's. A variable another MariaDB version lacks reads as `None`, not as an
//! error. `Com_commit` counts `COMMIT` statements: sysbench and TPC-C commit explicitly, so it
//! is their transactions (an autocommit statement counts only in `Handler_commit`).

use super::client::MyConn;
use crate::backend::DbError;
use bakeoff_core::dbrecord::{DbCounters, InnodbCounters};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// InnoDB's counters at one instant (or, from [`InnodbStats::since`], over a run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InnodbStats {
    /// Redo log bytes written (`Innodb_os_log_written`).
    pub os_log_written: Option<u64>,
    /// Redo log syncs (`Innodb_os_log_fsyncs`; 10.11 does not count them: `None`).
    pub os_log_fsyncs: Option<u64>,
    /// Pages written through the doublewrite buffer (`Innodb_dblwr_pages_written`).
    pub dblwr_pages_written: Option<u64>,
    /// Doublewrite batches written (`Innodb_dblwr_writes`).
    pub dblwr_writes: Option<u64>,
    /// Syncs of data files (`Innodb_data_fsyncs`).
    pub data_fsyncs: Option<u64>,
    /// Bytes InnoDB wrote, redo and doublewrite included (`Innodb_data_written`).
    pub data_written: Option<u64>,
    /// Bytes InnoDB read (`Innodb_data_read`).
    pub data_read: Option<u64>,
    /// Pages written (`Innodb_pages_written`).
    pub pages_written: Option<u64>,
    /// Pages read (`Innodb_pages_read`).
    pub pages_read: Option<u64>,
    /// Logical page reads (`Innodb_buffer_pool_read_requests`).
    pub buffer_pool_read_requests: Option<u64>,
    /// Reads that missed the buffer pool and went to the file (`Innodb_buffer_pool_reads`).
    pub buffer_pool_reads: Option<u64>,
    /// Dirty pages now (`Innodb_buffer_pool_pages_dirty`): a gauge, the later one in a
    /// difference.
    pub buffer_pool_pages_dirty: Option<u64>,
    /// Redo bytes since the last checkpoint now (`Innodb_checkpoint_age`): a gauge.
    pub checkpoint_age: Option<u64>,
    /// `COMMIT` statements (`Com_commit`).
    pub com_commit: Option<u64>,
    /// `ROLLBACK` statements (`Com_rollback`).
    pub com_rollback: Option<u64>,
    /// Commits inside the server, autocommit statements' included (`Handler_commit`).
    pub handler_commit: Option<u64>,
}

impl InnodbStats {
    /// The counters now, read over `conn` (`SHOW GLOBAL STATUS`).
    pub fn read(conn: &mut MyConn) -> Result<InnodbStats, DbError> {
        Ok(InnodbStats::from_status(&conn.show("SHOW GLOBAL STATUS")?))
    }

    /// The counters in `SHOW GLOBAL STATUS`'s name-to-value map.
    pub fn from_status(status: &BTreeMap<String, String>) -> InnodbStats {
        let n = |name: &str| status.get(name).and_then(|v| v.trim().parse().ok());
        InnodbStats {
            os_log_written: n("Innodb_os_log_written"),
            os_log_fsyncs: n("Innodb_os_log_fsyncs"),
            dblwr_pages_written: n("Innodb_dblwr_pages_written"),
            dblwr_writes: n("Innodb_dblwr_writes"),
            data_fsyncs: n("Innodb_data_fsyncs"),
            data_written: n("Innodb_data_written"),
            data_read: n("Innodb_data_read"),
            pages_written: n("Innodb_pages_written"),
            pages_read: n("Innodb_pages_read"),
            buffer_pool_read_requests: n("Innodb_buffer_pool_read_requests"),
            buffer_pool_reads: n("Innodb_buffer_pool_reads"),
            buffer_pool_pages_dirty: n("Innodb_buffer_pool_pages_dirty"),
            checkpoint_age: n("Innodb_checkpoint_age"),
            com_commit: n("Com_commit"),
            com_rollback: n("Com_rollback"),
            handler_commit: n("Handler_commit"),
        }
    }

    /// What happened between `earlier` and this snapshot: counters subtracted (never below
    /// zero: a restart between them resets them), gauges this snapshot's.
    pub fn since(&self, earlier: &InnodbStats) -> InnodbStats {
        let d = |now: Option<u64>, then: Option<u64>| Some(now?.saturating_sub(then.unwrap_or(0)));
        InnodbStats {
            os_log_written: d(self.os_log_written, earlier.os_log_written),
            os_log_fsyncs: d(self.os_log_fsyncs, earlier.os_log_fsyncs),
            dblwr_pages_written: d(self.dblwr_pages_written, earlier.dblwr_pages_written),
            dblwr_writes: d(self.dblwr_writes, earlier.dblwr_writes),
            data_fsyncs: d(self.data_fsyncs, earlier.data_fsyncs),
            data_written: d(self.data_written, earlier.data_written),
            data_read: d(self.data_read, earlier.data_read),
            pages_written: d(self.pages_written, earlier.pages_written),
            pages_read: d(self.pages_read, earlier.pages_read),
            buffer_pool_read_requests: d(
                self.buffer_pool_read_requests,
                earlier.buffer_pool_read_requests,
            ),
            buffer_pool_reads: d(self.buffer_pool_reads, earlier.buffer_pool_reads),
            buffer_pool_pages_dirty: self.buffer_pool_pages_dirty,
            checkpoint_age: self.checkpoint_age,
            com_commit: d(self.com_commit, earlier.com_commit),
            com_rollback: d(self.com_rollback, earlier.com_rollback),
            handler_commit: d(self.handler_commit, earlier.handler_commit),
        }
    }

    /// A reading (or a run's difference) as the run record's database counters: the redo log is the WAL,
    /// buffer-pool reads that hit are read requests less misses, commits are `COMMIT`s.
    pub fn counters(&self) -> DbCounters {
        let hits = self
            .buffer_pool_read_requests
            .zip(self.buffer_pool_reads)
            .map(|(requests, misses)| requests.saturating_sub(misses));
        DbCounters {
            cache_hits: hits,
            cache_misses: self.buffer_pool_reads,
            wal_bytes: self.os_log_written,
            wal_fpi: None,
            checkpoints: None,
            checkpoint_buffers: None,
            commits: self.com_commit,
            rollbacks: self.com_rollback,
            engine_cpu_us: None,
            // Its redo log's syncs are `innodb.log_fsyncs`.
            wal_syncs: None,
            innodb: Some(InnodbCounters {
                dblwr_pages: self.dblwr_pages_written,
                dblwr_writes: self.dblwr_writes,
                pages_written: self.pages_written,
                pages_read: self.pages_read,
                data_fsyncs: self.data_fsyncs,
                log_fsyncs: self.os_log_fsyncs,
                checkpoint_age: self.checkpoint_age,
                dirty_pages: self.buffer_pool_pages_dirty,
                dirty_pages_at_start: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_difference_subtracts_counters_and_keeps_the_later_gauges() {
        let before = InnodbStats::from_status(&status(&[
            ("Innodb_os_log_written", "1000"),
            ("Com_commit", "10"),
            ("Innodb_buffer_pool_read_requests", "100"),
            ("Innodb_buffer_pool_reads", "10"),
            ("Innodb_checkpoint_age", "500"),
            ("Innodb_buffer_pool_pages_dirty", "7"),
        ]));
        let after = InnodbStats::from_status(&status(&[
            ("Innodb_os_log_written", "5000"),
            ("Com_commit", "110"),
            ("Innodb_buffer_pool_read_requests", "400"),
            ("Innodb_buffer_pool_reads", "10"),
            ("Innodb_checkpoint_age", "200"),
            ("Innodb_buffer_pool_pages_dirty", "3"),
            ("Innodb_dblwr_pages_written", "64"),
        ]));
        let run = after.since(&before);
        assert_eq!(run.os_log_written, Some(4000));
        assert_eq!(run.com_commit, Some(100));
        assert_eq!(
            (run.checkpoint_age, run.buffer_pool_pages_dirty),
            (Some(200), Some(3))
        );
        assert_eq!(
            run.dblwr_pages_written,
            Some(64),
            "missing before counts from 0"
        );
        assert_eq!(run.os_log_fsyncs, None, "missing now stays missing");
        let counters = run.counters();
        assert_eq!(counters.wal_bytes, Some(4000));
        assert_eq!(
            (counters.cache_hits, counters.cache_misses),
            (Some(300), Some(0))
        );
        assert_eq!((counters.commits, counters.rollbacks), (Some(100), None));
        // A restart between snapshots gives zeros, not wrapped numbers.
        assert_eq!(before.since(&after).os_log_written, Some(0));
        let odd = InnodbStats::from_status(&status(&[("Com_commit", "lots")]));
        assert_eq!(
            odd.com_commit, None,
            "a value that is not a number is not a count"
        );
    }
}
