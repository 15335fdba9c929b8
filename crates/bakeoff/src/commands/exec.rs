//! `bakeoff exec -- CMD ARGS`: one command, as a one-phase recipe, through the run pipeline
//! (`commands/pipeline`) as `bakeoff run RECIPE` goes: everything checked before anything is
//! built, then the phase runs on the stack (or on a `--target` directory, run as the stack
//! `dir=DIR`: nothing built, nothing removed).

use super::pipeline::{Place, Request, Work};
use crate::cli::ExecArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::recipe::{check_cwd, check_parallel, PhaseDef, PhaseWork, RecipePlan};
use bakeoff_core::units::parse_duration;
use std::time::Duration;

/// `bakeoff exec`.
pub fn exec(args: ExecArgs) -> Result<Code, Failure> {
    args.run_opts.status.apply();
    let work = Work::Recipe(Box::new(RecipePlan::exec(exec_phase(&args)?)));
    work.run(Request {
        place: Place::of(args.stack.as_deref(), None, args.target.as_deref())?,
        opts: &args.run_opts.stack,
        mem_limit: args.run_opts.mem_limit.as_deref(),
        export: &args.export.requested,
        output: args.output.as_deref(),
        dry_run: args.run_opts.dry_run,
        warm: args.run_opts.warm,
        quiet: args.quiet,
        remove_data: false,
        capture: None,
        crash_states: None,
    })
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
