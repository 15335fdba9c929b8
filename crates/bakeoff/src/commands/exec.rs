//! `bakeoff exec -- CMD ARGS` (one command, as a one-phase recipe) and `bakeoff run RECIPE`:
//! everything checked before anything is built, then the phases run on the stack (or on a
//! `--target` directory, run as the stack `dir=DIR`: nothing built, nothing removed).

use super::exports;
use super::measure::{interrupt_flag, status_code};
use super::on_stack::StackRun;
use super::phases::{self, CommandOutput};
use super::preflight;
use crate::cli::{ExecArgs, RunArgs, StackOpts};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::recipe::{
    builtin, check_cwd, check_parallel, PhaseDef, PhaseWork, Recipe, RecipePlan,
};
use bakeoff_core::units::parse_duration;
use bakeoff_report::Exporter;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where and how phases run: what `exec` and `run` share.
struct Placement<'a> {
    stack: Option<&'a str>,
    target: Option<&'a Path>,
    opts: &'a StackOpts,
    warm: bool,
    mem_limit: Option<&'a str>,
    export: &'a [(&'static Exporter, PathBuf)],
    /// `--output DIR`.
    output: Option<&'a Path>,
    dry_run: bool,
    quiet: bool,
}

/// `bakeoff exec`.
pub fn exec(args: ExecArgs) -> Result<Code, Failure> {
    args.status.apply();
    let phase = exec_phase(&args)?;
    let placement = Placement {
        stack: args.stack.as_deref(),
        target: args.target.as_deref(),
        opts: &args.stack_opts,
        warm: args.warm,
        mem_limit: args.mem_limit.as_deref(),
        export: &args.export.requested,
        output: args.output.as_deref(),
        dry_run: args.dry_run,
        quiet: args.quiet,
    };
    start(&placement, &RecipePlan::exec(phase))
}

/// The one phase of `bakeoff exec`, its flags checked.
fn exec_phase(args: &ExecArgs) -> Result<PhaseDef, Failure> {
    let usage = |flag: &str, m: String| failure(Code::Usage, format!("{flag}: {m}"));
    let parallel = check_parallel(i64::from(args.parallel)).map_err(|m| usage("--parallel", m))?;
    let duration = |flag: &str, text: &str| parse_duration(text).map_err(|m| usage(flag, m));
    let stagger = match &args.stagger {
        Some(_) if parallel < 2 => {
            let m = "needs --parallel 2 or more (it is the time between instances)";
            return Err(usage("--stagger", m.into()));
        }
        Some(text) => duration("--stagger", text)?,
        None => Duration::ZERO,
    };
    let timeout = match &args.timeout {
        Some(text) => match duration("--timeout", text)? {
            d if d.is_zero() => return Err(usage("--timeout", "must be above 0".into())),
            d => Some(d),
        },
        None => None,
    };
    if let Some(cwd) = &args.cwd {
        check_cwd(cwd).map_err(|m| usage("--cwd", m))?;
    }
    Ok(PhaseDef {
        name: "exec".into(),
        work: PhaseWork::Argv(args.command.clone()),
        parallel,
        stagger,
        cwd: args.cwd.clone(),
        env: Vec::new(),
        timeout,
    })
}

/// The recipe `run` names (`--recipe FILE`, or a built-in's name), if it names one.
pub fn recipe_of(args: &RunArgs) -> Result<Option<Recipe>, Failure> {
    if let Some(path) = &args.recipe {
        return read_recipe(path).map(Some);
    }
    Ok(args.workload.as_deref().and_then(builtin))
}

/// Reads and checks a recipe file.
pub fn read_recipe(path: &Path) -> Result<Recipe, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        failure(
            Code::Usage,
            format!("reading recipe file {}: {e}", path.display()),
        )
    })?;
    let stem = path
        .file_stem()
        .map_or("recipe".into(), |s| s.to_string_lossy().into_owned());
    Recipe::parse(&stem, &text, &path.display().to_string()).map_err(|e| failure(Code::Usage, e))
}

