//! The run record: everything one run measured, as written to `--json`. Field names carry their
//! unit; a figure that does not apply is `None` (JSON `null`), never 0. See `docs/schema.md`.

use crate::plan::{OpKind, Plan};
use serde::{Deserialize, Serialize};

/// Version of the run-record format. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

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

/// Whole-machine CPU over the window, from `/proc/stat` (includes kernel threads and daemons).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuStats {
    /// Online CPUs.
    pub cpus: u32,
    /// Non-idle, non-iowait share of all CPU time.
    pub busy_pct: f64,
    /// User (including nice).
    pub user_pct: f64,
    /// System.
    pub system_pct: f64,
    /// Waiting for I/O (idle with I/O outstanding).
    pub iowait_pct: f64,
    /// Hard interrupts.
    pub irq_pct: f64,
    /// Soft interrupts.
    pub softirq_pct: f64,
    /// Stolen by the hypervisor.
    pub steal_pct: f64,
    /// Busy CPU time in the window, microseconds, all CPUs.
    pub busy_us: f64,
}

/// bakeoff's own resource use (getrusage): CPU over the measured window, peak memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolUsage {
    /// User CPU in the window (all of bakeoff's threads, including modelled application CPU).
    pub user_us: u64,
    /// System CPU in the window.
    pub system_us: u64,
    /// Peak resident set of the process.
    pub max_rss_bytes: u64,
    /// Tool CPU over the window as a share of all busy CPU, if known.
    pub share_of_busy_pct: Option<f64>,
}

/// Counters of one block device over the window (`/sys/block/<dev>/stat` deltas).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceStats {
    /// Kernel name, e.g. `loop3`, `vda`.
    pub name: String,
    /// `stack`: the device the target's file system sits on (counts for amplification);
    /// `backing`: the device under a loop device's backing file (shown for context).
    pub role: String,
    /// Model string, if the device reports one.
    pub model: Option<String>,
    /// For loop devices: backing file and whether loop direct I/O is on.
    pub loop_backing: Option<String>,
    /// Loop direct-I/O state.
    pub loop_dio: Option<bool>,
    /// Reads completed.
    pub read_ops: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Writes completed.
    pub write_ops: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Flush requests completed (kernel 5.5+), if the kernel reports them.
    pub flush_ops: Option<u64>,
    /// Reads per second.
    pub read_iops: f64,
    /// Writes per second.
    pub write_iops: f64,
    /// Average read request size.
    pub avg_read_size_bytes: Option<f64>,
    /// Average write request size.
    pub avg_write_size_bytes: Option<f64>,
    /// Average time a read spent queued and in service.
    pub avg_read_wait_us: Option<f64>,
    /// Average time a write spent queued and in service.
    pub avg_write_wait_us: Option<f64>,
    /// Share of the window the device had I/O in flight.
    pub util_pct: f64,
}

/// Memory and caches: start and end of the window, extremes sampled each second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryStats {
    /// Total memory.
    pub total_bytes: u64,
    /// Page cache at the start.
    pub cached_start_bytes: u64,
    /// Page cache at the end.
    pub cached_end_bytes: u64,
    /// Largest dirty amount seen.
    pub dirty_max_bytes: u64,
    /// Largest writeback amount seen.
    pub writeback_max_bytes: u64,
    /// Smallest available memory seen.
    pub available_min_bytes: u64,
    /// ZFS ARC size at the end, where a kstat exists.
    pub arc_size_bytes: Option<u64>,
}

/// Where the run happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The path given.
    pub path: String,
    /// `directory` or `block_device`.
    pub kind: String,
    /// File system type (from the mount table), for a directory.
    pub filesystem: Option<String>,
    /// Mount options.
    pub mount_options: Option<String>,
    /// Mount source (device), for a directory.
    pub mount_source: Option<String>,
}

/// The machine and tool.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// bakeoff version.
    pub tool_version: String,
    /// Git commit of the build, if known.
    pub git_hash: Option<String>,
    /// Kernel release.
    pub kernel: String,
    /// Host name.
    pub hostname: String,
    /// CPU model.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: u32,
    /// Memory.
    pub memory_bytes: u64,
    /// Clock source.
    pub clocksource: String,
    /// Measured cost of one clock read.
    pub timer_overhead_ns: f64,
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
}

