//! What a name is: a database workload, a recipe (built in, or a file of `[[phase]]` tables) or
//! an I/O workload (built in, or a workload file), planned with its settings; and a ramp asked
//! of it, checked once for every command.

use super::Work;
use crate::cli::RunArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::dbplan::{is_db_workload, plan_db};
use bakeoff_core::ramp::point::check_rampable;
use bakeoff_core::ramp::RampSpec;
use bakeoff_core::recipe::{is_recipe_text, Recipe};
use bakeoff_core::settings::Settings;
use bakeoff_core::trace::plan::plan_replay;
use bakeoff_core::workload::{builtin, Workload};
use std::path::Path;

/// Where the work comes from.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// A name on the command line or in a study: a built-in workload, database or recipe, or
    /// the path of a workload or recipe file.
    Name(&'a str),
    /// `--job FILE`: a workload file.
    Job(&'a Path),
    /// `--recipe FILE`: a recipe file.
    Recipe(&'a Path),
    /// `--replay FILE`: a trace of `bakeoff capture`, replayed.
    Replay(&'a Path),
}

/// What `source` names, planned with `settings`.
pub fn resolve(source: Source, settings: &Settings) -> Result<Work, Failure> {
    let usage = |e: &dyn std::fmt::Display| failure(Code::Usage, e.to_string());
    let recipe = match source {
        Source::Replay(path) => return replay(path, settings),
        Source::Name(name) if is_trace_file(Path::new(name)) => {
            return replay(Path::new(name), settings)
        }
        Source::Name(name) if is_db_workload(name) => {
            let plan = plan_db(name, settings).map_err(|e| usage(&e))?;
            return Ok(Work::Db(Box::new(plan)));
        }
        Source::Name(name) => recipe_named(name)?,
        Source::Recipe(path) => Some(read_recipe(path)?),
        Source::Job(_) => None,
    };
    if let Some(recipe) = recipe {
        let plan = recipe.plan(settings).map_err(|e| usage(&e))?;
        return Ok(Work::Recipe(Box::new(plan)));
    }
    let workload = match source {
        Source::Job(path) => read_workload(path)?,
        // A built-in name, else a workload file; neither: the built-ins are what to list.
        Source::Name(name) => match builtin(name) {
            Some(w) => w,
            None if Path::new(name).exists() => read_workload(Path::new(name))?,
            None => {
                return Err(failure(Code::Usage, bakeoff_core::catalog::unknown(name)));
            }
        },
        Source::Recipe(_) | Source::Replay(_) => unreachable!("resolved above"),
    };
    let plan = workload.plan(settings).map_err(|e| usage(&e))?;
    Ok(Work::Io(plan))
}

impl Work {
    /// The work as a load ramp, if `ramp` is given (`flag` names where it was asked for, in
    /// the message of a refusal): only I/O and file workloads are paced by a ramp.
    pub fn ramped(self, ramp: Option<RampSpec>, flag: &str) -> Result<Work, Failure> {
        let Some(ramp) = ramp else { return Ok(self) };
        let refuse = |m: String| Err(failure(Code::Usage, m));
        match self {
            Work::Io(plan) => match check_rampable(&plan) {
                Ok(()) => Ok(Work::Ramp(plan, ramp)),
                Err(m) => refuse(format!("{flag}: {m}")),
            },
            Work::Db(p) => refuse(format!(
                "{flag} paces I/O and file workloads; {} has its own rate key (rate_tps)",
                p.workload
            )),
            Work::Recipe(p) => refuse(format!(
                "{flag} paces I/O and file workloads; the recipe {} runs commands",
                p.recipe
            )),
            Work::Ramp(..) => refuse(format!("{flag}: the work is a ramp already")),
        }
    }
}

/// A trace of `bakeoff capture` (its first bytes say so), whatever its name.
fn is_trace_file(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    let read =
        std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic));
    read.is_ok() && magic == bakeoff_core::trace::model::MAGIC
}

/// A trace as a workload: read (exit 2 naming what is wrong with the file), planned with the
/// replay's keys, and decoded once into the engine's cache before anything is built, so its
/// memory is not charged to the run's memory limit.
fn replay(path: &Path, settings: &Settings) -> Result<Work, Failure> {
    let trace = crate::commands::trace::read(path)?;
    let name = (path.file_stem()).map_or("replay".into(), |s| s.to_string_lossy().into_owned());
    let plan = plan_replay(&trace, &name, settings).map_err(|e| failure(Code::Usage, e))?;
    if let Some(replay_plan) = &plan.replay {
        bakeoff_engine::replay::load(trace, replay_plan);
    }
    Ok(Work::Io(plan))
}

/// The recipe `name` names: a built-in recipe, or a file with `[[phase]]` tables.
fn recipe_named(name: &str) -> Result<Option<Recipe>, Failure> {
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

/// The text of a file the user named, or a usage error naming it.
fn read(path: &Path, what: &str) -> Result<(String, String), Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        failure(
            Code::Usage,
            format!("reading {what} file {}: {e}", path.display()),
        )
    })?;
    let stem = path
        .file_stem()
        .map_or(what.into(), |s| s.to_string_lossy().into_owned());
    Ok((stem, text))
}

/// Reads and checks a workload file.
fn read_workload(path: &Path) -> Result<Workload, Failure> {
    let (stem, text) = read(path, "workload")?;
    Workload::parse(&stem, &text, &path.display().to_string()).map_err(|e| failure(Code::Usage, e))
}

/// Reads and checks a recipe file.
fn read_recipe(path: &Path) -> Result<Recipe, Failure> {
    let (stem, text) = read(path, "recipe")?;
    Recipe::parse(&stem, &text, &path.display().to_string()).map_err(|e| failure(Code::Usage, e))
}

/// The workload named on the command line or read from `--job` (`bakeoff workloads show`).
pub fn load_workload(name: Option<&str>, job: Option<&Path>) -> Result<Workload, Failure> {
    if let Some(path) = job {
        return read_workload(path);
    }
    let name = name.unwrap_or_default();
    builtin(name).ok_or_else(|| failure(Code::Usage, bakeoff_core::catalog::unknown(name)))
}

/// Merges every `--set` argument in order.
pub fn parse_sets(sets: &[String]) -> Result<Settings, Failure> {
    let mut all = Settings::default();
    for s in sets {
        all.merge(&Settings::parse_set(s).map_err(|e| failure(Code::Usage, e))?);
    }
    Ok(all)
}

/// What the command line names, planned with its `--set`s, as a ramp if `--ramp` asks.
pub fn work_of(args: &RunArgs) -> Result<Work, Failure> {
    let source = match (&args.replay, &args.recipe, &args.job, &args.workload) {
        (Some(path), ..) => Source::Replay(path),
        (None, Some(path), _, _) => Source::Recipe(path),
        (None, None, Some(path), _) => Source::Job(path),
        (None, None, None, name) => Source::Name(name.as_deref().unwrap_or_default()),
    };
    let work = resolve(source, &parse_sets(&args.set)?)?;
    work.ramped(ramp_of(args.ramp.as_deref())?, "--ramp")
}

/// The `--ramp` spec, parsed.
fn ramp_of(text: Option<&str>) -> Result<Option<RampSpec>, Failure> {
    let Some(text) = text else { return Ok(None) };
    let spec = RampSpec::parse(text).map_err(|m| failure(Code::Usage, format!("--ramp: {m}")))?;
    Ok(Some(spec))
}
