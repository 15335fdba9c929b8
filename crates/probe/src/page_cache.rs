//! Pages added to the page cache of one file system, counted by the kernel.
//!
//! The filemap tracepoint `mm_filemap_add_to_page_cache` names the file system (`s_dev`) and
//! the size (a folio of `2^order` pages) of every insertion into the page cache. It is counted
//! in tracefs *instances* of bakeoff's own (`instances/bakeoff-<pid>-<n>-added-o<order>`), one
//! per folio order, each filtered on the stack's `s_dev` and order, with a one-page ring
//! buffer: nobody reads the events, the buffer's `entries + overrun` counters are the count.
//! Histogram triggers would sum pages in one instance, but kernels built without
//! `CONFIG_HIST_TRIGGERS` (this project's VM) refuse them. Lookups
//! (`mm_filemap_get_pages`) are not counted: one event per buffered read cost 200-1,300 ns per
//! cached 4 KiB read here (a quarter of the rate); insertions happen only where pages come
//! from the device or are created, beside much larger costs. The global trace is not touched,
//! and the instances are removed on drop and, after a crash, by [`remove_stale_instances`]
//! (`bakeoff cleanup`). Where tracefs is not mounted, root mounts it first ([`crate::tracefs`]).

use crate::parse::parse_trace_events_written;
use crate::target_info::in_memory_filesystem;
use crate::tracefs::{ensure_mounted, TRACEFS};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Prefix of every instance bakeoff creates; the pid of its creator follows.
const PREFIX: &str = "bakeoff-";
/// Folio orders counted one per instance; the last instance counts every larger order as this
/// one (a lower bound that x86-64, whose largest page-cache folio is order 9, never reaches).
const ORDERS: u32 = 11;

/// Counts since the probe started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageCacheCounters {
    /// Pages added to the page cache of the file system (`mm_filemap_add_to_page_cache`,
    /// `2^order` each): pages read from the device (asked for or read ahead) and pages
    /// created by buffered writes.
    pub added_pages: u64,
}

/// The tracefs instances counting one file system's page-cache insertions; removed on drop.
#[derive(Debug)]
pub struct PageCacheProbe {
    /// `(pages per folio, instance)`.
    added: Vec<(u64, PathBuf)>,
}

impl PageCacheProbe {
    /// Starts counting for the file system that holds `target`, or says why it cannot.
    pub fn start(target: &Path) -> Result<PageCacheProbe, String> {
        let meta = std::fs::metadata(target)
            .map_err(|e| format!("cannot examine {}: {e}", target.display()))?;
        if meta.file_type().is_block_device() {
            return Err(
                "the target is a block device: its page cache is the device's, not a file system's"
                    .into(),
            );
        }
        // Every read finds its page, none is added through the traced path: counting would
        // report a meaningless 100 %.
        if let Some(fs) = in_memory_filesystem(target) {
            return Err(format!(
                "{fs} keeps files in memory: there is no page cache to miss"
            ));
        }
        ensure_mounted()?;
        let instances = Path::new(TRACEFS).join("instances");
        // The kernel's own dev_t (major << 20 | minor), not the C library's encoding.
        let s_dev = (u64::from(libc::major(meta.dev())) << 20) | u64::from(libc::minor(meta.dev()));
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut probe = PageCacheProbe { added: Vec::new() };
        // On an error `probe` drops here and removes what it created so far.
        for order in 0..ORDERS {
            let dir = instances.join(format!("{base}-added-o{order}"));
            let op = if order + 1 == ORDERS { ">=" } else { "==" };
            probe.added.push((1 << order, dir.clone()));
            counting_instance(
                &dir,
                "mm_filemap_add_to_page_cache",
                &format!("s_dev == {s_dev} && order {op} {order}"),
            )?;
        }
        Ok(probe)
    }

    /// The counts so far; `None` if an instance could not be read.
    pub fn read(&self) -> Option<PageCacheCounters> {
        let mut added_pages = 0;
        for (pages, dir) in &self.added {
            added_pages += pages * events_written(dir)?;
        }
        Some(PageCacheCounters { added_pages })
    }
}

impl Drop for PageCacheProbe {
    fn drop(&mut self) {
        for (_, dir) in &self.added {
            // Removing an instance disables its events; a missing one was never created.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Creates instance `dir` with the smallest ring buffer and `event` enabled under `filter`.
fn counting_instance(dir: &Path, event: &str, filter: &str) -> Result<(), String> {
    let write = |file: &Path, value: &str| {
        std::fs::write(file, value)
            .map_err(|e| format!("cannot write {value:?} to {}: {e}", file.display()))
    };
    std::fs::create_dir(dir).map_err(|e| {
        format!(
            "cannot create the tracefs instance {}: {e} (root is needed)",
            dir.display()
        )
    })?;
    let ev = dir.join("events/filemap").join(event);
    if !ev.is_dir() {
        return Err(format!(
            "the kernel has no filemap:{event} tracepoint ({} is missing)",
            ev.display()
        ));
    }
    write(&dir.join("buffer_size_kb"), "4")?;
    write(&ev.join("filter"), filter)?;
    write(&ev.join("enable"), "1")
}

/// Events written to every CPU's buffer of instance `dir`.
fn events_written(dir: &Path) -> Option<u64> {
    let cpus = std::fs::read_dir(dir.join("per_cpu")).ok()?;
    let mut total = 0;
    for cpu in cpus {
        let text = std::fs::read_to_string(cpu.ok()?.path().join("stats")).ok()?;
        total += parse_trace_events_written(&text).ok()?;
    }
    Some(total)
}

/// Removes the instances of bakeoff processes that no longer run (killed before their probe
/// was dropped); returns how many were removed.
pub fn remove_stale_instances() -> usize {
    let Ok(entries) = std::fs::read_dir(Path::new(TRACEFS).join("instances")) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix(PREFIX))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok());
            pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        })
        .filter(|e| std::fs::remove_dir(e.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_target_has_a_reason() {
        let missing = PageCacheProbe::start(Path::new("/no/such/dir")).unwrap_err();
        assert!(missing.contains("/no/such/dir"), "{missing}");
    }
}
