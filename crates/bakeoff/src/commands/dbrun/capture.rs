//! `run --capture FILE`: the database server's file-system calls on its stacks, traced from the
//! warm-up to the end of the window (the load is not in it), with the window's start and end
//! marked, so a replay can measure the same window (`window=marked`).

use crate::commands::capture::{base_provenance, start_into};
use crate::commands::measure::Body;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::dbplan::{DbPlan, DbWork};
use bakeoff_core::record::capture::CaptureRecord;
use bakeoff_core::trace::plan::{WINDOW_END, WINDOW_START};
use bakeoff_core::trace::Provenance;
use bakeoff_engine::harness::{Tick, TickKind};
use bakeoff_probe::capture::{Capture, CaptureSpec, Filter};
use std::path::{Path, PathBuf};

/// The ring buffer of a run's capture. pgbench scale 50 with 8 clients made 21,000 traced calls
/// a second here (1,926,373 in 89.8 s, none lost), 2.7 MB/s of 128-byte records: 32 MiB holds
/// about 12 s of them undrained.
const RING_BYTES: u64 = 32 << 20;

/// Refuses `--capture` up front (exit 2) for work that is not a database's (`db` is `None`),
/// or for TPC-H (its queries run in phases of their own); exit 3 without root; an unwritable
/// FILE is exit 2.
pub fn check(path: &Path, db: Option<&DbPlan>) -> Result<(), Failure> {
    let usage = |m: String| Err(failure(Code::Usage, m));
    match db {
        Some(plan) if matches!(plan.work, DbWork::Tpch { .. }) => {
            return usage(format!(
                "--capture {}: traces a database's transactions (tpcc, pgbench, sysbench); tpch runs queries one by one",
                path.display()
            ))
        }
        Some(_) => {}
        None => {
            return usage(format!(
                "--capture {}: traces a database bakeoff runs (tpcc, pgbench, sysbench); \
                 for any other program use `bakeoff capture -- COMMAND`",
                path.display()
            ))
        }
    }
    crate::commands::capture::writable_file("--capture", path)
        .map_err(|m| failure(Code::Usage, m))?;
    if !rustix::process::geteuid().is_root() {
        return Err(failure(
            Code::Environment,
            "--capture attaches eBPF programs to the kernel's syscall tracepoints: run as root",
        ));
    }
    Ok(())
}

/// A capture running beside a database run.
pub struct RunCapture {
    capture: Capture,
    path: PathBuf,
    capture_id: String,
}

/// Starts tracing `pids` (the server; bakeoff itself for SQLite, which runs inside it) on the
/// files under `roots` into `path`.
pub fn start(
    path: &Path,
    pids: Vec<u32>,
    roots: Vec<(String, PathBuf)>,
    plan: &DbPlan,
    stack: &str,
) -> Result<RunCapture, Failure> {
    let pids = if pids.is_empty() {
        vec![std::process::id()]
    } else {
        pids
    };
    let spec = CaptureSpec {
        filter: Filter::Pids(pids),
        under: roots,
        anonymize: false,
        buffer_bytes: RING_BYTES,
    };
    let provenance = Provenance {
        stack: Some(stack.to_string()),
        database: Some(format!("{} {}", plan.db.name(), plan.workload)),
        settings: plan.settings.clone(),
        ..base_provenance()
    };
    let (capture, capture_id) = start_into(path, "--capture", spec, provenance)?;
    Ok(RunCapture {
        capture,
        path: path.to_path_buf(),
        capture_id,
    })
}

impl RunCapture {
    /// Records a named instant (`window_start`, `window_end`).
    pub fn mark(&self, name: &str) {
        self.capture.mark(name);
    }

    /// Stops, writes the trace's end, and says what it holds.
    pub fn finish(self) -> Result<CaptureRecord, Failure> {
        let summary = (self.capture.finish())
            .map_err(|e| failure(Code::Io, format!("--capture {}: {e}", self.path.display())))?;
        let bytes = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        Ok(CaptureRecord {
            path: self.path.display().to_string(),
            capture_id: self.capture_id,
            ops: summary.ops,
            bytes,
            bytes_per_op: (summary.ops > 0).then(|| bytes as f64 / summary.ops as f64),
            lost: summary.lost.total(),
            lost_detail: summary.lost,
            uncovered: summary.uncovered,
            duration_ns: summary.duration_ns,
        })
    }
}

/// `work` with the window's start and end marked in the trace.
pub fn marked<'w, 'b: 'w>(work: &'w mut Box<Body<'b>>, traced: &'w RunCapture) -> Box<Body<'w>> {
    Box::new(move |on_tick: &mut dyn FnMut(&Tick)| {
        work(&mut |tick: &Tick| {
            match tick.kind {
                TickKind::MeasureStart => traced.mark(WINDOW_START),
                TickKind::End => traced.mark(WINDOW_END),
                _ => {}
            }
            on_tick(tick)
        })
    })
}
