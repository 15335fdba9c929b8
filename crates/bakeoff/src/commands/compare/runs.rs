//! The study's runs, in the plan's interleaved order, round by round (a round: every cell's
//! repetition N). A run disturbed by other work is kept beside the results and run again at
//! the end of its round, up to `--max-redo` times (docs/verdicts.md).

use super::super::exports::write_atomically;
use super::super::phases::CommandOutput;
use super::super::pipeline::{Place, Ready, RunFlags, Work};
use super::cells::place_of;
use super::{disturbed, eta, mem_limit, run_path};
use crate::cli::{CompareArgs, StackOpts};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::study::{Cell, RunSlot, StudyPlan};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Progress over the study: runs done of runs planned (redone runs add to both), the pace.
struct Progress {
    done: usize,
    total: usize,
    eta: eta::Eta,
    planned_left: f64,
    bar: indicatif::ProgressBar,
}

/// Runs every run of the study the results directory `out` is missing, in the plan's order,
/// until one fails or Ctrl-C, with progress on stderr.
pub fn run_study(
    args: &CompareArgs,
    opts: &StackOpts,
    plan: &StudyPlan,
    plans: &[Work],
    out: &Path,
    interrupt: &AtomicBool,
) -> Result<(), Failure> {
    let missing = |s: &&RunSlot| !run_path(out, &plan.cells[s.cell].id, s.rep).exists();
    let mut progress = Progress {
        done: plan.order.len() - plan.order.iter().filter(missing).count(),
        total: plan.order.len(),
        eta: eta::Eta::default(),
        // What the runs not yet recorded are planned to take.
        planned_left: (plan.order.iter().filter(missing))
            .map(|s| eta::planned_secs(&plans[s.cell]))
            .sum(),
        // On a terminal a bar with the current cell, repetition and ETA; otherwise a line per run.
        bar: crate::progress::bar(
            plan.order.len() as u64,
            "[{pos}/{len}] {wide_msg} {elapsed_precise}",
            false,
        ),
    };
    let devices = disturbed::watched_devices(&plan.cells, opts);
    let mut order = plan.order.iter().filter(missing).peekable();
    while let Some(first) = order.next() {
        // This round's missing runs, then its disturbed ones again.
        // A resumed study counts the disturbed attempts it kept before.
        let kept =
            |s: &RunSlot| disturbed::attempts_kept(&run_path(out, &plan.cells[s.cell].id, s.rep));
        let mut round: VecDeque<(&RunSlot, u32)> = VecDeque::from([(first, kept(first))]);
        while let Some(slot) = order.next_if(|s| s.rep == first.rep) {
            round.push_back((slot, kept(slot)));
        }
        while let Some((slot, redone)) = round.pop_front() {
            if interrupt.load(Ordering::Relaxed) {
                break;
            }
            let run = Slot {
                plan,
                plans,
                out,
                slot,
            };
            match run.once(args, opts, &devices, &mut progress, redone, interrupt)? {
                Outcome::Stored => {}
                Outcome::Disturbed => {
                    progress.total += 1;
                    progress.bar.set_length(progress.total as u64);
                    round.push_back((slot, redone + 1));
                }
                Outcome::Interrupted => break,
            }
        }
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
    }
    progress.bar.finish_and_clear();
    Ok(())
}

/// What became of one attempt at a run.
enum Outcome {
    /// Recorded as the result of its slot.
    Stored,
    /// Kept as a disturbed attempt; the slot runs again.
    Disturbed,
    /// Interrupted: not recorded.
    Interrupted,
}

/// One run of the study: its cell, repetition and where it is recorded.
struct Slot<'a> {
    plan: &'a StudyPlan,
    plans: &'a [Work],
    out: &'a Path,
    slot: &'a RunSlot,
}

