//! Kernel work by whom it was for, traced with eBPF (`kwork.bpf.c`): the CPU time of workqueue
//! items, and of hard and soft interrupts, keyed by what they name (a workqueue, a block device
//! whose request an interrupt completed, an interrupt line, the device a writeback wrote back)
//! and by what queued them (a device's completion, another work item, a process). Pooled kernel
//! workers and interrupts serve every device on the machine; their thread names and
//! `/proc/stat` cannot say for whom, this can. See docs/methodology.md ("CPU per operation").
//!
//! The thin reader; the parsing is in `label`, the attribution in `attribution.rs`.

mod label;

pub use label::{parse_key, KernelTime, KernelWindow, KernelWorkTotals, Label};

use libbpf_rs::{Link, MapCore, MapFlags, Object, ObjectBuilder};

/// The compiled tracer (`build.rs`).
const OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kwork.bpf.o"));

/// The tracer, loaded and attached until dropped.
pub struct KernelWork {
    object: Object,
    links: Vec<Link>,
}

impl Drop for KernelWork {
    /// Detaches the tracepoints together: each detach waits for an RCU grace period (about
    /// 80 ms on this VM), and one after another they held every run's end (and a Ctrl-C's) for
    /// 0.7 s; dropped at once, they wait for about one.
    fn drop(&mut self) {
        let links = std::mem::take(&mut self.links);
        std::thread::scope(|s| {
            for link in links {
                s.spawn(move || drop(link));
            }
        });
    }
}

impl std::fmt::Debug for KernelWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KernelWork")
    }
}

impl KernelWork {
    /// Loads the tracer and attaches it to its tracepoints (needs root, and tracefs, which this
    /// mounts if it is not). The error says which step failed.
    pub fn start() -> Result<KernelWork, String> {
        crate::tracefs::ensure_mounted()?;
        let open = (ObjectBuilder::default().open_memory(OBJECT))
            .map_err(|e| format!("opening the kernel-work tracer: {e}"))?;
        let object = (open.load())
            .map_err(|e| format!("loading the kernel-work tracer (needs root and eBPF): {e}"))?;
        let mut links = Vec::new();
        for prog in object.progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            let link = (prog.attach())
                .map_err(|e| format!("attaching the kernel-work tracer's {name}: {e}"))?;
            links.push(link);
        }
        Ok(KernelWork { object, links })
    }

    /// The totals so far; `None` if the tracer's tables cannot be read.
    pub fn totals(&self) -> Option<KernelWorkTotals> {
        let map = |name: &str| self.object.maps().find(|m| m.name() == name);
        let totals = map("totals")?;
        let mut out = KernelWorkTotals::default();
        for key in totals.keys() {
            let value = totals.lookup(&key, MapFlags::ANY).ok()??;
            // A key or value of another size is another program's table: nothing is read.
            out.ns
                .insert(parse_key(&key)?, label::parse_value_ns(&value)?);
        }
        let lost = map("lost")?
            .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
            .ok()??;
        out.lost = lost.get(..8).map_or(0, |b| {
            u64::from_ne_bytes(b.try_into().expect("eight bytes"))
        });
        Some(out)
    }
}