/// One external command run while provisioning a stack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandRecord {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Exit code, or `None` if killed by a signal or not started.
    pub status: Option<i32>,
    /// Wall time.
    pub ms: u64,
    /// Standard error, trimmed to 2000 bytes.
    pub stderr: String,
}

/// A device a stack was built on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackingInfo {
    /// Device path (`/dev/loop3`, or the user's device).
    pub device: String,
    /// The sparse image behind a loop device.
    pub image: Option<String>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Loop direct-I/O state, for loop devices.
    pub loop_dio: Option<bool>,
    /// Byte offset of the loop device inside its image (a misaligned partition).
    pub offset_bytes: u64,
    /// Role: `data` or `log`.
    pub role: String,
    /// Signatures found on a user's device and wiped (`wipefs -a`) before building, with the
    /// user's confirmation (`--destroy-data-on`); empty for loop devices and blank devices.
    #[serde(default)]
    pub wiped_signatures: Vec<String>,
}

/// A daemon a stack owns (zfs-fuse; a database server): its CPU is the stack's daemons' CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonInfo {
    /// What it is (`zfs-fuse`, `postgres`).
    pub name: String,
    /// Process id.
    pub pid: i32,
    /// Executable, as `/proc/PID/exe` shows it.
    pub exe: String,
    /// Command line it was started with (program first).
    pub args: Vec<String>,
}

/// How a stack was built: enough to rebuild it and to know what was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackInfo {
    /// Name (`bakeoff stack destroy NAME`).
    pub name: String,
    /// The spec as given.
    pub spec: String,
    /// Kind (`ext4`, `zfs`, ...).
    pub kind: String,
    /// Implementation, e.g. `zfs-fuse 0.7.0` or `kernel`.
    pub backend: String,
    /// Where the workload runs: the mount point or the raw device.
    pub target: String,
    /// Devices it sits on.
    pub backing: Vec<BackingInfo>,
    /// Properties read back from the built stack (`recordsize`, `block_size`, mount options, ...).
    pub properties: std::collections::BTreeMap<String, String>,
    /// Versions of the tools used (mkfs, zfs).
    pub tool_versions: std::collections::BTreeMap<String, String>,
    /// Every command run, in order.
    pub commands: Vec<CommandRecord>,
    /// Whether the run started with cold caches (sync, drop caches, pool re-import).
    pub cold: Option<bool>,
    /// The memory limit the run had, if any.
    pub mem_limit_bytes: Option<u64>,
    /// Daemons the stack owns (zfs-fuse), with their pids.
    #[serde(default)]
    pub daemons: Vec<DaemonInfo>,
    /// Bytes the devices store per byte of data because of the layout's mirroring or parity,
    /// read back from the built stack (`zpool status`, `btrfs filesystem df`): 1 for a single
    /// device or a stripe, n for a mirror of n, 2 for RAID 1+0 and btrfs raid1/raid10/dup,
    /// n/(n-1) for raidz of n; `None` where unknown (tmpfs, an existing directory, mixed vdevs).
    #[serde(default)]
    pub redundancy: Option<f64>,
}

