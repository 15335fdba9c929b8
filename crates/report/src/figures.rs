//! The one table of headline figures every comparison exporter uses: key (a [`Summary`]
//! field), label with its unit, how figures compare, and how many decimals to show.

use bakeoff_core::record::Summary;
use bakeoff_core::verdict::Better;

mod layout;
pub use layout::{
    group_of, DB_DEFAULT_COLUMNS, DEFAULT_COLUMNS, GROUPS, REPLAY_DEFAULT_COLUMNS, RISK_COLUMNS,
};

/// How a figure is compared with the baseline's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// A result or a cost: a ratio and, beyond the noise and the minimum effect, a verdict.
    Verdict(Better),
    /// A diagnostic (machine busy %, cache shares, device request sizes): more is neither
    /// better nor worse, so a ratio (or difference) without a verdict.
    Diagnostic,
}

/// A headline figure that can be a column.
pub struct Figure {
    /// Key: the `Summary` field.
    pub key: &'static str,
    /// Column heading, with its unit.
    pub label: &'static str,
    /// How it compares.
    pub compare: Compare,
    /// Reads it from a summary.
    pub get: fn(&Summary) -> Option<f64>,
    /// Decimals to show.
    pub decimals: usize,
    /// At or below this, a value is "structurally zero" (a cached run's read amplification, a
    /// percentage share): such figures are compared by difference, never by ratio.
    pub floor: f64,
    /// A percentage: compared by difference in percentage points.
    pub percent: bool,
    /// A time in microseconds (a latency, CPU per operation): shown in the one duration
    /// grammar (`2.26 ms`, `310 µs`, `fmt::micros`), so its label carries no unit.
    pub micros: bool,
}

const fn fig(
    key: &'static str,
    label: &'static str,
    compare: Compare,
    get: fn(&Summary) -> Option<f64>,
    decimals: usize,
    floor: f64,
) -> Figure {
    Figure {
        key,
        label,
        compare,
        get,
        decimals,
        floor,
        percent: false,
        micros: false,
    }
}

/// A time in microseconds, lower is better.
const fn us(key: &'static str, label: &'static str, get: fn(&Summary) -> Option<f64>) -> Figure {
    Figure {
        key,
        label,
        compare: Compare::Verdict(Better::Lower),
        get,
        decimals: 1,
        floor: 0.0,
        percent: false,
        micros: true,
    }
}

const fn pct(key: &'static str, label: &'static str, get: fn(&Summary) -> Option<f64>) -> Figure {
    Figure {
        key,
        label,
        compare: Compare::Diagnostic,
        get,
        decimals: 1,
        floor: 0.0,
        percent: true,
        micros: false,
    }
}

use Better::{Higher, Lower};
use Compare::{Diagnostic, Verdict};

