//! `bakeoff run`: one workload on one target.

use super::exports::{self, Export};
use super::measure::{interrupt_flag, measure, status_code};
use super::on_stack::{run_on_stack_ramped, StackRun};
use super::preflight;
use crate::cli::RunArgs;
use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_core::dbplan::is_db_workload;
use bakeoff_core::ramp::RampSpec;
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::settings::Settings;
use bakeoff_core::workload::{builtin, Workload};
use bakeoff_core::Plan;
use bakeoff_engine::Target;
use bakeoff_stack::gate::Claim;
use std::path::Path;

/// Loads the workload named on the command line or from `--job`.
pub fn load_workload(name: Option<&str>, job: Option<&Path>) -> Result<Workload, Failure> {
    if let Some(path) = job {
        let text = std::fs::read_to_string(path).map_err(|e| {
            failure(
                Code::Usage,
                format!("reading workload file {}: {e}", path.display()),
            )
        })?;
        let stem = path
            .file_stem()
            .map_or("job".into(), |s| s.to_string_lossy().into_owned());
        return Workload::parse(&stem, &text, &path.display().to_string())
            .map_err(|e| failure(Code::Usage, e));
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

/// The `--ramp` spec, parsed and checked against the plan before anything is touched.
pub fn ramp_of(text: Option<&str>, plan: &Plan) -> Result<Option<RampSpec>, Failure> {
    let Some(text) = text else { return Ok(None) };
    let spec = RampSpec::parse(text).map_err(|m| failure(Code::Usage, format!("--ramp: {m}")))?;
    super::ramp::check(plan)?;
    Ok(Some(spec))
}

/// What the checks before a run established.
struct Checked {
    mem_limit: Option<u64>,
    /// The checked `--target` and, for a device, the claim held until the run ends.
    target: Option<(Target, Option<Claim>)>,
    exports: Vec<Export>,
}

/// Everything a run needs before it starts (and all a dry run does): usage first, then the
/// output files, then the target or stack.
fn check(args: &RunArgs, plan: &Plan) -> Result<Checked, Failure> {
    let mem_limit = match &args.mem_limit {
        Some(m) => Some(preflight::size("--mem-limit", m)?),
        None => None,
    };
    let spec = args.stack.as_deref().map(preflight::spec).transpose()?;
    if spec.is_none() {
        if mem_limit.is_some() {
            return Err(failure(
                Code::Usage,
                "--mem-limit applies to runs on a stack: add --stack SPEC",
            ));
        }
        if !args.stack_opts.devices.is_empty() || !args.stack_opts.destroy_data_on.is_empty() {
            return Err(failure(
                Code::Usage,
                "--device and --destroy-data-on apply to runs on a stack: add --stack SPEC",
            ));
        }
    }
    let exports = exports::open(&args.export.requested)?;
    let target = match (&spec, &args.target) {
        (Some(spec), _) => {
            preflight::file_system_for(plan, spec, args.log_stack.is_some())?;
            let logs = bakeoff_engine::placement::log_filesets(plan);
            let log_bytes: u64 = (logs.iter())
                .map(|&i| plan.filesets[i].file_size * u64::from(plan.filesets[i].nrfiles))
                .sum();
            match args.log_stack.as_deref() {
                Some(log) => {
                    let opts = super::on_stack::loop_only(&args.stack_opts);
                    preflight::stack(&preflight::spec(log)?, &opts, log_bytes)?;
                    let data = plan.dataset_bytes() - log_bytes;
                    preflight::stack(spec, &args.stack_opts, data)?;
                }
                None => preflight::stack(spec, &args.stack_opts, plan.dataset_bytes())?,
            }
            None
        }
        (None, Some(path)) => Some(preflight::target(path, plan)?),
        (None, None) => {
            return Err(failure(Code::Usage, "give --target PATH or --stack SPEC"));
        }
    };
    Ok(Checked {
        mem_limit,
        target,
        exports,
    })
}

/// Runs the command.
pub fn run(args: RunArgs) -> Result<Code, Failure> {
    args.status.apply();
    super::exec::check_output_flag(&args)?;
    if args.mpi {
        return super::mpi::run(&args);
    }
    if let Some(name) = (args.workload.as_deref()).filter(|n| is_db_workload(n)) {
        if args.ramp.is_some() {
            return Err(failure(
                Code::Usage,
                format!(
                    "--ramp paces I/O and file workloads; {name} has its own rate key (rate_tps)"
                ),
            ));
        }
        return super::dbrun::command(&args, name);
    }
    if let Some(recipe) = super::exec::recipe_of(&args)? {
        return super::exec::run_recipe(&args, &recipe);
    }
    let workload = load_workload(args.workload.as_deref(), args.job.as_deref())?;
    let plan = workload
        .plan(&parse_sets(&args.set)?)
        .map_err(|e| failure(Code::Usage, e))?;
    let ramp = ramp_of(args.ramp.as_deref(), &plan)?;
    let checked = check(&args, &plan)?;
    if args.dry_run {
        let text = bakeoff_report::plan_text::render(&plan);
        let json = bakeoff_report::plan_text::render_json(&plan);
        exports::deliver_plan(&text, checked.exports, &json)?;
        if let Some(r) = &ramp {
            eprintln!(
                "ramp: {r}: at most {} points, up to {:.0} min",
                r.max_points + r.bisect,
                r.longest().as_secs_f64() / 60.0
            );
        }
        eprintln!("dry run: ok, the run would start");
        return Ok(Code::Ok);
    }
    let interrupt = interrupt_flag()?;
    let record = match (&args.stack, checked.target) {
        (Some(spec), _) => {
            let run = StackRun {
                spec,
                log_spec: args.log_stack.as_deref(),
                opts: &args.stack_opts,
                warm: args.warm,
                mem_limit: checked.mem_limit,
                quiet: args.quiet,
            };
            run_on_stack_ramped(&run, &plan, ramp.as_ref(), &interrupt)?
        }
        (None, Some(target)) => run_on_target(&args, target, &plan, ramp.as_ref(), &interrupt)?,
        (None, None) => unreachable!("check() requires --target or --stack"),
    };
    report(checked.exports, &record)?;
    Ok(status_code(&record))
}

/// Runs on a directory or loop device the user gave.
fn run_on_target(
    args: &RunArgs,
    // The claim keeps the device exclusively ours (nobody can mount it) until the run ends.
    (target, _claim): (Target, Option<Claim>),
    plan: &Plan,
    ramp: Option<&RampSpec>,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<RunRecord, Failure> {
    let cold = starts_cold(args.warm, target.directory(), true);
    let mut prepare = || {
        if cold {
            bakeoff_stack::stack::drop_caches().map_err(stack_failure)?;
        }
        Ok(())
    };
    let mut record = measure(plan, ramp, &target, interrupt, args.quiet, &mut prepare);
    if let Ok(r) = &mut record {
        r.cold = Some(cold);
        r.findings = bakeoff_core::findings::run_findings(r);
    }
    if args.remove_data {
        if let Target::Directory(dir) = &target {
            bakeoff_engine::layout::remove_dataset(dir);
        }
    }
    record
}

/// Whether a run drops caches before it starts: not under `--warm`, not without root (a
/// warning when `tell`), and not when the target directory is on `tmpfs` or `ramfs` (a note
/// when `tell`): their files never leave memory, and dropping caches would only move the
/// target's pages to the inactive list, so that the run measured their re-activation.
pub(crate) fn starts_cold(warm: bool, dir: Option<&std::path::Path>, tell: bool) -> bool {
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
pub(super) fn report(exports: Vec<Export>, record: &RunRecord) -> Result<(), Failure> {
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
