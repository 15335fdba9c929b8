//! `bakeoff run`: one workload, database or recipe on one stack or target, through the
//! pipeline (`commands/pipeline`).

use super::pipeline::{work_of, Place, Request, Work};
use crate::cli::RunArgs;
use crate::exit::{failure, Code, Failure};

/// Runs the command.
pub fn run(args: RunArgs) -> Result<Code, Failure> {
    args.run_opts.status.apply();
    if args.mpi {
        return super::mpi::run(&args);
    }
    let work = work_of(&args)?;
    check_output_flag(&args, &work)?;
    if let Some(path) = &args.capture {
        let db = match &work {
            Work::Db(plan) => Some(&**plan),
            _ => None,
        };
        super::dbrun::capture::check(path, db)?;
    }
    let place = Place::of(
        args.stack.as_deref(),
        args.log_stack.as_deref(),
        args.target.as_deref(),
    )?;
    work.run(Request {
        place,
        opts: &args.run_opts.stack,
        mem_limit: args.run_opts.mem_limit.as_deref(),
        export: &args.export.requested,
        output: args.output.as_deref(),
        dry_run: args.run_opts.dry_run,
        warm: args.run_opts.warm,
        quiet: args.quiet,
        remove_data: args.remove_data,
        capture: args.capture.as_deref(),
        crash_states: args.crash_states,
    })
}

/// `--output DIR` belongs to a recipe: a workload runs no commands.
fn check_output_flag(args: &RunArgs, work: &Work) -> Result<(), Failure> {
    match (&args.output, work) {
        (Some(dir), Work::Io(_) | Work::Ramp(..) | Work::Db(_)) => Err(failure(
            Code::Usage,
            format!(
                "--output {}: keeps the output of a recipe's commands; this workload runs none",
                dir.display()
            ),
        )),
        _ => Ok(()),
    }
}
