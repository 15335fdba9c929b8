//! `bakeoff compare`: a study (stacks × workloads × sweeps × repetitions, from flags or a file)
//! run into a results directory, one atomically written record per run, resumable; then the
//! comparison table.

use super::exports::{self, write_atomically, Export};
use super::measure::interrupt_flag;
use super::pipeline::{Place, Work};
use super::preflight;
use crate::cli::{CompareArgs, StackOpts};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::study::StudyPlan;
use cells::{cell_plans, place_of, study_from};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

mod adaptive;
mod cells;
mod disturbed;
mod eta;
mod runs;

/// About how many bytes a run record takes, for the results directory's space check: the
/// record itself plus one sample per second.
fn record_bytes(plan: &Work) -> u64 {
    64 * 1024 + 2048 * plan.timed().as_secs()
}

/// Everything the study needs before its first run (and all a dry run does): the report's
/// options, the output files, the results directory, and every stack of every cell. The
/// export files, and the stack options with the study's size its runs use.
fn check(
    args: &CompareArgs,
    plan: &StudyPlan,
    plans: &[Work],
    out: &Path,
) -> Result<(Vec<Export>, StackOpts), Failure> {
    let study_size = match &args.study {
        Some(path) => format!("{}: size", path.display()),
        None => "--size".into(),
    };
    // The study's size, not the command line's, is what its runs use.
    let mut opts = args.run_opts.stack.clone();
    opts.size = preflight::loop_size(&study_size, &plan.study.size)?;
    mem_limit(args, plan)?;
    super::report::columns(&args.report, Default::default())?;
    super::report::check_printable(&args.report)?;
    super::report::min_effect(&args.report)?;
    super::report::check_against(&args.report, &plan.study.stacks)?;
    check_adaptive(args, plan, plans)?;
    check_results(out, plan, args.resume)?;
    let exports = exports::open(&args.export.requested)?;
    let mut checked: Vec<(&str, u64)> = Vec::new();
    for (cell, work) in plan.cells.iter().zip(plans) {
        let place = place_of(cell)?;
        let dataset = match &place {
            Place::Stacks { data, log } => work.stack_bytes(data, log.as_ref(), &opts).0,
            Place::Target(_) => 0,
        };
        if checked
            .iter()
            .any(|(s, d)| *s == cell.stack && *d >= dataset)
        {
            continue;
        }
        work.check_place(place, &opts)?;
        checked.push((&cell.stack, dataset));
    }
    let per_run = plans.iter().map(record_bytes).max().unwrap_or(0);
    preflight::results_room(out, plan.order.len(), per_run)?;
    Ok((exports, opts))
}

/// `--until decided` and `--search`: their figures, and what they cannot decide on.
fn check_adaptive(args: &CompareArgs, plan: &StudyPlan, plans: &[Work]) -> Result<(), Failure> {
    let a = &args.adaptive;
    adaptive::check_figures(a)?;
    if !a.on() {
        return Ok(());
    }
    let usage = |m: String| Err(failure(Code::Usage, m));
    if plans.iter().any(|p| matches!(p, Work::Recipe(_))) {
        return usage(
            "--until decided and --search decide on a run's headline figure; a recipe's phases have none: compare recipes with --repeat"
                .into(),
        );
    }
    if a.max_repeat < plan.study.repeat.max(1) {
        return usage(format!(
            "--max-repeat {} is below the {} repetitions the study plans first (--repeat or the study's repeat)",
            a.max_repeat, plan.study.repeat
        ));
    }
    if a.until.is_some() && plan.study.repeat < 2 {
        return usage(
            "--until decided needs at least 2 planned repetitions (--repeat 2; 3 is the default) before its first look"
                .into(),
        );
    }
    Ok(())
}

/// The study's memory limit in bytes, checked.
fn mem_limit(args: &CompareArgs, plan: &StudyPlan) -> Result<Option<u64>, Failure> {
    let Some(text) = &plan.study.mem_limit else {
        return Ok(None);
    };
    let what = match &args.study {
        Some(path) => format!("{}: mem_limit", path.display()),
        None => "--mem-limit".into(),
    };
    preflight::size(&what, text).map(Some)
}