/// The full run record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Format version.
    pub schema_version: u32,
    /// How it ended.
    pub status: RunStatus,
    /// Why it failed, naming the operation, file and offset.
    pub error: Option<String>,
    /// Unix time the run started.
    pub started_unix_s: u64,
    /// Length of the measured window.
    pub measured_ns: u64,
    /// The resolved plan.
    pub plan: Plan,
    /// The target.
    pub target: TargetInfo,
    /// The stack bakeoff built for this run, if it built one.
    #[serde(default)]
    pub stack: Option<StackInfo>,
    /// True if the run started cold (sync, page cache dropped, ZFS pool re-imported); false if
    /// warm (`--warm`, or caches could not be dropped).
    #[serde(default)]
    pub cold: Option<bool>,
    /// Machine and tool.
    pub environment: Environment,
    /// Flat headline figures.
    pub summary: Summary,
    /// Per role.
    pub roles: Vec<RoleResult>,
    /// Whole-machine CPU.
    pub cpu: Option<CpuStats>,
    /// bakeoff's own CPU.
    pub tool: ToolUsage,
    /// Devices under the target.
    pub devices: Vec<DeviceStats>,
    /// Memory.
    pub memory: Option<MemoryStats>,
    /// Per-second samples.
    pub samples: Vec<Sample>,
}

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
    /// Median read latency across roles, µs.
    pub read_lat_p50_us: Option<f64>,
    /// 99th-percentile read latency, µs.
    pub read_lat_p99_us: Option<f64>,
    /// 99th-percentile write latency (data writes, else log writes), µs.
    pub write_lat_p99_us: Option<f64>,
    /// Whole-machine busy %.
    pub cpu_busy_pct: Option<f64>,
    /// Busy CPU µs per application read or write.
    pub cpu_us_per_op: Option<f64>,
    /// Stack devices: reads per second.
    pub device_read_iops: Option<f64>,
    /// Stack devices: writes per second.
    pub device_write_iops: Option<f64>,
    /// Stack device bytes read per application read.
    pub device_read_bytes_per_op: Option<f64>,
    /// Stack device bytes written per application write.
    pub device_write_bytes_per_op: Option<f64>,
    /// Stack device bytes read / application bytes read.
    pub read_amplification: Option<f64>,
    /// Stack device bytes written / application bytes written.
    pub write_amplification: Option<f64>,
    /// Average stack-device read request.
    pub avg_device_read_size_bytes: Option<f64>,
    /// Average stack-device write request.
    pub avg_device_write_size_bytes: Option<f64>,
    /// Share of application read bytes that did not reach the stack devices, %.
    pub cache_hit_pct: Option<f64>,
    /// Stack device read operations per application read.
    pub device_reads_per_op: Option<f64>,
    /// Stack device write operations per application write.
    pub device_writes_per_op: Option<f64>,
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| num / den)
}