/// Every figure, in the order `--columns` lists them.
pub const FIGURES: &[Figure] = &[
    fig(
        "read_iops",
        "read IOPS",
        Verdict(Higher),
        |s| s.read_iops,
        0,
        0.5,
    ),
    fig(
        "write_iops",
        "write IOPS",
        Verdict(Higher),
        |s| s.write_iops,
        0,
        0.5,
    ),
    fig(
        "commits_per_s",
        "commits/s",
        Verdict(Higher),
        |s| s.commits_per_s,
        0,
        0.5,
    ),
    fig(
        "read_mb_s",
        "read MB/s",
        Verdict(Higher),
        |s| s.read_mb_s,
        1,
        0.001,
    ),
    fig(
        "write_mb_s",
        "write MB/s",
        Verdict(Higher),
        |s| s.write_mb_s,
        1,
        0.001,
    ),
    us("read_lat_p50_us", "read p50", |s| s.read_lat_p50_us),
    us("read_lat_p99_us", "read p99", |s| s.read_lat_p99_us),
    us("write_lat_p99_us", "write p99", |s| s.write_lat_p99_us),
    us("commit_lat_p50_us", "commit p50", |s| s.commit_lat_p50_us),
    us("commit_lat_p99_us", "commit p99", |s| s.commit_lat_p99_us),
    pct("cpu_busy_pct", "machine CPU %", |s| s.cpu_busy_pct),
    us("cpu_us_per_op", "CPU/op", |s| s.cpu_us_per_op),
    pct("cpu_other_pct", "other CPU %", |s| s.cpu_other_pct),
    pct("cpu_steal_pct", "steal %", |s| s.cpu_steal_pct),
    fig(
        "device_read_iops",
        "dev read IOPS",
        Diagnostic,
        |s| s.device_read_iops,
        0,
        0.5,
    ),
    fig(
        "device_write_iops",
        "dev write IOPS",
        Diagnostic,
        |s| s.device_write_iops,
        0,
        0.5,
    ),
    fig(
        "device_read_mb_s",
        "dev read MB/s",
        Diagnostic,
        |s| s.device_read_mb_s,
        1,
        0.05,
    ),
    fig(
        "device_write_mb_s",
        "dev write MB/s",
        Diagnostic,
        |s| s.device_write_mb_s,
        1,
        0.05,
    ),
    fig(
        "device_read_mb_s_peak",
        "dev read MB/s peak",
        Diagnostic,
        |s| s.device_read_mb_s_peak,
        1,
        0.05,
    ),
    fig(
        "device_write_mb_s_peak",
        "dev write MB/s peak",
        Diagnostic,
        |s| s.device_write_mb_s_peak,
        1,
        0.05,
    ),
    fig(
        "log_device_write_mb_s",
        "log dev write MB/s",
        Diagnostic,
        |s| s.log_device_write_mb_s,
        1,
        0.05,
    ),
    fig(
        "device_read_bytes_per_op",
        "dev B/read",
        Verdict(Lower),
        |s| s.device_read_bytes_per_op,
        0,
        1.0,
    ),
    fig(
        "device_write_bytes_per_op",
        "dev B/write",
        Verdict(Lower),
        |s| s.device_write_bytes_per_op,
        0,
        1.0,
    ),
    fig(
        "read_amplification",
        "read amp",
        Verdict(Lower),
        |s| s.read_amplification,
        2,
        0.01,
    ),
    fig(
        "write_amplification",
        "write amp",
        Verdict(Lower),
        |s| s.write_amplification,
        2,
        0.01,
    ),
    fig(
        "write_amplification_per_copy",
        "write amp/copy",
        Verdict(Lower),
        |s| s.write_amplification_per_copy,
        2,
        0.01,
    ),
    fig(
        "log_write_amplification",
        "log write amp",
        Verdict(Lower),
        |s| s.log_write_amplification,
        2,
        0.01,
    ),
    fig(
        "device_reads_per_op",
        "dev reads/read",
        Verdict(Lower),
        |s| s.device_reads_per_op,
        2,
        0.01,
    ),
    fig(
        "device_writes_per_op",
        "dev writes/write",
        Verdict(Lower),
        |s| s.device_writes_per_op,
        2,
        0.01,
    ),
    fig(
        "avg_device_read_size_bytes",
        "avg dev read B",
        Diagnostic,
        |s| s.avg_device_read_size_bytes,
        0,
        1.0,
    ),
    fig(
        "avg_device_write_size_bytes",
        "avg dev write B",
        Diagnostic,
        |s| s.avg_device_write_size_bytes,
        0,
        1.0,
    ),
    pct(
        "reads_not_from_device_pct",
        "reads not from device %",
        |s| s.reads_not_from_device_pct,
    ),
    pct("arc_hit_pct", "ARC hit %", |s| s.arc_hit_pct),
    pct("page_cache_hit_pct", "page-cache hit %", |s| {
        s.page_cache_hit_pct
    }),
    fig(
        "replay_s",
        "replay s",
        Verdict(Lower),
        |s| s.replay_s,
        2,
        0.0,
    ),
    fig("tps", "txn/s", Verdict(Higher), |s| s.tps, 0, 0.0),
    fig("tpm", "txn/min", Verdict(Higher), |s| s.tpm, 0, 0.0),
    fig("nopm", "NOPM", Verdict(Higher), |s| s.nopm, 0, 0.0),
    us("txn_lat_p50_us", "txn p50", |s| s.txn_lat_p50_us),
    us("txn_lat_p99_us", "txn p99", |s| s.txn_lat_p99_us),
    us("cpu_us_per_txn", "CPU/txn", |s| s.cpu_us_per_txn),
    us("client_cpu_us_per_txn", "client CPU/txn", |s| {
        s.client_cpu_us_per_txn
    }),
    us("server_cpu_us_per_txn", "db CPU/txn", |s| {
        s.server_cpu_us_per_txn
    }),
    pct("client_cpu_share_pct", "client CPU share %", |s| {
        s.client_cpu_share_pct
    }),
    fig(
        "device_read_bytes_per_txn",
        "dev B read/txn",
        Verdict(Lower),
        |s| s.device_read_bytes_per_txn,
        0,
        1.0,
    ),
    fig(
        "device_write_bytes_per_txn",
        "dev B written/txn",
        Verdict(Lower),
        |s| s.device_write_bytes_per_txn,
        0,
        1.0,
    ),
    fig(
        "log_device_write_bytes_per_txn",
        "log dev B/txn",
        Verdict(Lower),
        |s| s.log_device_write_bytes_per_txn,
        0,
        1.0,
    ),
    fig(
        "device_flushes_per_txn",
        "flushes/txn",
        Verdict(Lower),
        |s| s.device_flushes_per_txn,
        2,
        0.01,
    ),
    fig(
        "wal_bytes_per_txn",
        "WAL B/txn",
        Verdict(Lower),
        |s| s.wal_bytes_per_txn,
        0,
        1.0,
    ),
    fig(
        "wal_syncs_per_txn",
        "WAL syncs/txn",
        Verdict(Lower),
        |s| s.wal_syncs_per_txn,
        3,
        0.001,
    ),
    fig(
        "innodb_dblwr_pages_per_txn",
        "InnoDB doublewrite pages/txn",
        Verdict(Lower),
        |s| s.innodb_dblwr_pages_per_txn,
        2,
        0.01,
    ),
    fig(
        "innodb_pages_written_per_txn",
        "InnoDB pages written/txn",
        Verdict(Lower),
        |s| s.innodb_pages_written_per_txn,
        2,
        0.01,
    ),
    fig(
        "innodb_data_fsyncs_per_txn",
        "InnoDB data fsyncs/txn",
        Verdict(Lower),
        |s| s.innodb_data_fsyncs_per_txn,
        2,
        0.01,
    ),
    pct("db_cache_hit_pct", "db cache hit %", |s| s.db_cache_hit_pct),
    fig(
        "checkpoints",
        "checkpoints",
        Diagnostic,
        |s| s.checkpoints,
        0,
        0.5,
    ),
    pct(
        "delivery_skipped_pct",
        "Delivery districts skipped %",
        |s| s.delivery_skipped_pct,
    ),
    // Risk (`--crash-states`, docs/durability.md): shown beside the costs, never a verdict
    // of their own (the comparison's caution says when a faster cell lost commits).
    fig(
        "crash_states",
        "crash states",
        Diagnostic,
        |s| s.crash_states,
        0,
        0.5,
    ),
    pct("crash_lost_pct", "states losing acked commits %", |s| {
        s.crash_lost_pct
    }),
    pct("crash_damaged_pct", "states damaged %", |s| {
        s.crash_damaged_pct
    }),
    fig(
        "crash_worst_loss",
        "worst acked commits lost",
        Diagnostic,
        |s| s.crash_worst_loss,
        0,
        0.5,
    ),
];

