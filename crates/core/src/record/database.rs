//! What a database run adds to its run record: the database and its settings as read back,
//! the load phase, the database's own counters over the window, and the proof that the
//! transactions were real (consistency checks).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The database side of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatabaseRun {
    /// `postgres`, `sqlite` or `mariadb`.
    pub db: String,
    /// The server's or library's version (`PostgreSQL 15.8 ...`, `SQLite 3.46.0`).
    pub version: String,
    /// Settings in force, as the database reports them (PostgreSQL `SHOW ALL`, SQLite PRAGMAs).
    pub settings: BTreeMap<String, String>,
    /// Where its files are (data directory or database file, WAL directory).
    pub paths: BTreeMap<String, String>,
    /// The load before the measured run, if there was one.
    pub load: Option<LoadPhase>,
    /// The database's counters over the measured window.
    pub window: Option<DbCounters>,
    /// Consistency conditions checked after the run (TPC-C 3.3.2 conditions 1–4).
    #[serde(default)]
    pub consistency: Vec<Condition>,
    /// Transactions retried after a serialization failure, deadlock or busy database, by kind.
    #[serde(default)]
    pub retries: BTreeMap<String, u64>,
    /// New-Orders rolled back on purpose (TPC-C's 1 % with an unused item).
    #[serde(default)]
    pub rollbacks: u64,
    /// TPC-C: districts the window's Deliveries skipped (of 10 per Delivery) because none of
    /// their orders was undelivered or another terminal took the oldest first (clause 2.7.4.2
    /// asks for them to be reported).
    #[serde(default)]
    pub delivery_skipped_districts: u64,
    /// What pgbench itself printed, for runs of pgbench.
    #[serde(default)]
    pub pgbench: Option<PgbenchReport>,
    /// What sysbench itself printed, for runs of sysbench.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysbench: Option<SysbenchReport>,
}

/// The load phase: timed and measured like a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadPhase {
    /// Wall time of the load (population, indexes, keys, ANALYZE).
    pub seconds: f64,
    /// Rows loaded per table.
    pub rows: BTreeMap<String, u64>,
    /// All rows / seconds.
    pub rows_per_s: f64,
    /// Bytes the data stack's devices read during the load.
    pub device_read_bytes: Option<u64>,
    /// Bytes the data stack's devices wrote during the load.
    pub device_write_bytes: Option<u64>,
    /// Bytes the log stack's devices wrote during the load.
    pub log_device_write_bytes: Option<u64>,
    /// The database's size on disk after the load.
    pub size_bytes: Option<u64>,
}

/// The database's own counters over the measured window (deltas).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbCounters {
    /// Buffer-cache hits (PostgreSQL `blks_hit`, SQLite cache hits).
    pub cache_hits: Option<u64>,
    /// Buffer-cache misses (PostgreSQL `blks_read`, SQLite cache misses).
    pub cache_misses: Option<u64>,
    /// Write-ahead-log bytes (PostgreSQL `pg_stat_wal.wal_bytes`).
    pub wal_bytes: Option<u64>,
    /// Full-page images in the WAL.
    pub wal_fpi: Option<u64>,
    /// Checkpoints (timed + requested), the one that closes the window included.
    pub checkpoints: Option<u64>,
    /// Buffers the checkpoints wrote (PostgreSQL `buffers_checkpoint`, one block each: 8 KiB
    /// unless the server was built otherwise, `settings.block_size`).
    #[serde(default)]
    pub checkpoint_buffers: Option<u64>,
    /// Commits the database counted.
    pub commits: Option<u64>,
    /// Rollbacks the database counted.
    pub rollbacks: Option<u64>,
    /// CPU µs the client's threads spent inside an embedded database's calls (SQLite), by
    /// each thread's own CPU clock: the database's share of the client process.
    #[serde(default)]
    pub engine_cpu_us: Option<u64>,
    /// Syncs of the write-ahead log (PostgreSQL `pg_stat_wal.wal_sync`).
    #[serde(default)]
    pub wal_syncs: Option<u64>,
    /// InnoDB's own counters (MariaDB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub innodb: Option<InnodbCounters>,
}

/// What InnoDB counted besides the shared counters (its redo bytes are `wal_bytes`, its
/// buffer pool's hits and misses `cache_hits` and `cache_misses`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InnodbCounters {
    /// Pages written through the doublewrite buffer (`Innodb_dblwr_pages_written`).
    pub dblwr_pages: Option<u64>,
    /// Doublewrite batches (`Innodb_dblwr_writes`).
    pub dblwr_writes: Option<u64>,
    /// Data pages written (`Innodb_pages_written`).
    pub pages_written: Option<u64>,
    /// Data pages read (`Innodb_pages_read`).
    pub pages_read: Option<u64>,
    /// Syncs of data files (`Innodb_data_fsyncs`).
    pub data_fsyncs: Option<u64>,
    /// Syncs of the redo log (`Innodb_os_log_fsyncs`; MariaDB 10.11 does not count them).
    pub log_fsyncs: Option<u64>,
    /// Redo bytes not yet checkpointed (`Innodb_checkpoint_age`) at the reading: a gauge,
    /// the later reading's in a difference.
    pub checkpoint_age: Option<u64>,
    /// Dirty pages in the buffer pool (`Innodb_buffer_pool_pages_dirty`) at the reading: a
    /// gauge, the later reading's in a difference.
    #[serde(default)]
    pub dirty_pages: Option<u64>,
    /// In a difference, the earlier reading's dirty pages: a window that ends with more
    /// dirty pages than it began with left writes for after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_pages_at_start: Option<u64>,
}

