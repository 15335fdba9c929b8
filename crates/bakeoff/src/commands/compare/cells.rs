//! The study a `compare` runs (from its flags or a study file) and the work of each of its
//! cells, resolved and checked through the run pipeline (`commands/pipeline`) as `run` does,
//! before anything runs.

use super::super::pipeline::{resolve, Place, Source, Work};
use crate::cli::{CompareArgs, StackOpts};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::ramp::{take_from, RampSpec, RAMP_KEY};
use bakeoff_core::settings::{echo, Origin, Settings};
use bakeoff_core::study::{parse_fraction, parse_study, Cell, Study, StudyWorkload, Sweep};
use bakeoff_stack::fs::missing_tool;
use bakeoff_stack::StackSpec;

/// The study described by the flags or the study file.
pub fn study_from(args: &CompareArgs) -> Result<Study, Failure> {
    let usage = |m: String| failure(Code::Usage, m);
    if let Some(text) = &args.ramp {
        RampSpec::parse(text).map_err(|m| usage(format!("--ramp: {m}")))?;
    }
    if let Some(path) = &args.study {
        if args.run_opts.mem_limit.is_some() {
            return Err(usage(format!(
                "--mem-limit: {} sets the study's memory limit (its mem_limit key): give it \
                 there, not on the command line",
                path.display()
            )));
        }
        if args.crash_states.is_some() {
            return Err(usage(format!(
                "--crash-states: {} says how many crash states its runs check (its \
                 crash_states key): give it there, not on the command line",
                path.display()
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| usage(format!("reading {}: {e}", path.display())))?;
        return parse_study(&text, &path.display().to_string())
            .map_err(|e| failure(Code::Usage, e));
    }
    let mut set = Vec::new();
    for arg in &args.set {
        set.extend(Settings::parse_set_pairs(arg).map_err(|e| failure(Code::Usage, e))?);
    }
    let sweeps = args
        .sweeps
        .iter()
        .map(|s| Sweep::parse(s).map_err(|m| usage(format!("--sweep {}: {m}", echo(s)))))
        .collect::<Result<_, _>>()?;
    Ok(Study {
        stacks: args.stacks.clone(),
        stack_defs: Default::default(),
        workloads: (args.workloads.iter())
            .chain(&args.replays)
            .map(|w| {
                let mut w = StudyWorkload::from_flags(w, set.clone());
                if let Some(text) = &args.ramp {
                    w.set.push((RAMP_KEY.into(), text.clone()));
                    w.origins.push(Origin::Flag("--ramp".into()));
                }
                w
            })
            .collect(),
        sweeps,
        repeat: args.repeat,
        baseline: args.baseline.clone(),
        min_effect: parse_fraction(args.report.min_effect.as_deref().unwrap_or("5%"))
            .map_err(usage)?,
        size: args.run_opts.stack.size.to_string(),
        mem_limit: args.run_opts.mem_limit.clone(),
        crash_states: args.crash_states,
    })
}

/// The resolved work of every cell, checked as a run checks it before anything runs (its
/// refusals, a database server's settings, a recipe's actions). `mem_limit` is the study's,
/// for the database servers' checks.
pub fn cell_plans(
    cells: &[Cell],
    opts: &StackOpts,
    mem_limit: Option<u64>,
    crash_states: Option<u32>,
) -> Result<Vec<Work>, Failure> {
    let mut plans = Vec::new();
    for cell in cells {
        for spec in std::iter::once(&cell.stack).chain(&cell.log_stack) {
            check_tools(spec)?;
        }
        let in_cell = |f: Failure| failure(f.code, format!("{}: {}", cell.label, f.error));
        let work = cell_work(cell).map_err(in_cell)?;
        let place = place_of(cell)?;
        work.check_work(&place, opts, mem_limit).map_err(in_cell)?;
        if let Some(states) = crash_states {
            crate::commands::dbrun::crash::check(&work, &place, opts, states).map_err(in_cell)?;
        }
        plans.push(work);
    }
    Ok(plans)
}

/// Where a cell runs: its stack and log stack.
pub fn place_of(cell: &Cell) -> Result<Place, Failure> {
    Place::of(Some(&cell.stack), cell.log_stack.as_deref(), None)
}

fn check_tools(spec: &str) -> Result<(), Failure> {
    let parsed = StackSpec::parse_arg(spec).map_err(|e| failure(Code::Usage, e))?;
    match missing_tool(parsed.kind) {
        Some((tool, package)) => Err(failure(
            Code::Environment,
            format!("{spec}: {tool} is missing (apt-get install {package})"),
        )),
        None => Ok(()),
    }
}

/// What a cell's workload names, planned with its settings, as a ramp if its `ramp` asks.
fn cell_work(cell: &Cell) -> Result<Work, Failure> {
    let mut settings = cell.settings();
    let ramp = take_from(&mut settings).map_err(|e| failure(Code::Usage, e))?;
    resolve(Source::Name(&cell.workload), &settings)?.ramped(ramp, "ramp")
}
