//! How comparisons lay the figures out: the default columns, and the groups a table with one
//! row per figure shows them in.

/// The default columns (the `slob` headline figures).
pub const DEFAULT_COLUMNS: &[&str] = &[
    "read_iops",
    "write_iops",
    "cpu_us_per_op",
    "read_lat_p99_us",
    "commit_lat_p99_us",
    "device_read_bytes_per_op",
    "read_amplification",
    "reads_not_from_device_pct",
];

/// The default columns of a comparison of database runs (tpcc, pgbench).
pub const DB_DEFAULT_COLUMNS: &[&str] = &[
    "tps",
    "nopm",
    "txn_lat_p99_us",
    "cpu_us_per_txn",
    "device_write_bytes_per_txn",
    "log_device_write_bytes_per_txn",
    "wal_bytes_per_txn",
    "device_flushes_per_txn",
];

/// The columns a comparison of runs with crash states adds (`--crash-states`): what each
/// configuration risks beside what it costs.
pub const RISK_COLUMNS: &[&str] = &[
    "crash_states",
    "crash_lost_pct",
    "crash_damaged_pct",
    "crash_worst_loss",
];

/// The default columns of a comparison of replays (`--replay`): the time the same calls took,
/// then what they cost.
pub const REPLAY_DEFAULT_COLUMNS: &[&str] = &[
    "replay_s",
    "cpu_us_per_op",
    "read_lat_p99_us",
    "write_lat_p99_us",
    "device_read_bytes_per_op",
    "device_write_bytes_per_op",
    "reads_not_from_device_pct",
];

/// The groups a comparison table shows its figures in, in order (when it has one row per
/// figure); every figure is in exactly one (a test).
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "throughput",
        &[
            "replay_s",
            "read_iops",
            "write_iops",
            "commits_per_s",
            "read_mb_s",
            "write_mb_s",
            "tps",
            "tpm",
            "nopm",
            "delivery_skipped_pct",
        ],
    ),
    (
        "latency",
        &[
            "read_lat_p50_us",
            "read_lat_p99_us",
            "write_lat_p99_us",
            "commit_lat_p50_us",
            "commit_lat_p99_us",
            "txn_lat_p50_us",
            "txn_lat_p99_us",
        ],
    ),
    (
        "CPU",
        &[
            "cpu_us_per_op",
            "cpu_us_per_txn",
            "client_cpu_us_per_txn",
            "server_cpu_us_per_txn",
            "client_cpu_share_pct",
            "cpu_busy_pct",
            "cpu_other_pct",
            "cpu_steal_pct",
        ],
    ),
    (
        "device",
        &[
            "device_read_iops",
            "device_write_iops",
            "device_read_mb_s",
            "device_write_mb_s",
            "device_read_mb_s_peak",
            "device_write_mb_s_peak",
            "log_device_write_mb_s",
            "device_read_bytes_per_op",
            "device_write_bytes_per_op",
            "read_amplification",
            "write_amplification",
            "write_amplification_per_copy",
            "log_write_amplification",
            "device_reads_per_op",
            "device_writes_per_op",
            "avg_device_read_size_bytes",
            "avg_device_write_size_bytes",
            "device_read_bytes_per_txn",
            "device_write_bytes_per_txn",
            "log_device_write_bytes_per_txn",
            "device_flushes_per_txn",
            "wal_bytes_per_txn",
            "wal_syncs_per_txn",
            "innodb_dblwr_pages_per_txn",
            "innodb_pages_written_per_txn",
            "innodb_data_fsyncs_per_txn",
        ],
    ),
    (
        "caches",
        &[
            "reads_not_from_device_pct",
            "arc_hit_pct",
            "page_cache_hit_pct",
            "db_cache_hit_pct",
            "checkpoints",
        ],
    ),
    ("risk", RISK_COLUMNS),
];

/// The index in [`GROUPS`] of the group of figure `key` (past the end for an unknown key).
pub fn group_of(key: &str) -> usize {
    GROUPS
        .iter()
        .position(|(_, keys)| keys.contains(&key))
        .unwrap_or(GROUPS.len())
}
