//! A checked run: what its dry run prints, the run on its stacks or target, and its report.

use super::{Ready, Work};
use crate::cli::StackOpts;
use crate::commands::dbrun::{cpus, run_db};
use crate::commands::exports::{self, Export};
use crate::commands::measure::measure;
use crate::commands::on_stack::{run_on_stack_ramped, StackRun};
use crate::commands::phases::{run_recipe, CommandOutput};
use crate::exit::{stack_failure, Failure};
use bakeoff_core::ramp::RampSpec;
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::study::for_repetition;
use bakeoff_core::Plan;
use bakeoff_engine::Target;
use bakeoff_report::plan_text;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// How a run runs, besides where: the flags every command shares, checked.
pub struct RunFlags<'a> {
    /// Stack options (`--size`, `--images`, `--device` ...).
    pub opts: &'a StackOpts,
    /// `--warm`: no cache drop before the run.
    pub warm: bool,
    /// `--mem-limit` in bytes.
    pub mem_limit: Option<u64>,
    /// No progress output.
    pub quiet: bool,
    /// `--remove-data`: remove the dataset a run laid out in a target directory.
    pub remove_data: bool,
    /// Where a recipe's commands write.
    pub output: CommandOutput,
    /// `run --capture FILE`: trace the database's file-system calls into FILE.
    pub capture: Option<&'a Path>,
    /// `run --crash-states N` (checked: a TPC-C run on a loop-backed file system).
    pub crash_states: Option<u32>,
}

impl Work {
    /// Prints the resolved plan (as JSON into an export that asks for it) and that the dry run
    /// is ok: everything was checked and the run would start.
    pub fn dry_run(&self, has_log: bool, exports: Vec<Export>) -> Result<(), Failure> {
        let (text, json) = match self {
            Work::Io(p) | Work::Ramp(p, _) => (plan_text::render(p), plan_text::render_json(p)),
            Work::Db(p) => (
                plan_text::render_db(p, has_log, cpus()),
                plan_text::render_json(p.as_ref()),
            ),
            Work::Recipe(p) => (
                plan_text::render_recipe(p),
                plan_text::render_json(p.as_ref()),
            ),
        };
        exports::deliver_plan(&text, exports, &json)?;
        if let Work::Ramp(_, r) = self {
            eprintln!(
                "ramp: {r}: at most {} points, up to {:.0} min",
                r.max_points + r.bisect,
                r.longest().as_secs_f64() / 60.0
            );
        }
        eprintln!("dry run: ok, the run would start");
        Ok(())
    }

    /// Runs the work at `at` (repetition `rep` of a study's cell, if given) and returns its
    /// record; the stacks it built are torn down on every path.
    pub fn execute(
        &self,
        at: &Ready,
        flags: &RunFlags,
        rep: Option<u32>,
        interrupt: &AtomicBool,
    ) -> Result<RunRecord, Failure> {
        let io_plan = |p: &Plan| rep.map_or_else(|| p.clone(), |r| for_repetition(p, r));
        let (data, log) = match at {
            Ready::Stacks { data, log } => (data, log.as_ref()),
            Ready::Target(target, _claim) => {
                let (plan, ramp) = match self {
                    Work::Io(p) => (io_plan(p), None),
                    Work::Ramp(p, r) => (io_plan(p), Some(r)),
                    _ => unreachable!("check_place runs databases and recipes on a dir= stack"),
                };
                return run_on_target(target, &plan, ramp, flags, interrupt);
            }
        };
        let run = StackRun {
            spec: data,
            log_spec: log,
            opts: flags.opts,
            warm: flags.warm,
            mem_limit: flags.mem_limit,
            quiet: flags.quiet,
            capture: flags.capture,
            crash_states: flags.crash_states,
        };
        match self {
            Work::Io(p) => run_on_stack_ramped(&run, &io_plan(p), None, interrupt),
            Work::Ramp(p, r) => run_on_stack_ramped(&run, &io_plan(p), Some(r), interrupt),
            Work::Db(p) => run_db(&run, p, interrupt),
            Work::Recipe(p) => run_recipe(&run, p, &flags.output, interrupt),
        }
    }
}

/// Runs an I/O or file workload on a directory or loop device the user gave.
fn run_on_target(
    target: &Target,
    plan: &Plan,
    ramp: Option<&RampSpec>,
    flags: &RunFlags,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    let cold = starts_cold(flags.warm, target.directory(), true);
    let mut prepare = || {
        if cold {
            bakeoff_stack::stack::drop_caches().map_err(stack_failure)?;
        }
        Ok(())
    };
    let mut record = measure(plan, ramp, target, interrupt, flags.quiet, &mut prepare);
    if let Ok(r) = &mut record {
        r.cold = Some(cold);
        r.findings = bakeoff_core::findings::run_findings(r);
    }
    if flags.remove_data {
        if let Target::Directory(dir) = target {
            bakeoff_engine::layout::remove_dataset(dir);
        }
    }
    record
}

/// Whether a run drops caches before it starts: not under `--warm`, not without root (a
/// warning when `tell`), and not when the target directory is on `tmpfs` or `ramfs` (a note
/// when `tell`): their files never leave memory, and dropping caches would only move the
/// target's pages to the inactive list, so that the run measured their re-activation.
pub fn starts_cold(warm: bool, dir: Option<&std::path::Path>, tell: bool) -> bool {
    if warm {
        return false;
    }
    if !rustix::process::geteuid().is_root() {
        if tell {
            eprintln!(
                "bakeoff: warning: not root, so caches cannot be dropped: this run starts warm"
            );
        }
        return false;
    }
    if let Some(fs) = dir.and_then(bakeoff_probe::in_memory_filesystem) {
        if tell {
            eprintln!(
                "bakeoff: note: the target is on {fs}, whose files live in memory: caches are \
                 not dropped (the run starts warm; --warm says so without this note)"
            );
        }
        return false;
    }
    true
}

/// Prints the summary and writes the exports.
pub fn report(exports: Vec<Export>, record: &RunRecord) -> Result<(), Failure> {
    let summary = bakeoff_report::terminal::render(record);
    exports::deliver(&summary, exports, |e| {
        e.run.map_or_else(String::new, |render| render(record))
    })?;
    // The summary shows the error in context; stderr gets it with the prefix of every failure.
    if let (RunStatus::Failed, Some(e)) = (&record.status, &record.error) {
        eprintln!("bakeoff: error: the run failed, its figures are not results: {e}");
    }
    Ok(())
}
