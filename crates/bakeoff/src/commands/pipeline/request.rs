//! One run as `run` and `exec` ask for it: the work, where, and the flags, through every step
//! of the pipeline in order: the work's refusals, the outputs, the place, the dry run or the
//! run, the report and the exit code.

use super::{report, Place, RunFlags, Work};
use crate::cli::StackOpts;
use crate::commands::exports;
use crate::commands::measure::{interrupt_flag, status_code};
use crate::commands::phases::{self, CommandOutput};
use crate::commands::preflight;
use crate::exit::{Code, Failure};
use bakeoff_report::Exporter;
use std::path::{Path, PathBuf};

/// A run's work, place and flags as the command line gave them.
pub struct Request<'a> {
    /// Where: the stacks or the target.
    pub place: Place,
    /// Stack options.
    pub opts: &'a StackOpts,
    /// `--mem-limit` as written.
    pub mem_limit: Option<&'a str>,
    /// The exports asked for.
    pub export: &'a [(&'static Exporter, PathBuf)],
    /// `--output DIR` (a recipe's commands' output).
    pub output: Option<&'a Path>,
    /// Check, print the plan, touch nothing.
    pub dry_run: bool,
    /// No cache drop before the run.
    pub warm: bool,
    /// No progress output.
    pub quiet: bool,
    /// Remove a target directory's dataset after the run.
    pub remove_data: bool,
    /// `--capture FILE`: trace the database's file-system calls into FILE.
    pub capture: Option<&'a Path>,
    /// `--crash-states N`: record the window's writes and check N crash states.
    pub crash_states: Option<u32>,
}

impl Work {
    /// Checks everything, then runs (or says a dry run is ok), reports, and gives the exit
    /// code: a recipe whose command failed is [`Code::CommandFailed`].
    pub fn run(&self, req: Request) -> Result<Code, Failure> {
        let mem_limit = (req.mem_limit)
            .map(|m| preflight::size("--mem-limit", m))
            .transpose()?;
        self.check_work(&req.place, req.opts, mem_limit)?;
        if let Some(states) = req.crash_states {
            crate::commands::dbrun::crash::check(self, &req.place, req.opts, states)?;
        }
        let exports = exports::open(req.export)?;
        let has_log = req.place.has_log();
        let ready = self.check_place(req.place, req.opts)?;
        let output = match self {
            Work::Recipe(_) => CommandOutput::for_run(req.output, req.export, req.dry_run)?,
            _ => CommandOutput::default(),
        };
        if req.dry_run {
            if let Some(states) = req.crash_states {
                eprintln!(
                    "crash states: {states}, drawn from a log of the stack's writes and checked \
                     after the run (docs/durability.md); the run's figures include recording"
                );
            }
            self.dry_run(has_log, exports)?;
            return Ok(Code::Ok);
        }
        let interrupt = interrupt_flag()?;
        let flags = RunFlags {
            opts: req.opts,
            warm: req.warm,
            mem_limit,
            quiet: req.quiet,
            remove_data: req.remove_data,
            output,
            capture: req.capture,
            crash_states: req.crash_states,
        };
        let record = self.execute(&ready, &flags, None, &interrupt)?;
        // A device's claim is held until the run has ended.
        drop(ready);
        report(exports, &record)?;
        match self {
            Work::Recipe(_) if phases::command_failed(&record) => Ok(Code::CommandFailed),
            _ => Ok(status_code(&record)),
        }
    }
}
