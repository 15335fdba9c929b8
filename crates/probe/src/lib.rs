//! bakeoff's system probes: what the machine and the devices under the target did during a run.
//!
//! Split as in the `procfs` crates: pure parsers over text ([`parse_proc_stat`],
//! [`parse_block_stat`], [`parse_meminfo`], [`parse_arc_size`], [`parse_mountinfo`],
//! [`parse_cpu_model`]) and pure delta math ([`cpu_stats`], [`device_stats`]), unit-tested on
//! fixtures captured from real kernels; and a thin layer that reads `/proc` and `/sys`
//! ([`resolve_devices`], [`target_info`], [`environment`], [`Probe::snapshot`], and the tracefs
//! instances of [`PageCacheProbe`]). The only `unsafe`
//! is in the `sys` module (`sysconf`, `getrusage`, `uname`, and the `flock` and `mount` that
//! make tracefs available). The kernel-work tracer ([`kwork`]) is eBPF, loaded with libbpf-rs.
//!
//! The `procfs-core` crate was once declared for this and never used: it reads `/proc` but not
//! `/sys/block/*/stat` or ZFS's kstats, and the parsers here are few, small and tested on
//! captured fixtures, so they stay and the declaration went (issue 21, item 8).
#![warn(missing_docs)]

mod attribution;
mod btrfs;
pub mod capture;
mod clock;
mod delta;
mod devices;
mod env;
mod error;
pub mod kwork;
mod mounts;
mod page_cache;
pub mod parse;
mod quiet;
mod read;
mod snapshot;
mod split;
mod sys;
mod target_info;
mod tracefs;

pub use attribution::{backing_share, RunDevices};
pub use clock::monotonic_ns;
pub use delta::{counter_delta, cpu_stats, device_stats};
pub use devices::{resolve_devices, DeviceInfo, ROLE_BACKING, ROLE_LOG, ROLE_STACK};
pub use env::environment;
pub use error::ProbeError;
pub use page_cache::{remove_stale_instances, PageCacheCounters, PageCacheProbe};
pub use parse::{
    parse_arc_counters, parse_arc_size, parse_block_stat, parse_cpu_model, parse_meminfo,
    parse_mountinfo, parse_pid_stat, parse_proc_stat, parse_trace_events_written, ArcCounters,
    CpuTimes, DiskCounters, MemInfo, MountEntry, ProcStat,
};
pub use quiet::sample_quiet;
pub use read::processes;
pub use snapshot::{Probe, Snapshot};
pub use split::{cpu_split, family_cpu_us, SplitInputs};
pub use sys::{
    offer_self_to_oom_killer, rusage_children, rusage_self, ticks_per_second,
    WORKLOAD_OOM_SCORE_ADJ,
};
pub use target_info::{in_memory_filesystem, target_info};
pub use tracefs::TRACEFS;
