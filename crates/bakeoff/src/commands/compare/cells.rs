//! The study a `compare` runs (from its flags or a study file) and the plan of each of its
//! cells: an I/O workload's plan, or a database workload's (tpcc, pgbench), all validated
//! before anything runs.

use super::super::dbrun;
use super::super::exec::read_recipe;
use super::super::phases;
use super::super::run::load_workload;
use crate::cli::CompareArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::dbplan::{is_db_workload, plan_db, DbPlan};
use bakeoff_core::ramp::{take_from, RampSpec, RAMP_KEY};
use bakeoff_core::recipe::{is_recipe_text, Recipe, RecipePlan};
use bakeoff_core::settings::{echo, Origin, Settings};
use bakeoff_core::steady::expected_warmup as warmup;
use bakeoff_core::study::{parse_fraction, parse_study, Cell, Study, StudyWorkload, Sweep};
use bakeoff_core::Plan;
use bakeoff_engine::placement::log_filesets;
use bakeoff_stack::fs::missing_tool;
use bakeoff_stack::StackSpec;
use std::path::Path;
use std::time::Duration;

/// What one cell runs.
pub enum CellPlan {
    /// An I/O workload (slob, oltp, a workload file ...).
    Io(Plan),
    /// A load ramp of an I/O workload.
    Ramp(Plan, RampSpec),
    /// A real database (tpcc, pgbench).
    Db(Box<DbPlan>),
    /// A recipe: phases of commands or actions.
    Recipe(Box<RecipePlan>),
}

impl CellPlan {
    /// Bytes the data takes on the stack, for the room checks.
    pub fn dataset_bytes(&self) -> u64 {
        match self {
            CellPlan::Io(p) | CellPlan::Ramp(p, _) => p.dataset_bytes(),
            CellPlan::Db(p) => p.dataset_bytes(),
            CellPlan::Recipe(_) => 0,
        }
    }

    /// Warm-up plus measured time (a recipe's phases take what they take: not known); an
    /// automatic warm-up as a steady run takes it.
    pub fn timed(&self) -> Duration {
        match self {
            CellPlan::Io(p) => warmup(p.ramp_time, p.ramp_auto) + p.runtime,
            // The longest it can take: every point, each after the workload's warm-up.
            CellPlan::Ramp(p, r) => {
                r.longest() + warmup(p.ramp_time, p.ramp_auto) * (r.max_points + r.bisect)
            }
            CellPlan::Db(p) => warmup(p.ramp_time, p.ramp_auto) + p.runtime,
            CellPlan::Recipe(_) => Duration::ZERO,
        }
    }

    /// Seconds a run takes besides its timed part: building, laying out or loading, tearing
    /// down (a database's load is the larger part of its run).
    pub fn overhead_secs(&self) -> f64 {
        match self {
            CellPlan::Io(_) | CellPlan::Ramp(..) | CellPlan::Recipe(_) => 8.0,
            CellPlan::Db(p) => 15.0 + p.dataset_bytes() as f64 / (4 << 20) as f64,
        }
    }
}

/// The study described by the flags or the study file.
pub fn study_from(args: &CompareArgs) -> Result<Study, Failure> {
    let usage = |m: String| failure(Code::Usage, m);
    if let Some(text) = &args.ramp {
        RampSpec::parse(text).map_err(|m| usage(format!("--ramp: {m}")))?;
    }
    if let Some(path) = &args.study {
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
        workloads: args
            .workloads
            .iter()
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
        size: args.stack_opts.size.to_string(),
        mem_limit: args.mem_limit.clone(),
    })
}

/// The resolved plan of every cell: every workload and stack is validated before anything runs.
/// `mem_limit` is the study's, for the database servers' checks.
pub fn cell_plans(cells: &[Cell], mem_limit: Option<u64>) -> Result<Vec<CellPlan>, Failure> {
    let mut plans = Vec::new();
    for cell in cells {
        for spec in std::iter::once(&cell.stack).chain(&cell.log_stack) {
            check_tools(spec)?;
        }
        plans.push(cell_plan(cell, mem_limit)?);
    }
    Ok(plans)
}

/// The recipe a study names as a workload: a built-in recipe, or a file with `[[phase]]` tables.
fn recipe_of(name: &str) -> Result<Option<Recipe>, Failure> {
    if let Some(r) = bakeoff_core::recipe::builtin(name) {
        return Ok(Some(r));
    }
    let path = Path::new(name);
    let is_recipe = std::fs::read_to_string(path).is_ok_and(|t| is_recipe_text(&t));
    match is_recipe {
        true => read_recipe(path).map(Some),
        false => Ok(None),
    }
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

fn cell_plan(cell: &Cell, mem_limit: Option<u64>) -> Result<CellPlan, Failure> {
    let in_cell = |e: &dyn std::fmt::Display| format!("{}: {e}", cell.label);
    let mut settings = cell.settings();
    let ramp = take_from(&mut settings).map_err(|e| failure(Code::Usage, in_cell(&e)))?;
    if is_db_workload(&cell.workload) {
        if ramp.is_some() {
            let message = "a ramp paces I/O and file workloads; a database has rate_tps";
            return Err(failure(Code::Usage, in_cell(&message)));
        }
        let plan =
            plan_db(&cell.workload, &settings).map_err(|e| failure(Code::Usage, in_cell(&e)))?;
        dbrun::check_log_stack(&plan, cell.log_stack.is_some())
            .map_err(|f| failure(f.code, in_cell(&f.error)))?;
        // The settings are checked by the server's own binaries, before any stack is built.
        dbrun::check_settings(&plan, mem_limit).map_err(|f| failure(f.code, in_cell(&f.error)))?;
        return Ok(CellPlan::Db(Box::new(plan)));
    }
    if let Some(recipe) = recipe_of(&cell.workload)? {
        let plan = recipe
            .plan(&cell.settings())
            .map_err(|e| failure(Code::Usage, in_cell(&e)))?;
        phases::check(&plan).map_err(|f| failure(f.code, in_cell(&f.error)))?;
        let raw = StackSpec::parse_arg(&cell.stack).is_ok_and(|s| !s.kind.holds_files());
        if cell.log_stack.is_some() || raw {
            let message = "a recipe runs its commands in one stack's file system \
                           (no log stack, no raw stack)";
            return Err(failure(Code::Usage, in_cell(&message)));
        }
        return Ok(CellPlan::Recipe(Box::new(plan)));
    }
    // A built-in name, else a workload file; neither: the built-ins are what to list.
    let workload = match load_workload(Some(&cell.workload), None) {
        Ok(w) => w,
        Err(unknown) if !Path::new(&cell.workload).exists() => return Err(unknown),
        Err(_) => load_workload(None, Some(Path::new(&cell.workload)))?,
    };
    let plan = workload
        .plan(&settings)
        .map_err(|e| failure(Code::Usage, in_cell(&e)))?;
    if cell.log_stack.is_some() && log_filesets(&plan).is_empty() {
        let message = "a log stack holds a database's WAL or a log writer's redo; \
                       this workload writes no log";
        return Err(failure(Code::Usage, in_cell(&message)));
    }
    match ramp {
        Some(r) => {
            bakeoff_core::ramp::point::check_rampable(&plan)
                .map_err(|m| failure(Code::Usage, in_cell(&format!("ramp: {m}"))))?;
            Ok(CellPlan::Ramp(plan, r))
        }
        None => Ok(CellPlan::Io(plan)),
    }
}
