//! The run record's accounting of the machine over the window: CPU (and who used it), the
//! devices under the stack, and memory.

use serde::{Deserialize, Serialize};

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
    /// Who used the busy CPU, where the process table could be read.
    #[serde(default)]
    pub split: Option<CpuSplit>,
}

/// The window's busy CPU split by who used it (µs over all CPUs, and % of all CPU time).
///
/// `tool` is bakeoff and its child processes (clients); `daemons` the stack's daemons and their
/// descendants (zfs-fuse, a database server); `kernel` the kernel's work for the run (I/O
/// kernel threads naming the run's devices, and the run's share of interrupt time and of
/// threads naming none: docs/methodology.md); `steal` the hypervisor's share; `other` every
/// other process and the kernel's work for them. The first three are the work's cost
/// (`cpu_us_per_op`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSplit {
    /// bakeoff and its descendants.
    pub tool_us: f64,
    /// The stack's daemons and their descendants.
    pub daemons_us: f64,
    /// The kernel's work for the run: its devices' kernel threads, and its share of interrupts
    /// and of shared kernel threads.
    pub kernel_us: f64,
    /// Other processes, and the kernel's work for them.
    pub other_us: f64,
    /// Stolen by the hypervisor.
    pub steal_us: f64,
    /// `tool_us` as % of all CPU time in the window.
    pub tool_pct: f64,
    /// `daemons_us` as % of all CPU time.
    pub daemons_pct: f64,
    /// `kernel_us` as % of all CPU time.
    pub kernel_pct: f64,
    /// `other_us` as % of all CPU time.
    pub other_pct: f64,
    /// How `kernel_us` was found. `true`: traced (eBPF) — the run's devices' dedicated kernel
    /// threads, plus the pooled workers' work items and the interrupts that were for its devices
    /// and processes (its share of a shared backing disk's), the rest is `other`. `false`: by
    /// thread names only — every pooled worker and all interrupt time on the machine counted as
    /// the run's (an upper bound beside other I/O). Absent in records before 2026-11-26.
    #[serde(default)]
    pub kernel_traced: bool,
}

impl CpuSplit {
    /// CPU the work cost: bakeoff, the stack's daemons and the kernel's threads.
    pub fn work_us(&self) -> f64 {
        self.tool_us + self.daemons_us + self.kernel_us
    }
}

/// bakeoff's own resource use (getrusage): CPU over the measured window, peak memory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Average number of requests in flight over the window (the weighted time in queue,
    /// `/sys/block/<dev>/stat` field 11, over the window's length): iostat's `aqu-sz`.
    #[serde(default)]
    pub avg_queue_depth: Option<f64>,
}

/// Memory and caches: start and end of the window, extremes sampled each second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryStats {
    /// Total memory.
    pub total_bytes: u64,
    /// Page cache at the start.
    pub cached_start_bytes: u64,
    /// Page cache at the end.
    pub cached_end_bytes: u64,
    /// Largest dirty amount seen.
    pub dirty_max_bytes: u64,
    /// Dirty page cache at the start of the window.
    #[serde(default)]
    pub dirty_start_bytes: Option<u64>,
    /// Dirty page cache at the end of the window.
    #[serde(default)]
    pub dirty_end_bytes: Option<u64>,
    /// Largest writeback amount seen.
    pub writeback_max_bytes: u64,
    /// Smallest available memory seen.
    pub available_min_bytes: u64,
    /// ZFS ARC size at the end, where a kstat exists.
    pub arc_size_bytes: Option<u64>,
    /// ZFS ARC hits in the window, where a kstat exists.
    #[serde(default)]
    pub arc_hits: Option<u64>,
    /// ZFS ARC misses in the window, where a kstat exists.
    #[serde(default)]
    pub arc_misses: Option<u64>,
    /// Pages added to the page cache of the target's file system in the window (read from the
    /// device, read ahead, or created by buffered writes), where tracefs counted them.
    #[serde(default)]
    pub page_cache_added_pages: Option<u64>,
    /// Why the page cache was not counted (no tracefs, a block-device or in-memory target, not
    /// root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache_unavailable: Option<String>,
}