impl Slot<'_> {
    /// Runs it once (its `redone`th redo), judges it and records it.
    fn once(
        &self,
        args: &CompareArgs,
        opts: &StackOpts,
        devices: &[bakeoff_probe::DeviceInfo],
        progress: &mut Progress,
        redone: u32,
        interrupt: &AtomicBool,
    ) -> Result<Outcome, Failure> {
        let (cell, rep) = (&self.plan.cells[self.slot.cell], self.slot.rep);
        let work = &self.plans[self.slot.cell];
        let path = run_path(self.out, &cell.id, rep);
        progress.done += 1;
        let bar = &progress.bar;
        bar.set_position(progress.done as u64 - 1);
        bar.set_message(format!(
            "{} rep {rep}, {}",
            cell.label,
            eta::describe_left(progress.eta.left(progress.planned_left))
        ));
        let waited = Instant::now();
        let before = disturbed::before_run(&args.disturbance, devices);
        let before_ms = waited.elapsed().as_millis() as u64;
        let started = Instant::now();
        let flags = RunFlags {
            opts,
            warm: args.run_opts.warm,
            mem_limit: mem_limit(args, self.plan)?,
            // Without the bar (stderr not a terminal) the runs' own status lines show that a
            // long cell is alive, named by the cell.
            quiet: !bar.is_hidden(),
            remove_data: false,
            // A progress bar owns the terminal: a recipe's commands' output is kept beside
            // the run.
            output: CommandOutput {
                dir: std::path::absolute(path.with_extension("output")).ok(),
                ..CommandOutput::default()
            },
            capture: None,
            crash_states: self.plan.study.crash_states,
        };
        if bar.is_hidden() {
            let name = format!(
                "[{}/{}] {} rep {rep}",
                progress.done, progress.total, cell.label
            );
            crate::progress::name_status_lines(Some(name));
        }
        let Place::Stacks { data, log } = place_of(cell)? else {
            unreachable!("a study's cells run on stacks")
        };
        let at = Ready::Stacks { data, log };
        let mut record = work.execute(&at, &flags, Some(rep), interrupt)?;
        let planned = eta::planned_secs(work);
        progress.eta.finished(planned, started.elapsed());
        record.timing = Some(bakeoff_core::record::RunTiming {
            wall_ms: started.elapsed().as_millis() as u64,
            before_ms,
        });
        if record.status == RunStatus::Completed {
            record.disturbed = disturbed::judged(&record, before.as_ref(), &args.disturbance);
        }
        let redo = record.disturbed.is_some() && redone < args.disturbance.max_redo;
        if !redo {
            progress.planned_left = (progress.planned_left - planned).max(0.0);
        }
        if bar.is_hidden() {
            let left = match progress.planned_left > 0.0 {
                true => eta::describe_left(progress.eta.left(progress.planned_left)),
                false => "no runs left".into(),
            };
            report_progress(progress, cell, rep, &record, &left);
        }
        if let Some(d) = record.disturbed.as_ref() {
            say_disturbed(cell, rep, d, redo, redone, args.disturbance.max_redo);
        }
        if redo {
            let attempt = disturbed::attempts_kept(&path) + 1;
            let text = bakeoff_report::json::render(&record);
            write_atomically(&disturbed::attempt_path(&path, attempt), &text)?;
            return Ok(Outcome::Disturbed);
        }
        match store(&record, &path, cell, rep)? {
            true => Ok(Outcome::Stored),
            // interrupted: the run in flight is never recorded as a result
            false => Ok(Outcome::Interrupted),
        }
    }
}

/// Says on stderr that a run was disturbed and what happens next.
fn say_disturbed(
    cell: &Cell,
    rep: u32,
    d: &bakeoff_core::disturbance::Disturbance,
    redo: bool,
    redone: u32,
    max_redo: u32,
) {
    let next = if redo {
        format!(
            "kept beside the results and run again at the end of this round (redo {} of at most {max_redo})",
            redone + 1
        )
    } else {
        format!(
            "redone {redone} time(s) already: kept, marked disturbed and left out of the verdicts"
        )
    };
    eprintln!(
        "bakeoff: {} rep {rep} was disturbed: {}; {next}",
        cell.label,
        d.reason()
    );
}

/// Records a finished run: a completed one as a result, a failed one beside it (not a result,
/// and the study stops). False if the run was interrupted.
fn store(record: &RunRecord, path: &Path, cell: &Cell, rep: u32) -> Result<bool, Failure> {
    let text = bakeoff_report::json::render(record);
    match record.status {
        RunStatus::Completed => write_atomically(path, &text).map(|()| true),
        RunStatus::Interrupted => Ok(false),
        RunStatus::Failed => {
            write_atomically(&path.with_extension("failed.json"), &text)?;
            let error = record.error.as_deref().unwrap_or_default();
            Err(failure(
                Code::Io,
                format!("{} rep {rep}: {error}", cell.label),
            ))
        }
    }
}

fn report_progress(p: &Progress, cell: &Cell, rep: u32, r: &RunRecord, left: &str) {
    use bakeoff_core::units::{format_nanos, format_rate};
    let n = |v: Option<f64>| v.map_or("-".into(), format_rate);
    let rate = match (&r.ramp, r.summary.tps) {
        (Some(ramp), _) => format!("ramp: {}", bakeoff_report::ramp::headline(ramp)),
        (None, Some(_)) => format!("{} transactions/s", n(r.summary.tps)),
        (None, None) if !r.phases.is_empty() => format!(
            "{} phases in {}",
            r.phases.len(),
            format_nanos(r.measured_ns as f64)
        ),
        (None, None) => format!(
            "read {}/s write {}/s",
            n(r.summary.read_iops),
            n(r.summary.write_iops)
        ),
    };
    eprintln!(
        "[{}/{}] {} rep {rep}: {rate} ({:?}); {left}",
        p.done, p.total, cell.label, r.status,
    );
}