/// `bakeoff run RECIPE` / `--recipe FILE`.
pub fn run_recipe(args: &RunArgs, recipe: &Recipe) -> Result<Code, Failure> {
    if args.log_stack.is_some() {
        let m = "--log-stack: a recipe's commands choose their own paths on the one stack";
        return Err(failure(Code::Usage, m));
    }
    let plan = recipe
        .plan(&super::run::parse_sets(&args.set)?)
        .map_err(|e| failure(Code::Usage, e))?;
    let placement = Placement {
        stack: args.stack.as_deref(),
        target: args.target.as_deref(),
        opts: &args.stack_opts,
        warm: args.warm,
        mem_limit: args.mem_limit.as_deref(),
        export: &args.export.requested,
        output: args.output.as_deref(),
        dry_run: args.dry_run,
        quiet: args.quiet,
    };
    start(&placement, &plan)
}

/// Checks everything, then runs `plan` (or says a dry run is ok).
fn start(at: &Placement, plan: &RecipePlan) -> Result<Code, Failure> {
    let mem_limit = at
        .mem_limit
        .map(|m| preflight::size("--mem-limit", m))
        .transpose()?;
    let spec = match (at.stack, at.target) {
        (Some(spec), _) => spec.to_string(),
        (None, Some(dir)) if dir.is_dir() => format!("dir={}", dir.display()),
        (None, Some(dir)) => {
            let m = format!(
                "--target {}: commands need an existing directory",
                dir.display()
            );
            return Err(failure(Code::Environment, m));
        }
        (None, None) => return Err(failure(Code::Usage, "give --stack SPEC or --target DIR")),
    };
    let parsed = preflight::spec(&spec)?;
    if !parsed.kind.holds_files() {
        let m = "commands need a file system to run in: a raw stack holds no files";
        return Err(failure(Code::Usage, m));
    }
    preflight::stack(&parsed, at.opts, 0)?;
    phases::check(plan)?;
    let exports = exports::open(at.export)?;
    let output = command_output(at)?;
    if at.dry_run {
        let text = bakeoff_report::plan_text::render_recipe(plan);
        let json = bakeoff_report::plan_text::render_json(plan);
        exports::deliver_plan(&text, exports, &json)?;
        eprintln!("dry run: ok, the run would start");
        return Ok(Code::Ok);
    }
    let interrupt = interrupt_flag()?;
    let run = StackRun {
        spec: &spec,
        log_spec: None,
        opts: at.opts,
        warm: at.warm,
        mem_limit,
        quiet: at.quiet,
    };
    let record = phases::run_recipe(&run, plan, &output, &interrupt)?;
    super::run::report(exports, &record)?;
    match phases::command_failed(&record) {
        true => Ok(Code::CommandFailed),
        false => Ok(status_code(&record)),
    }
}

/// `--output DIR` belongs to a recipe: a workload runs no commands.
pub fn check_output_flag(args: &RunArgs) -> Result<(), Failure> {
    let recipe = args.recipe.is_some() || args.workload.as_deref().and_then(builtin).is_some();
    match (&args.output, recipe) {
        (Some(dir), false) => Err(failure(
            Code::Usage,
            format!(
                "--output {}: keeps the output of a recipe's commands; this workload runs none",
                dir.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// Where the commands write: through to bakeoff's own streams (their standard output to its
/// standard error when an export takes its standard output), and into `--output DIR`, made
/// now (not in a dry run, which only checks that it can be).
fn command_output(at: &Placement) -> Result<CommandOutput, Failure> {
    let stdout_taken = at.export.iter().any(|(_, p)| p == Path::new("-"));
    let mut out = CommandOutput {
        pass_through: true,
        stdout_to_stderr: stdout_taken,
        dir: None,
    };
    let Some(dir) = at.output else {
        return Ok(out);
    };
    let bad = |m: String| failure(Code::Usage, format!("--output {}: {m}", dir.display()));
    if dir.exists() && !dir.is_dir() {
        return Err(bad("is not a directory".into()));
    }
    if at.dry_run {
        let parent = dir.ancestors().skip(1).find(|a| a.exists());
        return match parent {
            Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => {
                Err(bad(format!("{} is not a directory", p.display())))
            }
            _ => Ok(out),
        };
    }
    std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot be made: {e}")))?;
    out.dir = Some(std::fs::canonicalize(dir).map_err(|e| bad(e.to_string()))?);
    Ok(out)
}
