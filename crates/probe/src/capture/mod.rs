//! Capture of a process tree's file-system calls on the files under given directories, with
//! eBPF (`capture.bpf.c`), into a [`TraceSink`]: one record per finished call, the file found
//! in the kernel from the caller's descriptor table, the losses counted, never silent. See
//! docs/dev/issue-22-plan.md §1.
//!
//! A thread owns the loaded programs: it drains the ring buffer every [`DRAIN_EVERY`] (the
//! kernel side does not wake it for each record), and turns records into trace records
//! ([`tables`]).

mod anon;
mod bpf;
mod event;
mod filter;
pub mod layout;
mod order;
mod paths;
mod tables;
mod uncovered;

pub use anon::Anonymizer;
pub use filter::Filter;
pub use tables::UNPLACED;

use crate::monotonic_ns;
use bakeoff_core::trace::{Footer, LostCounts, Provenance, TraceSink};
use libbpf_rs::RingBufferBuilder;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

/// How often the consumer drains the ring buffer.
pub const DRAIN_EVERY: Duration = Duration::from_millis(50);
/// The smallest ring: one page (a ring's size is a power of two of pages).
pub const MIN_RING_BYTES: u64 = 4096;

/// What to capture.
#[derive(Clone, Debug)]
pub struct CaptureSpec {
    /// Whose calls.
    pub filter: Filter,
    /// The directories whose files are traced, each with its root's name (`data`, `log`).
    pub under: Vec<(String, PathBuf)>,
    /// Replace every path component ([`Anonymizer`]).
    pub anonymize: bool,
    /// Size of the ring buffer; rounded up to a power of two of pages, at least one page.
    pub buffer_bytes: u64,
}

/// What a finished capture saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureSummary {
    /// Records written.
    pub ops: u64,
    /// What was lost.
    pub lost: LostCounts,
    /// Calls on traced files that a replay does not make, by name.
    pub uncovered: Vec<(String, u64)>,
    /// From the start to the end.
    pub duration_ns: u64,
}

enum Command {
    AddPid(u32),
    Mark(u64, String),
    Finish,
}

/// A running capture.
pub struct Capture {
    commands: Sender<Command>,
    thread: std::thread::JoinHandle<Result<CaptureSummary, String>>,
    provenance: Provenance,
    progress: Arc<Progress>,
}

/// What the capture thread has seen so far, for progress lines.
#[derive(Default)]
struct Progress {
    ops: AtomicU64,
    lost: AtomicU64,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Capture")
    }
}

/// The ring's size for `bytes`: a power of two, at least one page, at most 2 GiB.
pub fn ring_size(bytes: u64) -> u32 {
    let size = bytes.clamp(MIN_RING_BYTES, 1 << 31).next_power_of_two();
    u32::try_from(size.min(1 << 31)).unwrap_or(1 << 31)
}

impl Capture {
    /// Starts capturing: walks the directories, loads and attaches the programs, and returns
    /// once calls are being traced. `provenance` is filled as [`prepare_provenance`] does and
    /// kept ([`Capture::provenance`]); a sink that writes it at its start (the trace writer) is
    /// made with the result of [`prepare_provenance`] instead, called first.
    pub fn start(
        spec: CaptureSpec,
        sink: Box<dyn TraceSink + Send>,
        provenance: Provenance,
    ) -> Result<Capture, String> {
        let mut provenance = provenance;
        prepare_provenance(&spec, &mut provenance)?;
        let roots = filter::roots(&spec.under)?;
        let seed = filter::seed(&spec.filter)?;
        let mut index =
            paths::PathIndex::new(roots.iter().map(|(d, p, _)| (*d, p.clone())).collect());
        index.walk()?;
        let devs: Vec<u32> = roots.iter().map(|(d, _, _)| *d).collect();
        let ring = ring_size(spec.buffer_bytes);
        let root_tgid = match spec.filter {
            Filter::ChildrenOfSelf => std::process::id(),
            _ => 0,
        };
        let (commands, receive) = channel();
        let (ready_tx, ready) = sync_channel(1);
        let anonymize = spec.anonymize;
        let filter = spec.filter.clone();
        let progress = Arc::new(Progress::default());
        let published = progress.clone();
        let thread = std::thread::Builder::new()
            .name("capture".into())
            .spawn(move || {
                let t0 = monotonic_ns();
                let kernel = match bpf::Kernel::start(ring, &devs, &seed, root_tgid) {
                    Ok(k) => k,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.clone()));
                        return Err(e);
                    }
                };
                // Processes forked after the first walk and before the fork program was
                // attached: a second walk, now that forks are followed, finds them.
                if let Ok(late) = filter::seed(&filter) {
                    for pid in late.difference(&seed) {
                        let _ = kernel.put("tgids", &pid.to_ne_bytes(), &[1]);
                    }
                }
                let tables = tables::Tables::new(sink, index, t0, anonymize);
                run(kernel, tables, t0, receive, ready_tx, &published)
            })
            .map_err(|e| format!("cannot start the capture's thread: {e}"))?;
        match ready.recv() {
            Ok(Ok(())) => Ok(Capture {
                commands,
                thread,
                provenance,
                progress,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(match thread.join() {
                Ok(Err(e)) => e,
                _ => "the capture's thread ended while starting".to_string(),
            }),
        }
    }

    /// The provenance as `start` filled it.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// Calls recorded and calls lost so far (the losses as of the last second).
    pub fn progress(&self) -> (u64, u64) {
        let p = &self.progress;
        (
            p.ops.load(Ordering::Relaxed),
            p.lost.load(Ordering::Relaxed),
        )
    }

    /// Traces `pid` (and the processes it starts from now on) too.
    pub fn add_pid(&self, pid: u32) {
        let _ = self.commands.send(Command::AddPid(pid));
    }

    /// Records a named instant now.
    pub fn mark(&self, name: &str) {
        let _ = self
            .commands
            .send(Command::Mark(monotonic_ns(), name.to_string()));
    }

    /// Stops: detaches the programs, drains what is left, reads the loss counters and sends the
    /// footer.
    pub fn finish(self) -> Result<CaptureSummary, String> {
        let _ = self.commands.send(Command::Finish);
        (self.thread.join()).unwrap_or_else(|_| Err("the capture's thread panicked".to_string()))
    }
}

