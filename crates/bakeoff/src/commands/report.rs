//! `bakeoff report DIR...`: the comparison table from one or more results directories (a
//! baseline measured last month against a study today), in table, Markdown, CSV or JSON.

use crate::cli::{Format, ReportArgs, ReportOpts};
use crate::exit::{bad_value, clip, failure, Code, Failure};
use bakeoff_core::record::RunRecord;
use bakeoff_core::study::{parse_fraction, Cell, StudyPlan};
use bakeoff_core::verdict::Method;
use bakeoff_report::study::{
    build, figure, CellRuns, FigureDef, StudyReport, DEFAULT_COLUMNS, FIGURES,
};
use std::path::{Path, PathBuf};

/// The study plan saved in a results directory.
pub fn read_plan(dir: &Path) -> Result<StudyPlan, Failure> {
    let path = dir.join("study.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        failure(
            Code::Usage,
            format!(
                "{}: {e} (is this a `bakeoff compare` results directory?)",
                path.display()
            ),
        )
    })?;
    serde_json::from_str(&text)
        .map_err(|e| failure(Code::Usage, format!("{}: {e}", path.display())))
}

/// Completed runs of a cell (failed runs and half-written files are not results).
fn read_runs(dir: &Path, cell: &Cell) -> Result<Vec<RunRecord>, Failure> {
    let cell_dir = dir.join("runs").join(&cell.id);
    let Ok(entries) = std::fs::read_dir(&cell_dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("rep-") && n.ends_with(".json") && !n.ends_with(".failed.json")
            })
        })
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .map_err(|e| failure(Code::Io, format!("{}: {e}", p.display())))?;
            serde_json::from_str(&text)
                .map_err(|e| failure(Code::Usage, format!("{}: {e}", p.display())))
        })
        .collect()
}

/// The figures `--columns` names (default: the slob headline figures).
pub fn columns(opts: &ReportOpts) -> Result<Vec<&'static FigureDef>, Failure> {
    let keys: Vec<String> = match &opts.columns {
        Some(c) => c.split(',').map(|k| k.trim().to_string()).collect(),
        None => DEFAULT_COLUMNS.iter().map(|k| k.to_string()).collect(),
    };
    keys.iter()
        .map(|k| {
            figure(k).ok_or_else(|| {
                let known: Vec<&str> = FIGURES.iter().map(|f| f.key).collect();
                failure(
                    Code::Usage,
                    format!(
                        "--columns: unknown figure '{}' (known: {})",
                        clip(k),
                        known.join(", ")
                    ),
                )
            })
        })
        .collect()
}

/// `--min-effect`, or the study's.
pub fn min_effect(opts: &ReportOpts, study: f64) -> Result<f64, Failure> {
    match &opts.min_effect {
        Some(m) => parse_fraction(m).map_err(|e| bad_value("--min-effect", m, &e)),
        None => Ok(study),
    }
}

/// `--against` must name one of the stacks compared (as written in the study).
pub fn check_against(opts: &ReportOpts, known: &[String]) -> Result<(), Failure> {
    let Some(against) = &opts.against else {
        return Ok(());
    };
    if known.contains(against) {
        return Ok(());
    }
    let mut names: Vec<&str> = Vec::new();
    for k in known {
        if !names.contains(&k.as_str()) {
            names.push(k);
        }
    }
    Err(failure(
        Code::Usage,
        format!(
            "--against '{}' is not a stack of this study (its stacks: {})",
            clip(against),
            names.join(", ")
        ),
    ))
}

/// Loads and compares the studies in `dirs`.
pub fn load(dirs: &[PathBuf], opts: &ReportOpts) -> Result<StudyReport, Failure> {
    // Cells merged by label across directories, each with the label of its planned baseline.
    let mut cells: Vec<(Cell, Vec<RunRecord>, Option<String>)> = Vec::new();
    let mut first: Option<StudyPlan> = None;
    for dir in dirs {
        let plan = read_plan(dir)?;
        for (i, cell) in plan.cells.iter().enumerate() {
            let runs = read_runs(dir, cell)?;
            let base = plan
                .baseline_of
                .get(i)
                .copied()
                .flatten()
                .map(|b| plan.cells[b].label.clone());
            match cells.iter_mut().find(|(c, _, _)| c.label == cell.label) {
                Some((_, existing, _)) => existing.extend(runs),
                None => cells.push((cell.clone(), runs, base)),
            }
        }
        first.get_or_insert(plan);
    }
    let first = first.ok_or_else(|| failure(Code::Usage, "name at least one results directory"))?;
    let known: Vec<String> = cells.iter().map(|(c, _, _)| c.base_stack.clone()).collect();
    check_against(opts, &known)?;
    let baseline = opts
        .against
        .clone()
        .or(first.study.baseline.clone())
        .unwrap_or_else(|| first.study.stacks[0].clone());
    let min_effect = min_effect(opts, first.study.min_effect)?;
    let columns = columns(opts)?;
    let runs: Vec<CellRuns> = cells
        .iter()
        .map(|(c, r, planned)| {
            let chosen = match (&opts.against, planned) {
                (None, Some(label)) => cells.iter().position(|(b, _, _)| b.label == *label),
                _ => cells.iter().position(|(b, _, _)| {
                    b.base_stack == baseline && b.workload == c.workload && b.set == c.set
                }),
            };
            CellRuns {
                label: c.label.clone(),
                stack: c.stack.clone(),
                runs: r.clone(),
                baseline: chosen,
            }
        })
        .collect();
    let method = Method {
        min_effect,
        ..Method::default()
    };
    Ok(build(&runs, &columns, &method, 3))
}

/// Renders in the requested format.
pub fn render(report: &StudyReport, opts: &ReportOpts) -> Result<String, Failure> {
    use bakeoff_report::study_table as t;
    Ok(match opts.format {
        Format::Table => t::render_table(report),
        Format::Markdown => t::render_markdown(report),
        Format::Csv => t::render_csv(report),
        Format::Json => t::render_json(report),
    })
}

/// Runs the command.
pub fn run(args: ReportArgs) -> Result<Code, Failure> {
    let report = load(&args.dirs, &args.report)?;
    print!("{}", render(&report, &args.report)?);
    Ok(Code::Ok)
}
