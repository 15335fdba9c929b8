//! What a database run adds to its run record: the database and its settings as read back,
//! the load phase, the database's own counters over the window, and the proof that the
//! transactions were real (consistency checks).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The database side of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatabaseRun {
    /// `postgres` or `sqlite`.
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
