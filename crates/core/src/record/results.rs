//! What a run measured of its operations, and how it ended: each operation kind's counts and
//! latency, per role and over all roles, per client process, and per second.

use crate::op::OpKind;
use serde::{Deserialize, Serialize};

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Ran for its whole duration.
    Completed,
    /// Stopped early by Ctrl-C or SIGTERM; the figures cover the time measured.
    Interrupted,
    /// An error stopped it; its figures are not results.
    Failed,
}

/// Latency distribution of one operation kind (from merged HdrHistograms, 3 significant digits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean_ns: f64,
    /// Smallest.
    pub min_ns: u64,
    /// Largest.
    pub max_ns: u64,
    /// Percentiles: p50, p90, p99, p99.9, p99.99.
    pub percentiles: Vec<Percentile>,
    /// Standard deviation (fio's `stddev`); null in records written before it was kept.
    #[serde(default)]
    pub stdev_ns: Option<f64>,
    /// The whole distribution (fio's `json+` buckets): the HdrHistogram, values in ns, in its
    /// V2 compressed encoding as base64, the form HdrHistogram's libraries decode
    /// (docs/schema.md shows how); absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

impl Latency {
    /// The value at percentile `p` (e.g. 99.0), if recorded.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles.iter().find(|x| x.p == p).map(|x| x.lat_ns)
    }
}

/// One percentile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// Percentile, 0–100.
    pub p: f64,
    /// Latency at that percentile.
    pub lat_ns: u64,
}

/// What one role did of one operation kind in the measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    /// Operation kind.
    pub kind: OpKind,
    /// Operations completed.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Operations per second.
    pub iops: f64,
    /// Megabytes (10^6) per second.
    pub mb_s: f64,
    /// Latency: from the scheduled start under `rate_iops` (open loop), else from submission.
    pub lat: Option<Latency>,
    /// Service time (submission to completion); only present under `rate_iops`.
    pub service: Option<Latency>,
}

/// One role's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleResult {
    /// Role name.
    pub name: String,
    /// Threads.
    pub threads: u32,
    /// Per operation kind, only kinds that occurred.
    pub ops: Vec<OpStats>,
    /// For a log writer: commits served per log write (group-commit batching), if any.
    pub commits_per_write: Option<f64>,
}

/// One per-second sample (also written as `--timeseries` CSV).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the run started (including ramp).
    pub t_s: f64,
    /// Whether this sample is inside the measured window.
    pub measured: bool,
    /// Application reads per second.
    pub read_iops: f64,
    /// Application writes (data + log) per second.
    pub write_iops: f64,
    /// Application read MB/s.
    pub read_mb_s: f64,
    /// Application write MB/s.
    pub write_mb_s: f64,
    /// Whole-machine busy %.
    pub cpu_busy_pct: Option<f64>,
    /// Stack devices: reads per second.
    pub device_read_iops: Option<f64>,
    /// Stack devices: writes per second.
    pub device_write_iops: Option<f64>,
    /// Stack devices: read MB/s.
    pub device_read_mb_s: Option<f64>,
    /// Stack devices: write MB/s.
    pub device_write_mb_s: Option<f64>,
    /// Dirty page cache.
    pub dirty_bytes: Option<u64>,
    /// Page cache.
    pub cached_bytes: Option<u64>,
    /// Latency per operation kind over this sample's interval (fio's `log_hist`); empty in
    /// older records and where the engine's operations are not what ran (a database, a command).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat: Vec<SampleLatency>,
}

/// One operation kind's latency over one sample's interval (2 significant digits: within 1 %).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleLatency {
    /// The operation kind.
    pub kind: OpKind,
    /// Operations of the kind that finished in the interval.
    pub ops: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// One client process of a `clients=N` run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientResult {
    /// Client number, from 0.
    pub index: u32,
    /// Its process id.
    pub pid: u32,
    /// The directory holding its files.
    pub dir: String,
    /// Its measured window.
    pub measured_ns: u64,
    /// Operations and bytes per kind in its window (kinds that occurred).
    pub ops: Vec<ClientOps>,
    /// User CPU it used in its window (getrusage in the client).
    pub cpu_user_us: u64,
    /// System CPU it used in its window.
    pub cpu_system_us: u64,
    /// Its peak resident set.
    pub max_rss_bytes: u64,
}

/// One client's count of one operation kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientOps {
    /// Operation kind.
    pub kind: OpKind,
    /// Operations completed in the client's window.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
}
