//! `bakeoff capture`: record a process tree's file-system calls under some directories into a
//! trace file (docs/trace.md), for `trace show`, `trace personality` and `run --replay`.

mod args;

pub use args::{check, writable_file, CapturePlan, Whom};

use crate::cli::capture::CaptureArgs;
use crate::commands::measure::interrupt_flag;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::trace::{Header, Provenance, TraceWriter};
use bakeoff_core::units::{format_bytes, format_count};
use bakeoff_probe::capture::{
    prepare_provenance, Capture, CaptureSpec, CaptureSummary, Filter, UNPLACED,
};
use std::io::{BufWriter, Read};
use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often progress is printed.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);
/// How often the loop looks at the clock, the flag and the processes.
const TICK: Duration = Duration::from_millis(100);

/// Runs `bakeoff capture`.
pub fn run(args: CaptureArgs) -> Result<Code, Failure> {
    let plan = check(args)?;
    if !rustix::process::geteuid().is_root() {
        return Err(failure(
            Code::Environment,
            "capture attaches eBPF programs to the kernel's syscall tracepoints: run it as root",
        ));
    }
    let interrupted = interrupt_flag()?;
    let capture = start(&plan).inspect_err(|_| {
        // Nothing was captured: no file without an end is left behind.
        let _ = std::fs::remove_file(&plan.out);
    })?;
    let mut child = match &plan.whom {
        Whom::Command(argv) => match spawn(argv) {
            Ok(child) => Some(child),
            Err(e) => {
                // Nothing ran: no trace is left behind.
                let _ = capture.finish();
                let _ = std::fs::remove_file(&plan.out);
                return Err(e);
            }
        },
        _ => None,
    };
    let ended = watch(&plan, &capture, child.as_mut(), &interrupted);
    let summary = (capture.finish())
        .map_err(|e| failure(Code::Io, format!("finishing {}: {e}", plan.out.display())))?;
    print_summary(&plan, &summary);
    ended
}

/// Creates the trace file and starts the capture into it.
fn start(plan: &CapturePlan) -> Result<Capture, Failure> {
    let spec = CaptureSpec {
        filter: filter(&plan.whom),
        under: plan.roots.clone(),
        anonymize: plan.anonymize,
        buffer_bytes: plan.buffer_bytes,
    };
    let (capture, _id) = start_into(&plan.out, "--out", spec, provenance(plan))?;
    Ok(capture)
}

/// Starts `spec` into a new trace file `out` (`flag` names it in errors): `provenance`
/// completed by the capture (each root's file system, the start, the ring, the processes'
/// memory), a fresh capture id. The capture and its id in hex. What `bakeoff capture` and
/// `run --capture` share.
pub fn start_into(
    out: &Path,
    flag: &str,
    spec: CaptureSpec,
    mut provenance: Provenance,
) -> Result<(Capture, String), Failure> {
    let named =
        |code: Code| move |e: String| failure(code, format!("{flag} {}: {e}", out.display()));
    prepare_provenance(&spec, &mut provenance).map_err(named(Code::Environment))?;
    let file = std::fs::File::create(out).map_err(|e| named(Code::Io)(e.to_string()))?;
    let header = Header::new(random_id());
    let writer = (TraceWriter::new(BufWriter::new(file), &header, &provenance))
        .map_err(|e| named(Code::Io)(e.to_string()))?;
    let capture =
        Capture::start(spec, Box::new(writer), provenance).map_err(named(Code::Environment))?;
    Ok((capture, header.capture_id_hex()))
}

/// The provenance every capture starts from: this bakeoff and this kernel.
pub fn base_provenance() -> Provenance {
    Provenance {
        schema_version: 1,
        bakeoff_version: env!("CARGO_PKG_VERSION").into(),
        kernel: bakeoff_probe::environment(env!("CARGO_PKG_VERSION"), None).kernel,
        ..Provenance::default()
    }
}

/// Sixteen random bytes: a trace's identity.
fn random_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut id));
    if read.is_err() {
        // No urandom: the clock and the pid still tell one capture from another.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        id[..8].copy_from_slice(&now.map_or(0, |d| d.as_nanos() as u64).to_le_bytes());
        id[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    }
    id
}

fn filter(whom: &Whom) -> Filter {
    match whom {
        Whom::Pids(pids) => Filter::Pids(pids.clone()),
        Whom::Cgroup(dir) => Filter::Cgroup(dir.clone()),
        Whom::Command(_) => Filter::ChildrenOfSelf,
    }
}

