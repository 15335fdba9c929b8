//! `bakeoff compare`: a study (stacks × workloads × sweeps × repetitions, from flags or a file)
//! run into a results directory, one atomically written record per run, resumable; then the
//! comparison table.

use super::exports::{self, write_atomically, Export};
use super::measure::interrupt_flag;
use super::phases::CommandOutput;
use super::pipeline::{Place, Ready, RunFlags, Work};
use super::preflight;
use crate::cli::{CompareArgs, StackOpts};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::study::StudyPlan;
use cells::{cell_plans, place_of, study_from};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

mod cells;
mod eta;

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

fn print_dry_run(plan: &StudyPlan, plans: &[Work], opts: &StackOpts, out: &Path) {
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
        print_dry_run(&plan, &plans, &opts, &out);
        drop(exports);
        eprintln!("dry run: ok, the study would start");
        return Ok(Code::Ok);
    }
    save_plan(&out, &plan)?;
    let interrupt = interrupt_flag()?;
    run_study(&args, &opts, &plan, &plans, &out, &interrupt)?;
    if interrupt.load(Ordering::Relaxed) {
        eprintln!(
            "bakeoff: interrupted: finished runs are in {}; `--resume` runs only what is missing",
            out.display()
        );
        return Ok(Code::Interrupted);
    }
    finish(&out, &args, exports)
}

/// Runs every run of the study the results directory `out` is missing, in the plan's order,
/// until one fails or Ctrl-C, with progress on stderr.
fn run_study(
    args: &CompareArgs,
    opts: &StackOpts,
    plan: &StudyPlan,
    plans: &[Work],
    out: &Path,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<(), Failure> {
    let (mut done, total) = (0usize, plan.order.len());
    let mut eta = eta::Eta::default();
    // What the runs not yet recorded are planned to take.
    let mut planned_left: f64 = (plan.order.iter())
        .filter(|s| !run_path(out, &plan.cells[s.cell].id, s.rep).exists())
        .map(|s| eta::planned_secs(&plans[s.cell]))
        .sum();
    // On a terminal a bar with the current cell, repetition and ETA; otherwise a line per run.
    let bar = crate::progress::bar(
        total as u64,
        "[{pos}/{len}] {wide_msg} {elapsed_precise}",
        false,
    );
    for slot in &plan.order {
        let cell = &plan.cells[slot.cell];
        let path = run_path(out, &cell.id, slot.rep);
        done += 1;
        if path.exists() {
            continue;
        }
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        bar.set_position(done as u64 - 1);
        bar.set_message(format!(
            "{} rep {}, {}",
            cell.label,
            slot.rep,
            eta::describe_left(eta.left(planned_left))
        ));
        let started = Instant::now();
        let flags = RunFlags {
            opts,
            warm: args.run_opts.warm,
            mem_limit: mem_limit(args, plan)?,
            // Without the bar (stderr not a terminal) the runs' own status lines show that a
            // long cell is alive, named by the cell.
            quiet: !bar.is_hidden(),
            remove_data: false,
            // A progress bar owns the terminal: a recipe's commands' output is kept beside
            // the run.
            output: CommandOutput {
                dir: std::path::absolute(path.with_extension("output")).ok(),
                ..CommandOutput::default()
            },
            capture: None,
            crash_states: plan.study.crash_states,
        };
        if bar.is_hidden() {
            let name = format!("[{done}/{total}] {} rep {}", cell.label, slot.rep);
            crate::progress::name_status_lines(Some(name));
        }
        let Place::Stacks { data, log } = place_of(cell)? else {
            unreachable!("a study's cells run on stacks")
        };
        let at = Ready::Stacks { data, log };
        let record = plans[slot.cell].execute(&at, &flags, Some(slot.rep), interrupt)?;
        let planned = eta::planned_secs(&plans[slot.cell]);
        eta.finished(planned, started.elapsed());
        planned_left = (planned_left - planned).max(0.0);
        if bar.is_hidden() {
            let left = match planned_left > 0.0 {
                true => eta::describe_left(eta.left(planned_left)),
                false => "no runs left".into(),
            };
            report_progress(done, total, cell, slot.rep, &record, &left);
        }
        if !store(&record, &path, cell, slot.rep)? {
            break; // interrupted: the run in flight is never recorded as a result
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// Records a finished run: a completed one as a result, a failed one beside it (not a result,
/// and the study stops). False if the run was interrupted.
fn store(
    record: &RunRecord,
    path: &Path,
    cell: &bakeoff_core::study::Cell,
    rep: u32,
) -> Result<bool, Failure> {
    let text = bakeoff_report::json::render(record);
    match record.status {
        RunStatus::Completed => write_atomically(path, &text).map(|()| true),
        RunStatus::Interrupted => Ok(false),
        RunStatus::Failed => {
            write_atomically(&path.with_extension("failed.json"), &text)?;
            let error = record.error.as_deref().unwrap_or_default();
            Err(failure(
                Code::Io,
                format!("{} rep {rep}: {error}", cell.label),
            ))
        }
    }
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

fn report_progress(
    done: usize,
    total: usize,
    cell: &bakeoff_core::study::Cell,
    rep: u32,
    r: &RunRecord,
    left: &str,
) {
    use bakeoff_core::units::{format_nanos, format_rate};
    let n = |v: Option<f64>| v.map_or("-".into(), format_rate);
    let rate = match (&r.ramp, r.summary.tps) {
        (Some(ramp), _) => format!("ramp: {}", bakeoff_report::ramp::headline(ramp)),
        (None, Some(_)) => format!("{} transactions/s", n(r.summary.tps)),
        (None, None) if !r.phases.is_empty() => format!(
            "{} phases in {}",
            r.phases.len(),
            format_nanos(r.measured_ns as f64)
        ),
        (None, None) => format!(
            "read {}/s write {}/s",
            n(r.summary.read_iops),
            n(r.summary.write_iops)
        ),
    };
    eprintln!(
        "[{done}/{total}] {} rep {rep}: {rate} ({:?}); {left}",
        cell.label, r.status,
    );
}