/// Keys of earlier versions that still select their figure.
const ALIASES: &[(&str, &str)] = &[("cache_hit_pct", "reads_not_from_device_pct")];

/// Looks up a figure by key (or an earlier version's key).
pub fn figure(key: &str) -> Option<&'static Figure> {
    let key = ALIASES
        .iter()
        .find(|(old, _)| *old == key)
        .map_or(key, |(_, new)| new);
    FIGURES.iter().find(|f| f.key == key)
}

/// Every key, for error messages.
pub fn keys() -> Vec<&'static str> {
    FIGURES.iter().map(|f| f.key).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_summary_fields() {
        let mut keys = keys();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "duplicate figure key");
        let summary = serde_json::to_value(Summary::default()).unwrap();
        for k in keys {
            assert!(summary.get(k).is_some(), "{k} is not a Summary field");
        }
        assert_eq!(
            figure("cache_hit_pct").unwrap().key,
            "reads_not_from_device_pct"
        );
        assert!(DEFAULT_COLUMNS.iter().all(|k| figure(k).is_some()));
        assert!(DB_DEFAULT_COLUMNS.iter().all(|k| figure(k).is_some()));
        assert!(REPLAY_DEFAULT_COLUMNS.iter().all(|k| figure(k).is_some()));
        let grouped: Vec<&str> = GROUPS.iter().flat_map(|(_, k)| k.iter().copied()).collect();
        for f in FIGURES {
            let n = grouped.iter().filter(|k| **k == f.key).count();
            assert_eq!(n, 1, "{} is in {n} groups", f.key);
        }
        assert_eq!(grouped.len(), FIGURES.len());
    }
}
