//! Sampling: one reading of every counter, cheap enough to take every second.

use crate::delta::device_stats;
use crate::devices::DeviceInfo;
use crate::kwork::{KernelWindow, KernelWork, KernelWorkTotals};
use crate::page_cache::{PageCacheCounters, PageCacheProbe};
use crate::parse::{
    parse_arc_counters, parse_block_stat, parse_meminfo, parse_proc_stat, CpuTimes, DiskCounters,
    MemInfo,
};
use crate::read::{block_stat_path, read, ARCSTATS, PROC_MEMINFO, PROC_STAT};
use bakeoff_core::record::DeviceStats;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Every counter at one moment. A source that could not be read or parsed is `None`.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// When the snapshot was started.
    pub at: Instant,
    /// `/proc/stat`.
    pub cpu: Option<CpuTimes>,
    /// `/sys/block/<dev>/stat` of each of the probe's devices, in the same order.
    pub disks: Vec<Option<DiskCounters>>,
    /// `/proc/meminfo`.
    pub mem: Option<MemInfo>,
    /// ZFS ARC counters, where a kstat exists.
    pub arc: Option<crate::parse::ArcCounters>,
    /// Page-cache lookups and insertions of the target's file system, where counted.
    pub page_cache: Option<PageCacheCounters>,
    /// The kernel-work tracer's totals, where it runs ([`Probe::with_kernel_work`]), in an
    /// [`Probe::edge_snapshot`].
    pub kernel_work: Option<KernelWorkTotals>,
}

impl Snapshot {
    /// The kernel's traced work from `start` to this snapshot, where both were traced.
    pub fn kernel_work_since(&self, start: &Snapshot) -> Option<KernelWindow> {
        let (a, b) = (start.kernel_work.as_ref()?, self.kernel_work.as_ref()?);
        Some(KernelWindow::between(a, b))
    }
}

/// Takes snapshots of the machine and a fixed set of devices.
#[derive(Clone, Debug)]
pub struct Probe {
    /// The devices to read, usually from [`crate::resolve_devices`].
    pub devices: Vec<DeviceInfo>,
    /// The page-cache counters of the target's file system, or why there are none.
    page_cache: Option<Result<Arc<PageCacheProbe>, String>>,
    /// The kernel-work tracer, or why it is not running.
    kernel_work: Option<Result<Arc<KernelWork>, String>>,
}

impl Probe {
    /// A probe over `devices`.
    pub fn new(devices: Vec<DeviceInfo>) -> Probe {
        Probe {
            devices,
            page_cache: None,
            kernel_work: None,
        }
    }

    /// Also traces the kernel's work by whom it was for ([`KernelWork`]), from now until the
    /// probe and its clones are dropped: the CPU split then charges a run only the kernel work
    /// for its devices and processes.
    pub fn with_kernel_work(mut self) -> Probe {
        self.kernel_work = Some(KernelWork::start().map(Arc::new));
        self
    }

    /// Also counts the page-cache lookups and insertions of the file system holding `target`
    /// (see [`PageCacheProbe`]), from now until the probe and its clones are dropped.
    pub fn with_page_cache(mut self, target: &Path) -> Probe {
        self.page_cache = Some(PageCacheProbe::start(target).map(Arc::new));
        self
    }

    /// Why the page cache is not counted, when [`Probe::with_page_cache`] could not start.
    pub fn page_cache_unavailable(&self) -> Option<&str> {
        self.page_cache.as_ref()?.as_ref().err().map(String::as_str)
    }

    /// Reads every counter now. Never fails and never panics: unreadable sources are `None`.
    pub fn snapshot(&self) -> Snapshot {
        let at = Instant::now();
        Snapshot {
            at,
            cpu: read(PROC_STAT)
                .ok()
                .and_then(|text| parse_proc_stat(&text).ok()),
            disks: self
                .devices
                .iter()
                .map(|d| read(block_stat_path(&d.name)).ok())
                .map(|text| parse_block_stat(&text?).ok())
                .collect(),
            mem: read(PROC_MEMINFO)
                .ok()
                .and_then(|text| parse_meminfo(&text).ok()),
            arc: ARCSTATS
                .iter()
                .find_map(|p| read(p).ok())
                .map(|text| parse_arc_counters(&text)),
            page_cache: match &self.page_cache {
                Some(Ok(p)) => p.read(),
                _ => None,
            },
            kernel_work: None,
        }
    }

    /// A snapshot that also reads the kernel-work tracer's totals: for a window's edges (the
    /// tracer's table is a few hundred entries; the per-second samples do not need it).
    pub fn edge_snapshot(&self) -> Snapshot {
        let mut snap = self.snapshot();
        if let Some(Ok(k)) = &self.kernel_work {
            snap.kernel_work = k.totals();
        }
        snap
    }

    /// Per-device figures between two snapshots of this probe, over the time between them.
    /// Devices missing from either snapshot (unreadable then) are left out.
    pub fn device_stats(&self, start: &Snapshot, end: &Snapshot) -> Vec<DeviceStats> {
        let secs = end.at.saturating_duration_since(start.at).as_secs_f64();
        self.devices
            .iter()
            .zip(start.disks.iter().zip(&end.disks))
            .filter_map(|(dev, pair)| match pair {
                (Some(s), Some(e)) => Some(device_stats(dev, s, e, secs)),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_of_live_and_missing_devices() {
        let missing = DeviceInfo {
            name: "no-such-device".into(),
            role: "stack".into(),
            model: None,
            loop_backing: None,
            loop_dio: None,
        };
        let probe = Probe::new(vec![missing]);
        let a = probe.snapshot();
        let b = probe.snapshot();
        assert!(a.cpu.is_some_and(|c| c.cpus >= 1));
        assert!(a.mem.is_some_and(|m| m.total > 0));
        assert_eq!(a.disks, vec![None]);
        assert!(b.at >= a.at);
        assert!(probe.device_stats(&a, &b).is_empty());
    }
}
