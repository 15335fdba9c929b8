//! `bakeoff run`: one workload on one target.

use super::measure::{interrupt_flag, measure, status_code};
use super::on_stack::{run_on_stack, StackRun};
use crate::cli::RunArgs;
use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_core::settings::Settings;
use bakeoff_core::units::parse_size;
use bakeoff_core::workload::{builtin, builtins, Workload};
use bakeoff_engine::Target;
use std::io::Write;
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
    builtin(name).ok_or_else(|| {
        let names: Vec<String> = builtins().into_iter().map(|w| w.name).collect();
        failure(
            Code::Usage,
            format!(
                "unknown workload '{name}' (built-in: {}; or --job FILE)",
                names.join(", ")
            ),
        )
    })
}

/// Merges every `--set` argument in order.
pub fn parse_sets(sets: &[String]) -> Result<Settings, Failure> {
    let mut all = Settings::default();
    for s in sets {
        all.merge(&Settings::parse_set(s).map_err(|e| failure(Code::Usage, e))?);
    }
    Ok(all)
}

/// Writes `text` to `path` atomically (temp file + rename), or to stdout for "-".
pub fn write_output(path: &Path, text: &str) -> Result<(), Failure> {
    let io = |what: &str, e: std::io::Error| {
        failure(Code::Io, format!("{what} {}: {e}", path.display()))
    };
    if path == Path::new("-") {
        return std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| io("writing", e));
    }
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, text).map_err(|e| io("writing", e))?;
    std::fs::rename(&tmp, path).map_err(|e| io("renaming into place", e))
}

/// Runs the command.
pub fn run(args: RunArgs) -> Result<Code, Failure> {
    let workload = load_workload(args.workload.as_deref(), args.job.as_deref())?;
    let plan = workload
        .plan(&parse_sets(&args.set)?)
        .map_err(|e| failure(Code::Usage, e))?;
    if args.dry_run {
        println!("{}", bakeoff_report::json::render_plan(&plan));
        return Ok(Code::Ok);
    }
    let mem_limit = match &args.mem_limit {
        Some(m) => {
            Some(parse_size(m).map_err(|e| failure(Code::Usage, format!("--mem-limit: {e}")))?)
        }
        None => None,
    };
    if mem_limit.is_some() && args.stack.is_none() {
        return Err(failure(
            Code::Usage,
            "--mem-limit applies to runs on a stack: add --stack SPEC",
        ));
    }
    let interrupt = interrupt_flag()?;
    let record = match &args.stack {
        Some(spec) => {
            let run = StackRun {
                spec,
                opts: &args.stack_opts,
                warm: args.warm,
                mem_limit,
                quiet: args.quiet,
            };
            run_on_stack(&run, &plan, &interrupt)?
        }
        None => run_on_target(&args, &plan, &interrupt)?,
    };
    report(&args, &record)?;
    Ok(status_code(&record))
}

/// Runs on a directory or loop device the user gave.
fn run_on_target(
    args: &RunArgs,
    plan: &bakeoff_core::Plan,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<bakeoff_core::record::RunRecord, Failure> {
    let path = args
        .target
        .as_deref()
        .expect("clap requires --target without --stack");
    // The claim keeps the device exclusively ours (nobody can mount it) until the run ends.
    let (target, _claim) = crate::target::check(path)?;
    let cold = !args.warm && rustix::process::geteuid().is_root();
    if !args.warm && !cold {
        eprintln!("bakeoff: warning: not root, so caches cannot be dropped: this run starts warm");
    }
    let mut prepare = || {
        if cold {
            bakeoff_stack::stack::drop_caches().map_err(stack_failure)?;
        }
        Ok(())
    };
    let mut record = measure(plan, &target, interrupt, args.quiet, &mut prepare);
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

fn report(args: &RunArgs, record: &bakeoff_core::record::RunRecord) -> Result<(), Failure> {
    let to_stdout = |p: &Option<std::path::PathBuf>| p.as_deref() == Some(Path::new("-"));
    let summary = bakeoff_report::terminal::render(record);
    if to_stdout(&args.json) || to_stdout(&args.timeseries) {
        eprint!("{summary}");
    } else {
        print!("{summary}");
    }
    if let Some(path) = &args.json {
        write_output(path, &bakeoff_report::json::render(record))?;
    }
    if let Some(path) = &args.timeseries {
        write_output(
            path,
            &bakeoff_report::csv::render_timeseries(&record.samples),
        )?;
    }
    Ok(())
}