impl Summary {
    /// Computes the headline figures from the per-role, CPU and device results.
    pub fn compute(
        roles: &[RoleResult],
        cpu: Option<&CpuStats>,
        devices: &[DeviceStats],
        secs: f64,
    ) -> Summary {
        let all = || roles.iter().flat_map(|r| r.ops.iter());
        let total = |pred: &dyn Fn(OpKind) -> bool| {
            all()
                .filter(|o| pred(o.kind))
                .fold((0u64, 0u64), |(n, b), o| (n + o.ops, b + o.bytes))
        };
        let (r_ops, r_bytes) = total(&|k| k == OpKind::Read);
        let (w_ops, w_bytes) = total(&|k| matches!(k, OpKind::Write | OpKind::LogWrite));
        let worst = |kind: OpKind, p: f64| {
            all()
                .filter(|o| o.kind == kind && o.ops > 0)
                .filter_map(|o| o.lat.as_ref()?.at(p))
                .max()
                .map(|ns| ns as f64 / 1e3)
        };
        let stack: Vec<&DeviceStats> = devices.iter().filter(|d| d.role == "stack").collect();
        let has_dev = !stack.is_empty();
        let dev = |f: &dyn Fn(&DeviceStats) -> u64| stack.iter().map(|d| f(d)).sum::<u64>() as f64;
        let (dr_ops, dr_bytes) = (dev(&|d| d.read_ops), dev(&|d| d.read_bytes));
        let (dw_ops, dw_bytes) = (dev(&|d| d.write_ops), dev(&|d| d.write_bytes));
        let per_sec = |n: u64| (secs > 0.0).then(|| n as f64 / secs);
        let some_if = |cond: bool, v: Option<f64>| if cond { v } else { None };
        let reads = r_ops > 0;
        let writes = w_ops > 0;
        Summary {
            read_iops: some_if(reads, per_sec(r_ops)),
            write_iops: some_if(writes, per_sec(w_ops)),
            read_mb_s: some_if(reads, per_sec(r_bytes).map(|b| b / 1e6)),
            write_mb_s: some_if(writes, per_sec(w_bytes).map(|b| b / 1e6)),
            read_lat_p50_us: worst(OpKind::Read, 50.0),
            read_lat_p99_us: worst(OpKind::Read, 99.0),
            write_lat_p99_us: worst(OpKind::Write, 99.0).or_else(|| worst(OpKind::LogWrite, 99.0)),
            cpu_busy_pct: cpu.map(|c| c.busy_pct),
            cpu_us_per_op: cpu.and_then(|c| ratio(c.busy_us, (r_ops + w_ops) as f64)),
            device_read_iops: some_if(has_dev, ratio(dr_ops, secs)),
            device_write_iops: some_if(has_dev, ratio(dw_ops, secs)),
            device_read_bytes_per_op: some_if(has_dev, ratio(dr_bytes, r_ops as f64)),
            device_write_bytes_per_op: some_if(has_dev, ratio(dw_bytes, w_ops as f64)),
            read_amplification: some_if(has_dev, ratio(dr_bytes, r_bytes as f64)),
            write_amplification: some_if(has_dev, ratio(dw_bytes, w_bytes as f64)),
            avg_device_read_size_bytes: some_if(has_dev, ratio(dr_bytes, dr_ops)),
            avg_device_write_size_bytes: some_if(has_dev, ratio(dw_bytes, dw_ops)),
            cache_hit_pct: some_if(has_dev, ratio(dr_bytes, r_bytes as f64))
                .map(|a| (100.0 * (1.0 - a)).clamp(0.0, 100.0)),
            device_reads_per_op: some_if(has_dev, ratio(dr_ops, r_ops as f64)),
            device_writes_per_op: some_if(has_dev, ratio(dw_ops, w_ops as f64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kind: OpKind, ops: u64, bytes: u64, p99_ns: u64) -> OpStats {
        let lat = Latency {
            mean_ns: 1.0,
            min_ns: 1,
            max_ns: p99_ns,
            percentiles: vec![
                Percentile {
                    p: 50.0,
                    lat_ns: p99_ns / 2,
                },
                Percentile {
                    p: 99.0,
                    lat_ns: p99_ns,
                },
            ],
        };
        OpStats {
            kind,
            ops,
            bytes,
            iops: 0.0,
            mb_s: 0.0,
            lat: Some(lat),
            service: None,
        }
    }

    fn device(read_ops: u64, read_bytes: u64) -> DeviceStats {
        DeviceStats {
            name: "loop0".into(),
            role: "stack".into(),
            model: None,
            loop_backing: None,
            loop_dio: None,
            read_ops,
            read_bytes,
            write_ops: 0,
            write_bytes: 0,
            flush_ops: None,
            read_iops: 0.0,
            write_iops: 0.0,
            avg_read_size_bytes: None,
            avg_write_size_bytes: None,
            avg_read_wait_us: None,
            avg_write_wait_us: None,
            util_pct: 0.0,
        }
    }

    #[test]
    fn amplification_and_cache_hits_follow_device_bytes() {
        let roles = vec![RoleResult {
            name: "r".into(),
            threads: 1,
            commits_per_write: None,
            ops: vec![op(OpKind::Read, 1000, 8192 * 1000, 200_000)],
        }];
        // 128 KiB device read per 8 KiB application read: amplification 16, no cache hits.
        let s = Summary::compute(&roles, None, &[device(1000, 131072 * 1000)], 10.0);
        assert_eq!(s.read_iops, Some(100.0));
        assert_eq!(s.read_amplification, Some(16.0));
        assert_eq!(s.device_read_bytes_per_op, Some(131072.0));
        assert_eq!(s.cache_hit_pct, Some(0.0));
        assert_eq!(s.read_lat_p99_us, Some(200.0));
        assert_eq!(s.write_iops, None, "no writes: null, not 0");
        // A quarter of the bytes reached the device: 75 % served by caches.
        let s = Summary::compute(&roles, None, &[device(250, 8192 * 250)], 10.0);
        assert_eq!(s.cache_hit_pct, Some(75.0));
        // No devices (tmpfs): device figures are null.
        let s = Summary::compute(&roles, None, &[], 10.0);
        assert_eq!(s.read_amplification, None);
        assert_eq!(s.cache_hit_pct, None);
    }
}
