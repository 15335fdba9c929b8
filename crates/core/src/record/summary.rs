//! The run record's headline figures, flat, for tables and comparisons; computed from the
//! rest of the record by `Summary::compute` (the `summary` module). `None` where a figure does
//! not apply (no writes, no devices), never 0.

use serde::{Deserialize, Serialize};

/// Headline figures, flat, for tables and comparisons. `None` where not applicable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Application reads per second (all roles).
    pub read_iops: Option<f64>,
    /// Application writes per second (data and log writes, all roles).
    pub write_iops: Option<f64>,
    /// Application read MB/s.
    pub read_mb_s: Option<f64>,
    /// Application write MB/s.
    pub write_mb_s: Option<f64>,
    /// Commits per second (transactions that waited for their redo to be durable).
    #[serde(default)]
    pub commits_per_s: Option<f64>,
    /// Median read latency over every read of every role, µs.
    pub read_lat_p50_us: Option<f64>,
    /// 99th-percentile read latency over every read, µs.
    pub read_lat_p99_us: Option<f64>,
    /// 99th-percentile write latency over every data write (else every log write), µs.
    pub write_lat_p99_us: Option<f64>,
    /// Median commit latency (redo handed over until durable), µs.
    #[serde(default)]
    pub commit_lat_p50_us: Option<f64>,
    /// 99th-percentile commit latency, µs.
    #[serde(default)]
    pub commit_lat_p99_us: Option<f64>,
    /// Whole-machine busy % (everything that ran, including other processes).
    pub cpu_busy_pct: Option<f64>,
    /// CPU µs the work cost per application read, write or file operation: bakeoff, the
    /// stack's daemons and kernel threads (see `CpuSplit`); other processes and steal excluded.
    pub cpu_us_per_op: Option<f64>,
    /// Operations per second of a run with file operations: every operation of every kind
    /// (creates, stats, whole-file reads, ... and the reads and writes of file steps).
    #[serde(default)]
    pub file_ops_per_s: Option<f64>,
    /// Share of all CPU time used by other processes, %.
    #[serde(default)]
    pub cpu_other_pct: Option<f64>,
    /// Share of all CPU time stolen by the hypervisor, %.
    #[serde(default)]
    pub cpu_steal_pct: Option<f64>,
    /// Stack devices: reads per second.
    pub device_read_iops: Option<f64>,
    /// Stack devices: writes per second.
    pub device_write_iops: Option<f64>,
    /// Stack devices: MB/s read over the window (10^6 bytes).
    #[serde(default)]
    pub device_read_mb_s: Option<f64>,
    /// Stack devices: MB/s written over the window.
    #[serde(default)]
    pub device_write_mb_s: Option<f64>,
    /// Stack devices: the highest one-second read MB/s of the window (its samples).
    #[serde(default)]
    pub device_read_mb_s_peak: Option<f64>,
    /// Stack devices: the highest one-second write MB/s of the window.
    #[serde(default)]
    pub device_write_mb_s_peak: Option<f64>,
    /// With a separate log stack: its devices' MB/s written over the window.
    #[serde(default)]
    pub log_device_write_mb_s: Option<f64>,
    /// Stack device bytes read per application read.
    pub device_read_bytes_per_op: Option<f64>,
    /// Stack device bytes written per application write.
    pub device_write_bytes_per_op: Option<f64>,
    /// Stack device bytes read / application bytes read.
    pub read_amplification: Option<f64>,
    /// Stack device bytes written / application bytes written (all members summed).
    pub write_amplification: Option<f64>,
    /// With a separate log stack: its device bytes written / application log bytes written.
    #[serde(default)]
    pub log_write_amplification: Option<f64>,
    /// With a separate log stack: its devices' writes per second.
    #[serde(default)]
    pub log_device_write_iops: Option<f64>,
    /// Bytes the layout stores per byte of data (a two-way mirror: 2), read back from the stack.
    #[serde(default)]
    pub redundancy: Option<f64>,
    /// Write amplification per copy: `write_amplification / redundancy`. What the stack writes
    /// beyond its mirroring or parity (journal, copy-on-write, metadata).
    #[serde(default)]
    pub write_amplification_per_copy: Option<f64>,
    /// Average stack-device read request.
    pub avg_device_read_size_bytes: Option<f64>,
    /// Average stack-device write request.
    pub avg_device_write_size_bytes: Option<f64>,
    /// Share of application read bytes that did not come from the stack devices, %: page-cache
    /// or ARC hits, less what readahead, read-modify-write and metadata reads added (it is
    /// `1 - read amplification`, clamped to 0–100). Version 1 records called it `cache_hit_pct`.
    #[serde(alias = "cache_hit_pct")]
    pub reads_not_from_device_pct: Option<f64>,
    /// ZFS ARC hit ratio over the window (hits / (hits + misses)), %, where kstats exist.
    #[serde(default)]
    pub arc_hit_pct: Option<f64>,
    /// Page-cache hit ratio of the application's buffered reads over the window, %:
    /// `1 - pages added to the file system's page cache / pages the reads spanned`, clamped to
    /// 0–100. Pages read ahead count as misses when added, so a cold sequential read is near 0.
    /// `None` without the kernel's counts (see `memory.page_cache_unavailable`: tmpfs, a block
    /// device, no tracefs) or where a role uses direct I/O.
    #[serde(default)]
    pub page_cache_hit_pct: Option<f64>,
    /// A replay (`run --replay`): how long the trace's calls took, s (with `timing=fast`, how
    /// long the same work takes on this stack).
    #[serde(default)]
    pub replay_s: Option<f64>,
    /// Database transactions per second (every kind).
    #[serde(default)]
    pub tps: Option<f64>,
    /// Database transactions per minute.
    #[serde(default)]
    pub tpm: Option<f64>,
    /// TPC-C New-Orders per minute.
    #[serde(default)]
    pub nopm: Option<f64>,
    /// Median latency of the headline transaction (TPC-C New-Order, else pgbench's), µs.
    #[serde(default)]
    pub txn_lat_p50_us: Option<f64>,
    /// 99th-percentile latency of the headline transaction, µs.
    #[serde(default)]
    pub txn_lat_p99_us: Option<f64>,
    /// The work's CPU µs per transaction (bakeoff as client, the server, the kernel).
    #[serde(default)]
    pub cpu_us_per_txn: Option<f64>,
    /// The client's CPU µs per transaction: bakeoff's terminals or pgbench (less SQLite's own
    /// work, which runs on the terminals' threads).
    #[serde(default)]
    pub client_cpu_us_per_txn: Option<f64>,
    /// The database's CPU µs per transaction: the server's processes, or the time the
    /// terminals' threads spent inside SQLite (measured per thread).
    #[serde(default)]
    pub server_cpu_us_per_txn: Option<f64>,
    /// The client's share of the machine's busy CPU time, %: it must stay small for the
    /// database, not the client, to be what is measured.
    #[serde(default)]
    pub client_cpu_share_pct: Option<f64>,
    /// Data-stack device bytes read per transaction.
    #[serde(default)]
    pub device_read_bytes_per_txn: Option<f64>,
    /// Data-stack device bytes written per transaction.
    #[serde(default)]
    pub device_write_bytes_per_txn: Option<f64>,
    /// Log-stack device bytes written per transaction.
    #[serde(default)]
    pub log_device_write_bytes_per_txn: Option<f64>,
    /// Device flushes (data and log stacks) per transaction.
    #[serde(default)]
    pub device_flushes_per_txn: Option<f64>,
    /// Write-ahead-log bytes per transaction (PostgreSQL).
    #[serde(default)]
    pub wal_bytes_per_txn: Option<f64>,
    /// Syncs of the write-ahead log per transaction (PostgreSQL): below 1 when group commit
    /// makes one sync for several transactions.
    #[serde(default)]
    pub wal_syncs_per_txn: Option<f64>,
    /// The database's buffer-cache hit ratio over the window, %.
    #[serde(default)]
    pub db_cache_hit_pct: Option<f64>,
    /// Checkpoints in the window.
    #[serde(default)]
    pub checkpoints: Option<f64>,
    /// InnoDB's data pages written per transaction (MariaDB).
    #[serde(default)]
    pub innodb_pages_written_per_txn: Option<f64>,
    /// InnoDB's data pages read per transaction.
    #[serde(default)]
    pub innodb_pages_read_per_txn: Option<f64>,
    /// Pages InnoDB wrote through its doublewrite buffer per transaction (each written twice).
    #[serde(default)]
    pub innodb_dblwr_pages_per_txn: Option<f64>,
    /// Doublewrite batches per transaction.
    #[serde(default)]
    pub innodb_dblwr_writes_per_txn: Option<f64>,
    /// Syncs of InnoDB's data files per transaction.
    #[serde(default)]
    pub innodb_data_fsyncs_per_txn: Option<f64>,
    /// Syncs of InnoDB's redo log per transaction (not counted by MariaDB 10.11).
    #[serde(default)]
    pub innodb_log_fsyncs_per_txn: Option<f64>,
    /// TPC-C: the share of the window's Delivery districts that were skipped (no undelivered
    /// order, or another terminal took the oldest first), %: skipped / (Deliveries × 10).
    #[serde(default)]
    pub delivery_skipped_pct: Option<f64>,
    /// Stack device read operations per application read.
    pub device_reads_per_op: Option<f64>,
    /// Stack device write operations per application write.
    pub device_writes_per_op: Option<f64>,
    /// `--crash-states`: crash states checked (docs/durability.md).
    #[serde(default)]
    pub crash_states: Option<f64>,
    /// Crash states that lost commits the client saw acknowledged, % of those checked.
    #[serde(default)]
    pub crash_lost_pct: Option<f64>,
    /// Crash states whose file system, database start or integrity checks failed, % of those
    /// checked.
    #[serde(default)]
    pub crash_damaged_pct: Option<f64>,
    /// The most acknowledged commits one crash state lost.
    #[serde(default)]
    pub crash_worst_loss: Option<f64>,
}