/// `now − then` of a counter (never below zero: a restart in between resets it); `None` when
/// the later reading lacks it.
fn counted(now: Option<u64>, then: Option<u64>) -> Option<u64> {
    Some(now?.saturating_sub(then.unwrap_or(0)))
}

impl DbCounters {
    /// What happened between the reading `earlier` and this one, both cumulative.
    pub fn since(&self, earlier: &DbCounters) -> DbCounters {
        let innodb = match (&self.innodb, &earlier.innodb) {
            (Some(now), then) => Some(now.since(&then.clone().unwrap_or_default())),
            (None, _) => None,
        };
        DbCounters {
            cache_hits: counted(self.cache_hits, earlier.cache_hits),
            cache_misses: counted(self.cache_misses, earlier.cache_misses),
            wal_bytes: counted(self.wal_bytes, earlier.wal_bytes),
            wal_fpi: counted(self.wal_fpi, earlier.wal_fpi),
            checkpoints: counted(self.checkpoints, earlier.checkpoints),
            checkpoint_buffers: counted(self.checkpoint_buffers, earlier.checkpoint_buffers),
            commits: counted(self.commits, earlier.commits),
            rollbacks: counted(self.rollbacks, earlier.rollbacks),
            engine_cpu_us: counted(self.engine_cpu_us, earlier.engine_cpu_us),
            wal_syncs: counted(self.wal_syncs, earlier.wal_syncs),
            innodb,
        }
    }
}

impl DbCounters {
    /// Takes from the reading `after` (taken once a checkpoint has ended) what a checkpoint
    /// writes: checkpoints and their buffers; InnoDB's page writes, doublewrites and data
    /// syncs. A window that opens with a checkpoint, its devices first read after it, so
    /// leaves the checkpoint out of its counters as it is out of its devices.
    pub fn leave_out_checkpoint(&mut self, after: &DbCounters) {
        self.checkpoints = after.checkpoints;
        self.checkpoint_buffers = after.checkpoint_buffers;
        if let (Some(mine), Some(theirs)) = (self.innodb.as_mut(), after.innodb.as_ref()) {
            mine.pages_written = theirs.pages_written;
            mine.dblwr_pages = theirs.dblwr_pages;
            mine.dblwr_writes = theirs.dblwr_writes;
            mine.data_fsyncs = theirs.data_fsyncs;
        }
    }
}

impl InnodbCounters {
    /// What happened between `earlier` and this reading; the checkpoint age is this one's.
    pub fn since(&self, earlier: &InnodbCounters) -> InnodbCounters {
        InnodbCounters {
            dblwr_pages: counted(self.dblwr_pages, earlier.dblwr_pages),
            dblwr_writes: counted(self.dblwr_writes, earlier.dblwr_writes),
            pages_written: counted(self.pages_written, earlier.pages_written),
            pages_read: counted(self.pages_read, earlier.pages_read),
            data_fsyncs: counted(self.data_fsyncs, earlier.data_fsyncs),
            log_fsyncs: counted(self.log_fsyncs, earlier.log_fsyncs),
            checkpoint_age: self.checkpoint_age,
            dirty_pages: self.dirty_pages,
            dirty_pages_at_start: earlier.dirty_pages,
        }
    }
}

/// What sysbench printed in its closing statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SysbenchReport {
    /// `transactions: N (X per sec.)`: X.
    pub tps: f64,
    /// Transactions N.
    pub transactions: u64,
    /// Queries per second.
    pub qps: f64,
    /// Read, write and other queries.
    pub reads: u64,
    /// Write queries.
    pub writes: u64,
    /// Other queries (BEGIN, COMMIT).
    pub other: u64,
    /// Errors sysbench ignored and retried (deadlocks and the like).
    pub ignored_errors: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Its 99th-percentile latency, ms.
    pub lat_p99_ms: f64,
    /// TPS of each of its per-second reports.
    #[serde(default)]
    pub per_second_tps: Vec<f64>,
    /// sysbench's version.
    pub version: String,
}

/// One consistency condition and its outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// Which (`1: W_YTD = sum(D_YTD)`).
    pub name: String,
    /// Held everywhere.
    pub passed: bool,
    /// Where it did not hold, if anywhere.
    pub detail: Option<String>,
}

/// What pgbench printed beside its per-transaction log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PgbenchReport {
    /// `tps = ...` as pgbench printed it.
    pub tps: Option<f64>,
    /// Transactions skipped for `--latency-limit`.
    pub skipped: u64,
    /// Failed transactions.
    pub failed: u64,
    /// pgbench's version.
    pub version: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_subtracts_counters_keeps_the_later_gauge_and_leaves_missing_ones_out() {
        let reading = |wal, dblwr, age| DbCounters {
            wal_bytes: Some(wal),
            commits: Some(wal / 100),
            innodb: Some(InnodbCounters {
                dblwr_pages: dblwr,
                checkpoint_age: Some(age),
                ..InnodbCounters::default()
            }),
            ..DbCounters::default()
        };
        let window = reading(5000, Some(64), 10).since(&reading(1000, None, 900));
        assert_eq!((window.wal_bytes, window.commits), (Some(4000), Some(40)));
        assert_eq!(window.wal_fpi, None, "not counted by this database");
        let innodb = window.innodb.unwrap();
        assert_eq!(innodb.dblwr_pages, Some(64), "missing before counts from 0");
        assert_eq!(innodb.checkpoint_age, Some(10), "the later gauge");
        assert_eq!(innodb.pages_read, None);
        let restarted = reading(10, None, 0).since(&reading(1000, None, 0));
        assert_eq!(restarted.wal_bytes, Some(0), "a reset is 0, not a wrap");
    }
}
