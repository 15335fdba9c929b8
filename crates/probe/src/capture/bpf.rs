//! The kernel side of a capture (`capture.bpf.c`): loading it with the ring's size, filling its
//! tables, attaching it, and reading its counters. One generic enter and one generic exit
//! program serve every traced call: each attachment carries the call's code as its cookie.
//!
//! No `RLIMIT_MEMLOCK` handling: from 5.11 BPF memory is charged to the memory cgroup, and on
//! older kernels libbpf raises the limit itself when it creates the first map.

use super::event::SYSCALLS;
use libbpf_rs::{
    Link, Map, MapCore, MapFlags, Object, ObjectBuilder, TracepointCategory, TracepointOpts,
};
use std::collections::BTreeSet;

/// The compiled capture (`build.rs`).
const OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/capture.bpf.o"));

/// `stats` slots (`enum stat` in `capture.bpf.c`).
pub const S_RING_FULL: usize = 0;
/// A call whose start could not be kept: the thread had no per-task storage.
pub const S_PENDING_FULL: usize = 1;
/// A path, iovec or iocb that could not be read.
pub const S_USER_READ_FAILED: usize = 2;
/// More iovecs or iocbs than the program reads.
pub const S_ASYNC_TRUNCATED: usize = 3;
/// An exit whose enter was another call's.
pub const S_UNMATCHED_EXIT: usize = 4;
/// Starts kept less ends seen: the calls in progress (not a loss until the capture ends).
pub const S_IN_FLIGHT: usize = 5;
const S_COUNT: u32 = 8;

/// The loaded, attached capture; detached when dropped.
pub struct Kernel {
    /// The programs and maps.
    pub object: Object,
    links: Vec<Link>,
}

impl Kernel {
    /// Loads the program with a ring of `ring_bytes` (a power of two of pages), seeds its
    /// tables and attaches it. `root_tgid`: a process whose new children are traced (0: none).
    pub fn start(
        ring_bytes: u32,
        devs: &[u32],
        tgids: &BTreeSet<u32>,
        root_tgid: u32,
    ) -> Result<Kernel, String> {
        crate::tracefs::ensure_mounted()?;
        for call in &SYSCALLS {
            super::layout::check_call(call.name)?;
        }
        super::layout::check_uring()?;
        let mut open = (ObjectBuilder::default().open_memory(OBJECT))
            .map_err(|e| format!("opening the capture's BPF object: {e}"))?;
        let mut events = (open.maps_mut().find(|m| m.name() == "events"))
            .ok_or("the capture's BPF object has no `events` ring")?;
        (events.set_max_entries(ring_bytes))
            .map_err(|e| format!("sizing the capture's ring buffer to {ring_bytes} bytes: {e}"))?;
        let object = (open.load()).map_err(|e| {
            format!("loading the capture's BPF programs (needs root and eBPF): {e}")
        })?;
        let mut kernel = Kernel {
            object,
            links: Vec::new(),
        };
        for dev in devs {
            kernel.put("devs", &dev.to_ne_bytes(), &[1])?;
        }
        for tgid in tgids {
            kernel.put("tgids", &tgid.to_ne_bytes(), &[1])?;
        }
        let mut config = Vec::new();
        config.extend_from_slice(&root_tgid.to_ne_bytes());
        config.extend_from_slice(&0u32.to_ne_bytes());
        config.extend_from_slice(&u64::from(ring_bytes / 4).to_ne_bytes());
        kernel.put("config", &0u32.to_ne_bytes(), &config)?;
        kernel.attach()?;
        Ok(kernel)
    }

    fn attach(&mut self) -> Result<(), String> {
        let mut links = Vec::new();
        // Ends before starts: a call whose end the capture could miss is never started in it
        // (a start with no end would be counted lost at the thread's next call).
        let mut progs: Vec<_> = self.object.progs_mut().collect();
        progs.sort_by_key(|p| p.name().to_str() != Some("sys_exit"));
        for prog in progs {
            let name = prog.name().to_string_lossy().into_owned();
            if ["on_fork", "on_exit", "uring_submit", "uring_complete"].contains(&name.as_str()) {
                let link =
                    (prog.attach()).map_err(|e| format!("attaching the capture's {name}: {e}"))?;
                links.push(link);
                continue;
            }
            let (prefix, all_calls) = match name.as_str() {
                "sys_enter" => ("sys_enter_", true),
                "sys_exit" => ("sys_exit_", false),
                _ => continue,
            };
            for call in SYSCALLS.iter().filter(|c| all_calls || c.exit) {
                let tp = format!("{prefix}{}", call.name);
                let opts = TracepointOpts {
                    cookie: u64::from(call.code),
                    ..Default::default()
                };
                let link =
                    (prog.attach_tracepoint_with_opts(TracepointCategory::Syscalls, &tp, opts))
                        .map_err(|e| format!("attaching the capture to syscalls:{tp}: {e:#}"))?;
                links.push(link);
            }
        }
        self.links = links;
        Ok(())
    }

    /// The map called `name`.
    pub fn map(&self, name: &str) -> Result<Map<'_>, String> {
        (self.object.maps().find(|m| m.name() == name))
            .ok_or_else(|| format!("the capture's BPF object has no map {name}"))
    }

    /// Sets `key` to `value` in map `name`.
    pub fn put(&self, name: &str, key: &[u8], value: &[u8]) -> Result<(), String> {
        (self.map(name)?.update(key, value, MapFlags::ANY))
            .map_err(|e| format!("filling the capture's {name} table: {e}"))
    }

    /// Each `stats` slot, summed over the CPUs. Wrapping: a call in flight can start on one
    /// CPU and end on another, leaving one's count below zero.
    pub fn stats(&self) -> Result<Vec<u64>, String> {
        let map = self.map("stats")?;
        let mut out = Vec::new();
        for slot in 0..S_COUNT {
            let per_cpu = (map.lookup_percpu(&slot.to_ne_bytes(), MapFlags::ANY))
                .map_err(|e| format!("reading the capture's loss counters: {e}"))?
                .unwrap_or_default();
            let sum = (per_cpu.iter())
                .filter_map(|v| Some(u64::from_ne_bytes(v.get(..8)?.try_into().ok()?)))
                .fold(0u64, u64::wrapping_add);
            out.push(sum);
        }
        Ok(out)
    }

    /// Calls that started and had not ended (a thread's state is in its task's storage,
    /// which user space cannot list: the kernel keeps the count).
    pub fn pending(&self) -> u64 {
        self.stats()
            .map_or(0, |s| s.get(S_IN_FLIGHT).copied().unwrap_or(0))
    }

    /// Detaches every program, together (each detach waits for an RCU grace period).
    pub fn detach(&mut self) {
        let links = std::mem::take(&mut self.links);
        std::thread::scope(|s| {
            for link in links {
                s.spawn(move || drop(link));
            }
        });
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.detach();
    }
}
