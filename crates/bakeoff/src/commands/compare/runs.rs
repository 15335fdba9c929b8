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

/// A study being run: what it runs, where its results go, and its progress.
pub struct StudyRun<'a> {
    pub args: &'a CompareArgs,
    pub opts: &'a StackOpts,
    pub plan: &'a StudyPlan,
    pub plans: &'a [Work],
    pub out: &'a Path,
    pub interrupt: &'a AtomicBool,
    devices: Vec<bakeoff_probe::DeviceInfo>,
    progress: Progress,
    /// When the study (this session of it) started.
    pub started: Instant,
}

impl<'a> StudyRun<'a> {
    /// A study about to run the plan's runs that `out` is missing.
    pub fn new(
        args: &'a CompareArgs,
        opts: &'a StackOpts,
        plan: &'a StudyPlan,
        plans: &'a [Work],
        out: &'a Path,
        interrupt: &'a AtomicBool,
    ) -> StudyRun<'a> {
        let missing = |s: &&RunSlot| !run_path(out, &plan.cells[s.cell].id, s.rep).exists();
        let progress = Progress {
            done: plan.order.len() - plan.order.iter().filter(missing).count(),
            total: plan.order.len(),
            eta: eta::Eta::default(),
            // What the runs not yet recorded are planned to take.
            planned_left: (plan.order.iter().filter(missing))
                .map(|s| eta::planned_secs(&plans[s.cell]))
                .sum(),
            // On a terminal a bar with the current cell, repetition and ETA; otherwise a line
            // per run.
            bar: crate::progress::bar(
                plan.order.len() as u64,
                "[{pos}/{len}] {wide_msg} {elapsed_precise}",
                false,
            ),
        };
        StudyRun {
            args,
            opts,
            plan,
            plans,
            out,
            interrupt,
            devices: disturbed::watched_devices(&plan.cells, opts),
            progress,
            started: Instant::now(),
        }
    }

    /// Whether Ctrl-C stopped the study.
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    /// Runs every run of the plan `out` is missing, round by round, until one fails or Ctrl-C.
    pub fn run_planned(&mut self) -> Result<(), Failure> {
        let plan = self.plan;
        let mut order = plan.order.iter().peekable();
        while let Some(first) = order.next() {
            let mut round = vec![first];
            while let Some(slot) = order.next_if(|s| s.rep == first.rep) {
                round.push(slot);
            }
            self.run_round(&round)?;
            if self.interrupted() {
                break;
            }
        }
        Ok(())
    }

    /// Adds `runs` more runs (an adaptive round) to the progress.
    pub fn plan_more(&mut self, slots: &[RunSlot]) {
        self.progress.total += slots.len();
        self.progress.bar.set_length(self.progress.total as u64);
        self.progress.planned_left += (slots.iter())
            .map(|s| eta::planned_secs(&self.plans[s.cell]))
            .sum::<f64>();
    }

    /// Seconds a round of `slots` is expected to take, by the pace of the runs so far.
    pub fn round_secs(&self, slots: &[RunSlot]) -> f64 {
        let planned: f64 = (slots.iter())
            .map(|s| eta::planned_secs(&self.plans[s.cell]))
            .sum();
        self.progress.eta.left(planned)
    }

    /// Runs one round's slots that `out` is missing, then its disturbed runs again (up to
    /// `--max-redo` times each), until one fails or Ctrl-C.
    pub fn run_round(&mut self, slots: &[&RunSlot]) -> Result<(), Failure> {
        let (plan, out) = (self.plan, self.out);
        let path = |s: &RunSlot| run_path(out, &plan.cells[s.cell].id, s.rep);
        // A resumed study counts the disturbed attempts it kept before.
        let mut round: VecDeque<(&RunSlot, u32)> = (slots.iter())
            .filter(|s| !path(s).exists())
            .map(|s| (*s, disturbed::attempts_kept(&path(s))))
            .collect();
        while let Some((slot, redone)) = round.pop_front() {
            if self.interrupted() {
                break;
            }
            let run = Slot {
                plan,
                plans: self.plans,
                out,
                slot,
            };
            let (args, opts) = (self.args, self.opts);
            let outcome = run.once(
                args,
                opts,
                &self.devices,
                &mut self.progress,
                redone,
                self.interrupt,
            )?;
            match outcome {
                Outcome::Stored => {}
                Outcome::Disturbed => {
                    self.progress.total += 1;
                    self.progress.bar.set_length(self.progress.total as u64);
                    round.push_back((slot, redone + 1));
                }
                Outcome::Interrupted => break,
            }
        }
        Ok(())
    }

    /// Whether a round of `slots` would end within `--budget` of the study's start.
    pub fn fits_budget(&self, slots: &[RunSlot]) -> bool {
        let Some(budget) = self.args.adaptive.budget else {
            return true;
        };
        self.started.elapsed().as_secs_f64() + self.round_secs(slots) <= budget.as_secs_f64()
    }

    /// Clears the progress bar.
    pub fn finish(&self) {
        self.progress.bar.finish_and_clear();
    }
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
            let limit = args.disturbance.disturbance_limit;
            record.disturbed = bakeoff_core::disturbance::judge(&record, before.as_ref(), limit);
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