/// What the capture knows of where it runs, for the provenance the sink is made with: each
/// root's file system and mount options, the start time, the ring's size, the captured
/// processes' memory. Call before [`Capture::start`] with the same spec.
pub fn prepare_provenance(spec: &CaptureSpec, provenance: &mut Provenance) -> Result<(), String> {
    let roots = filter::roots(&spec.under)?;
    provenance.roots = roots.into_iter().map(|(_, _, info)| info).collect();
    if spec.anonymize {
        let mut anon = Anonymizer::default();
        for root in &mut provenance.roots {
            root.path = anon.path(root.path.trim_start_matches('/'), true);
        }
    }
    provenance.started_unix_s = (std::time::SystemTime::now())
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    provenance.ring_bytes = u64::from(ring_size(spec.buffer_bytes));
    provenance.app_memory_bytes = filter::app_memory(&filter::seed(&spec.filter)?);
    if provenance.filter.is_empty() {
        provenance.filter = spec.filter.describe();
    }
    provenance.anonymized = spec.anonymize;
    provenance.cpu_ns_recorded = true;
    Ok(())
}

/// The capture thread: drains the ring until told to finish.
fn run(
    mut kernel: bpf::Kernel,
    tables: tables::Tables,
    t0: u64,
    commands: Receiver<Command>,
    ready: std::sync::mpsc::SyncSender<Result<(), String>>,
    progress: &Progress,
) -> Result<CaptureSummary, String> {
    let tables = RefCell::new(tables);
    let undecodable = std::cell::Cell::new(0u64);
    let events = kernel.map("events")?;
    let mut builder = RingBufferBuilder::new();
    (builder.add(&events, |bytes: &[u8]| {
        match event::decode(bytes) {
            Some(e) => tables.borrow_mut().event(&e),
            None => undecodable.set(undecodable.get() + 1),
        }
        0
    }))
    .map_err(|e| format!("reading the capture's ring buffer: {e}"))?;
    let ring = builder
        .build()
        .map_err(|e| format!("reading the capture's ring buffer: {e}"))?;
    let _ = ready.send(Ok(()));
    for round in 0u64.. {
        let _ = ring.poll(DRAIN_EVERY);
        let _ = ring.consume();
        progress.ops.store(tables.borrow().ops, Ordering::Relaxed);
        if round % 20 == 0 {
            let lost = kernel.stats().map_or(0, |s| footer(&s, 0, 0).lost.total());
            progress.lost.store(lost, Ordering::Relaxed);
        }
        match commands.try_recv() {
            Ok(Command::AddPid(pid)) => {
                let _ = kernel.put("tgids", &pid.to_ne_bytes(), &[1]);
            }
            Ok(Command::Mark(t, name)) => tables.borrow_mut().mark(t, &name),
            Ok(Command::Finish) | Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
        }
    }
    let end = monotonic_ns();
    // Detached first: no record can then be emitted after the last drain, or a loss counted
    // after the counters were read.
    kernel.detach();
    let _ = ring.consume();
    drop(ring);
    let unfinished = kernel.pending();
    let stats = kernel.stats()?;
    let tables = tables.into_inner();
    let footer = footer(&stats, unfinished, end.saturating_sub(t0));
    let summary = CaptureSummary {
        ops: tables.ops,
        lost: footer.lost,
        uncovered: tables.uncovered(),
        duration_ns: footer.duration_ns,
    };
    tables.finish(footer)?;
    if undecodable.get() > 0 {
        return Err(format!(
            "{} records of the capture's ring could not be decoded (a BPF object of another \
             version?)",
            undecodable.get()
        ));
    }
    Ok(summary)
}

fn footer(stats: &[u64], unfinished: u64, duration_ns: u64) -> Footer {
    let at = |i: usize| stats.get(i).copied().unwrap_or(0);
    let lost = LostCounts {
        ring_full: at(bpf::S_RING_FULL),
        pending_full: at(bpf::S_PENDING_FULL),
        user_read_failed: at(bpf::S_USER_READ_FAILED),
        async_truncated: at(bpf::S_ASYNC_TRUNCATED),
        unmatched_exit: at(bpf::S_UNMATCHED_EXIT),
        unfinished_at_end: unfinished,
    };
    Footer {
        ops: 0,
        duration_ns,
        lost,
        uncovered: Vec::new(),
        end_sizes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_a_power_of_two_of_pages() {
        assert_eq!(ring_size(0), 4096);
        assert_eq!(ring_size(5000), 8192);
        assert_eq!(ring_size(32 << 20), 32 << 20);
        assert_eq!(ring_size(u64::MAX), 1 << 31);
    }

    #[test]
    fn the_footer_names_every_loss() {
        let mut stats = vec![0; 8];
        stats[bpf::S_RING_FULL] = 3;
        stats[bpf::S_UNMATCHED_EXIT] = 1;
        let f = footer(&stats, 4, 10);
        let lost = f.lost;
        assert_eq!(
            (lost.ring_full, lost.unmatched_exit, lost.unfinished_at_end),
            (3, 1, 4)
        );
        assert_eq!((lost.total(), f.duration_ns), (8, 10));
    }
}