fn print_dry_run(
    args: &CompareArgs,
    plan: &StudyPlan,
    plans: &[Work],
    opts: &StackOpts,
    out: &Path,
) {
    let states = plan.study.crash_states.unwrap_or(0);
    let left: Vec<&bakeoff_core::study::RunSlot> = (plan.order.iter())
        .filter(|s| !run_path(out, &plan.cells[s.cell].id, s.rep).exists())
        .collect();
    let secs: f64 = (left.iter())
        .map(|s| {
            let cell = &plan.cells[s.cell];
            let kind = match place_of(cell) {
                Ok(Place::Stacks { data, .. }) => Some(data.kind),
                _ => None,
            };
            eta::planned_secs(&plans[s.cell]) + eta::checking_secs(kind, states)
        })
        // (An empty `sum` of floats is -0.0, printed "-0".)
        .fold(0.0, |all, run| all + run);
    let disk = (plan.cells.iter().zip(plans))
        .map(|(c, p)| {
            let Ok(Place::Stacks { data: spec, log }) = place_of(c) else {
                return 0;
            };
            let (data, log_room, _) = p.stack_bytes(&spec, log.as_ref(), opts);
            std::iter::once((&spec, data))
                .chain(log.iter().map(|l| (l, log_room)))
                .map(|(s, room)| {
                    let per = preflight::device_size(s, opts, room);
                    u64::from(s.backing_devices()) * per.unwrap_or(0)
                })
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    println!(
        "{} cells x {} repetitions = {} runs, interleaved:",
        plan.cells.len(),
        plan.study.repeat,
        plan.order.len()
    );
    for (i, c) in plan.cells.iter().enumerate() {
        let base = plan.baseline_of[i].map_or("-".to_string(), |b| plan.cells[b].label.clone());
        println!(
            "  {:>3}  {}  (baseline: {base}; dataset {})",
            i + 1,
            c.label,
            bakeoff_core::units::format_bytes(plans[i].dataset_bytes())
        );
    }
    if plans.iter().any(|p| matches!(p, Work::Recipe(_))) {
        println!("estimated time: not known: a recipe's phases take what they take (docs/phases.md has the build recipe's times)");
    } else {
        let checks = match states {
            0 => String::new(),
            n => format!(
                ", checking {n} crash states at about {} s each ({} s on ZFS)",
                eta::KERNEL_STATE_SECS,
                eta::POOL_STATE_SECS
            ),
        };
        let done = match plan.order.len() - left.len() {
            0 => String::new(),
            n => format!(
                "; {n} of the {} runs are already in {}",
                plan.order.len(),
                out.display()
            ),
        };
        println!("estimated time: {:.0} min (each run: ramp + runtime + building, laying out or loading, tearing down{checks}){done}", secs / 60.0);
    }
    if let Some(line) = adaptive::dry_run_line(&args.adaptive, plan) {
        println!("{line}");
    }
    println!(
        "disk: up to {} of sparse images at a time under {}",
        bakeoff_core::units::format_bytes(disk),
        opts.images.display()
    );
}

/// Where run `rep` of `cell` is recorded.
pub fn run_path(out: &Path, cell_id: &str, rep: u32) -> PathBuf {
    out.join("runs")
        .join(cell_id)
        .join(format!("rep-{rep}.json"))
}

/// Checks the results directory can take this study: a new directory, or with `--resume`
/// one that holds the same study or one this study grows (cells added after the saved ones).
fn check_results(out: &Path, plan: &StudyPlan, resume: bool) -> Result<(), Failure> {
    let path = out.join("study.json");
    if !path.exists() {
        return Ok(());
    }
    if !resume {
        return Err(failure(
            Code::Usage,
            format!(
                "{} already holds a study: add --resume to finish it, or choose another --out",
                out.display()
            ),
        ));
    }
    let saved = super::results::read_plan(out)?;
    match plan.grows(&saved) {
        Ok(_) => Ok(()),
        Err(why) => Err(failure(
            Code::Usage,
            format!(
                "--resume: the study in {} differs from this one: {why}",
                out.display()
            ),
        )),
    }
}

/// Saves the plan unless the results directory already holds it (checked by `check_results`),
/// or holds a plan this one grows: then this one replaces it, and the new cells are said.
fn save_plan(out: &Path, plan: &StudyPlan) -> Result<(), Failure> {
    let path = out.join("study.json");
    if path.exists() {
        let saved = super::results::read_plan(out)?;
        let added = plan.grows(&saved).unwrap_or(0);
        if added == 0 {
            return Ok(());
        }
        let labels: Vec<&str> = plan.cells[saved.cells.len()..]
            .iter()
            .map(|c| c.label.as_str())
            .collect();
        eprintln!(
            "bakeoff: --resume: the study grew by {added} cell(s) ({}); the runs already in {} are kept",
            labels.join(", "),
            out.display()
        );
    }
    let text = serde_json::to_string_pretty(plan).expect("plans serialise");
    write_atomically(&path, &text)
}

/// Runs the command.
pub fn run(args: CompareArgs) -> Result<Code, Failure> {
    args.run_opts.status.apply();
    let plan = study_from(&args)?
        .expand()
        .map_err(|m| failure(Code::Usage, m))?;
    let plans = cell_plans(
        &plan.cells,
        &args.run_opts.stack,
        mem_limit(&args, &plan)?,
        plan.study.crash_states,
    )?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/study-{}", std::process::id())));
    let (exports, opts) = check(&args, &plan, &plans, &out)?;
    if args.run_opts.dry_run {
        print_dry_run(&args, &plan, &plans, &opts, &out);
        drop(exports);
        eprintln!("dry run: ok, the study would start");
        return Ok(Code::Ok);
    }
    save_plan(&out, &plan)?;
    let interrupt = interrupt_flag()?;
    let mut study = runs::StudyRun::new(&args, &opts, &plan, &plans, &out, &interrupt);
    if args.adaptive.on() {
        adaptive::run(&mut study)?;
    } else {
        study.run_planned()?;
    }
    study.finish();
    if interrupt.load(Ordering::Relaxed) {
        eprintln!(
            "bakeoff: interrupted: finished runs are in {}; `--resume` runs only what is missing",
            out.display()
        );
        return Ok(Code::Interrupted);
    }
    finish(&out, &args, exports)
}

/// The comparison of the finished study: printed, exported, and where the results are.
fn finish(out: &Path, args: &CompareArgs, exports: Vec<Export>) -> Result<Code, Failure> {
    let loaded = super::report::load(&[out.to_path_buf()], &args.report)?;
    let report = &loaded.report;
    let table = super::report::render(report, &args.report)?;
    exports::deliver(&table, exports, |e| {
        e.comparison
            .map_or_else(String::new, |render| render(report))
    })?;
    eprintln!("results: {}", out.display());
    Ok(loaded.code())
}