fn provenance(plan: &CapturePlan) -> Provenance {
    let filter = match &plan.whom {
        Whom::Pids(pids) => format!(
            "pid {}",
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        Whom::Cgroup(dir) => format!("cgroup {}", dir.display()),
        Whom::Command(argv) if plan.anonymize => format!("command {}", argv[0]),
        Whom::Command(argv) => format!("command {}", argv.join(" ")),
    };
    Provenance {
        filter,
        anonymized: plan.anonymize,
        ..base_provenance()
    }
}

fn spawn(argv: &[String]) -> Result<Child, Failure> {
    (Command::new(&argv[0]).args(&argv[1..]).spawn()).map_err(|e| {
        failure(
            Code::Usage,
            format!("starting {}: {e} (is it on PATH?)", argv[0]),
        )
    })
}

/// Waits until the capture should end: the command exits, the processes are gone, the
/// duration passes or Ctrl-C. Prints progress. The code says how it ended.
fn watch(
    plan: &CapturePlan,
    capture: &Capture,
    mut child: Option<&mut Child>,
    interrupted: &AtomicBool,
) -> Result<Code, Failure> {
    let start = Instant::now();
    let mut last_progress = start;
    loop {
        std::thread::sleep(TICK);
        if interrupted.load(Ordering::Relaxed) {
            if let Some(child) = child.as_deref_mut() {
                stop_child(child);
            }
            return Ok(Code::Interrupted);
        }
        if let Some(child) = child.as_deref_mut() {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(Code::Ok),
                Ok(Some(status)) => {
                    eprintln!("bakeoff: the captured command ended with {status}");
                    return Ok(Code::CommandFailed);
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(failure(
                        Code::Environment,
                        format!("waiting for the command: {e}"),
                    ))
                }
            }
        } else if gone(&plan.whom) {
            return Ok(Code::Ok);
        }
        if plan.duration.is_some_and(|d| start.elapsed() >= d) {
            if let Some(child) = child.as_deref_mut() {
                eprintln!("bakeoff: --duration passed: stopping the command");
                stop_child(child);
            }
            return Ok(Code::Ok);
        }
        if !plan.quiet && last_progress.elapsed() >= PROGRESS_EVERY {
            last_progress = Instant::now();
            let (ops, lost) = capture.progress();
            eprintln!(
                "capture {:>5.0}s  {} calls  lost {}",
                start.elapsed().as_secs_f64(),
                format_count(ops),
                format_count(lost)
            );
        }
    }
}

/// Whether every captured process has exited: the pids given, or a cgroup now empty.
fn gone(whom: &Whom) -> bool {
    match whom {
        Whom::Pids(pids) => {
            (pids.iter()).all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        }
        Whom::Cgroup(dir) => std::fs::read_to_string(dir.join("cgroup.procs"))
            .is_ok_and(|procs| procs.trim().is_empty()),
        Whom::Command(_) => false,
    }
}

/// SIGTERM, then SIGKILL after two seconds: the command's children are its own to stop.
fn stop_child(child: &mut Child) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn print_summary(plan: &CapturePlan, summary: &CaptureSummary) {
    let bytes = std::fs::metadata(&plan.out).map(|m| m.len()).unwrap_or(0);
    let per_op = if summary.ops > 0 {
        bytes as f64 / summary.ops as f64
    } else {
        0.0
    };
    eprintln!(
        "wrote {}: {} calls in {:.1} s, {} ({per_op:.1} bytes a call); lost {}",
        plan.out.display(),
        format_count(summary.ops),
        summary.duration_ns as f64 / 1e9,
        format_bytes(bytes),
        format_count(summary.lost.total()),
    );
    let lost = summary.lost;
    let causes = [
        ("ring buffer full", lost.ring_full),
        ("starts not kept", lost.pending_full),
        ("arguments unreadable", lost.user_read_failed),
        ("asynchronous submissions cut", lost.async_truncated),
        ("unpaired starts and ends", lost.unmatched_exit),
        ("unfinished at the end", lost.unfinished_at_end),
    ];
    for (cause, n) in causes.into_iter().filter(|(_, n)| *n > 0) {
        eprintln!("  lost: {} ({cause})", format_count(n));
    }
    if lost.ring_full > 0 {
        eprintln!(
            "  a larger --buffer loses fewer (the count includes calls the --under filter would have dropped)"
        );
    }
    for (name, count) in &summary.uncovered {
        // A call's name reads "N mmap call(s) on ..."; the calls the capture could not place
        // are named by a description that reads on its own.
        let what = if name == UNPLACED {
            name.clone()
        } else {
            format!("{name} call(s) on the traced files")
        };
        eprintln!("  not captured: {} {what}", format_count(*count));
    }
}
