//! The client side: `bakeoff __client` reads its job, sets up its threads, reports ready,
//! starts on the parent's `go`, runs its window as any run does, reports exact counts and its
//! own CPU, and exits when the parent closes its stdin.

use super::protocol::{report, Job, Outcome, Report, GO, STOP};
use crate::layout::{existing, Target};
use crate::run::execute_gated;
use crate::shared::RunError;
use crate::TickKind;
use bakeoff_probe::rusage_self;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

/// What the parent said after the job.
enum Word {
    Go,
    Stop,
    /// End of file (the parent closed stdin, or died).
    Gone,
}

/// Runs one client: the job from stdin, reports to stdout. `interrupt` is the process's
/// signal flag (Ctrl-C reaches every process of the terminal's group); the parent's `stop`
/// and the end of stdin set it too. Returns the process's exit code.
pub fn serve(interrupt: Arc<AtomicBool>) -> i32 {
    // Under a memory limit the clients, not the parent that tears the stack down, are what
    // the OOM killer should take.
    bakeoff_probe::offer_self_to_oom_killer();
    let mut lines = std::io::stdin().lock().lines();
    let job: Job = match lines.next() {
        Some(Ok(line)) => match serde_json::from_str(&line) {
            Ok(job) => job,
            Err(e) => return fail(format!("reading the job: {e}")),
        },
        _ => return fail("no job on stdin".into()),
    };
    drop(lines);
    let words = listen(interrupt.clone());
    let dataset = existing(&job.plan, &Target::Directory(job.dir.clone()));
    let mut gate = || {
        report(&Report::Ready);
        match words.recv() {
            Ok(Word::Go) => Ok(()),
            _ => Err(RunError::Client {
                index: job.index,
                pid: std::process::id(),
                message: "stopped before the start".into(),
            }),
        }
    };
    let mut cpu_at_start = (0, 0);
    let mut cpu = (0, 0);
    let mut on_tick = |t: &crate::Tick| {
        let (user, system, _) = rusage_self();
        match t.kind {
            TickKind::MeasureStart => cpu_at_start = (user, system),
            TickKind::End => {
                cpu = (
                    user.saturating_sub(cpu_at_start.0),
                    system.saturating_sub(cpu_at_start.1),
                )
            }
            _ => {}
        }
        report(&Report::Tick {
            elapsed_ns: t.elapsed.as_nanos() as u64,
            totals: Box::new(t.totals),
        });
    };
    let out = execute_gated(&job.plan, &dataset, &interrupt, &mut on_tick, &mut gate);
    let code = match out {
        Ok(out) => {
            report(&Report::Done(Box::new(Outcome {
                counts: out.counts,
                measured_ns: out.measured.as_nanos() as u64,
                interrupted: out.interrupted,
                error: out.error.map(|e| e.to_string()),
                cpu_us: cpu,
                max_rss_bytes: rusage_self().2,
            })));
            0
        }
        Err(e) => {
            report(&Report::Failed {
                error: e.to_string(),
            });
            1
        }
    };
    // Alive until the parent has sampled the process table: its CPU is counted as bakeoff's.
    while !matches!(words.recv(), Ok(Word::Gone) | Err(_)) {}
    code
}

/// Reads the parent's words after the job on a thread of its own: `stop` and the end of stdin
/// also raise `interrupt`, so the run stops within one operation.
fn listen(interrupt: Arc<AtomicBool>) -> mpsc::Receiver<Word> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let word = match line.as_deref().map(str::trim) {
                Ok(GO) => Word::Go,
                Ok(STOP) => Word::Stop,
                Ok(_) => continue,
                Err(_) => break,
            };
            if matches!(word, Word::Stop) {
                interrupt.store(true, Ordering::Relaxed);
            }
            if tx.send(word).is_err() {
                return;
            }
        }
        interrupt.store(true, Ordering::Relaxed);
        let _ = tx.send(Word::Gone);
    });
    rx
}

fn fail(error: String) -> i32 {
    report(&Report::Failed { error });
    2
}
