//! `bakeoff report DIR...`: the comparison table from one or more results directories (a
//! baseline measured last month against a study today), as a terminal table, in any format
//! `compare` exports to (JSON, Markdown, CSV, HTML), or as SVG charts.

mod files;

use super::results::Reader;
use crate::cli::{Format, ReportArgs, ReportOpts};
use crate::exit::{bad_value, clip, failure, Code, Failure};
use bakeoff_core::record::RunRecord;
use bakeoff_core::study::{parse_fraction, Cell, StudyPlan};
use bakeoff_core::verdict::Method;
use bakeoff_report::comparison::{build, CellRuns, StudyReport};
use bakeoff_report::figures::{
    figure, Figure, DB_DEFAULT_COLUMNS, DEFAULT_COLUMNS, REPLAY_DEFAULT_COLUMNS, RISK_COLUMNS,
};
use std::path::PathBuf;

/// What kinds of runs a comparison holds, for its default columns.
#[derive(Clone, Copy, Debug, Default)]
pub struct Holds {
    /// Runs of I/O workloads.
    pub io: bool,
    /// Runs of real databases.
    pub databases: bool,
    /// Replays of captured traces.
    pub replays: bool,
    /// Runs that checked crash states.
    pub crash_states: bool,
}

/// The figures `--columns` names (default: the headline figures of what the runs hold: the
/// slob figures, the transaction figures, or both).
pub fn columns(opts: &ReportOpts, holds: Holds) -> Result<Vec<&'static Figure>, Failure> {
    let keys: Vec<String> = match &opts.columns {
        Some(c) => c.split(',').map(|k| k.trim().to_string()).collect(),
        None => {
            let db = holds.databases.then_some(DB_DEFAULT_COLUMNS);
            let replay = holds.replays.then_some(REPLAY_DEFAULT_COLUMNS);
            let io = (holds.io || !(holds.databases || holds.replays)).then_some(DEFAULT_COLUMNS);
            let risk = holds.crash_states.then_some(RISK_COLUMNS);
            (db.into_iter().chain(replay).chain(io).chain(risk).flatten())
                .map(|k| k.to_string())
                .collect()
        }
    };
    keys.iter()
        .map(|k| {
            figure(k).ok_or_else(|| {
                let known = bakeoff_report::figures::keys();
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

/// `--min-effect`, if given (else the study's applies).
pub fn min_effect(opts: &ReportOpts) -> Result<Option<f64>, Failure> {
    opts.min_effect
        .as_deref()
        .map(|m| parse_fraction(m).map_err(|e| bad_value("--min-effect", m, &e)))
        .transpose()
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

/// A comparison, and how many run records it had to leave out.
pub struct Loaded {
    /// The comparison.
    pub report: StudyReport,
    /// Run records that could not be read (named on stderr and in the notes).
    pub unreadable: usize,
}

impl Loaded {
    /// The exit code: some records left out is not a clean result.
    pub fn code(&self) -> Code {
        if self.unreadable > 0 {
            Code::Unreadable
        } else {
            Code::Ok
        }
    }
}

/// A cell merged across directories: its runs and the label of its planned baseline.
struct Merged {
    cell: Cell,
    runs: Vec<RunRecord>,
    planned: Option<String>,
}

/// Loads and compares the studies in `dirs`; each directory and run record counts once.
pub fn load(dirs: &[PathBuf], opts: &ReportOpts) -> Result<Loaded, Failure> {
    let given_min_effect = min_effect(opts)?;
    // Columns named on the command line are checked before anything is read; only the
    // defaults depend on what the runs hold.
    if opts.columns.is_some() {
        columns(opts, Holds::default())?;
    }
    let mut reader = Reader::default();
    let mut cells: Vec<Merged> = Vec::new();
    let mut first: Option<StudyPlan> = None;
    let mut adaptive = None;
    for dir in dirs {
        let Some(study) = reader.read(dir)? else {
            continue;
        };
        adaptive = adaptive.or(study.adaptive);
        let plan = &study.plan;
        for ((i, cell), runs) in plan.cells.iter().enumerate().zip(study.runs) {
            let planned = plan.baseline_of[i].map(|b| plan.cells[b].label.clone());
            match cells.iter_mut().find(|m| m.cell.label == cell.label) {
                Some(m) => m.runs.extend(runs),
                None => cells.push(Merged {
                    cell: cell.clone(),
                    runs,
                    planned,
                }),
            }
        }
        first.get_or_insert(study.plan);
    }
    let first = first.ok_or_else(|| failure(Code::Usage, "name at least one results directory"))?;
    let runs_all = || cells.iter().flat_map(|m| &m.runs);
    let holds = Holds {
        io: runs_all().any(|r| r.database.is_none() && r.replay.is_none()),
        databases: runs_all().any(|r| r.database.is_some()),
        replays: runs_all().any(|r| r.replay.is_some()),
        crash_states: runs_all().any(|r| r.durability.is_some()),
    };
    let columns = columns(opts, holds)?;
    let known: Vec<String> = cells.iter().map(|m| m.cell.base_stack.clone()).collect();
    check_against(opts, &known)?;
    let baseline = opts
        .against
        .clone()
        .or(first.study.baseline.clone())
        .unwrap_or_else(|| known[0].clone());
    let runs: Vec<CellRuns> = cells
        .iter()
        .map(|m| {
            let c = &m.cell;
            let chosen = match (&opts.against, &m.planned) {
                (None, Some(label)) => cells.iter().position(|b| b.cell.label == *label),
                _ => cells.iter().position(|b| {
                    b.cell.base_stack == baseline
                        && b.cell.workload == c.workload
                        && b.cell.set == c.set
                }),
            };
            CellRuns {
                label: c.label.clone(),
                stack: c.stack.clone(),
                runs: m.runs.clone(),
                baseline: chosen,
            }
        })
        .collect();
    let method = Method {
        min_effect: given_min_effect.unwrap_or(first.study.min_effect),
        ..Method::default()
    };
    let mut report = build(&runs, &columns, &method, 3);
    report.notes.extend(reader.notes);
    report.cost = (reader.cost.runs > 0).then_some(reader.cost);
    report.adaptive = adaptive;
    bakeoff_report::comparison::adaptive::apply(&mut report);
    Ok(Loaded {
        report,
        unreadable: reader.unreadable,
    })
}

/// Whether the format is one text that can be printed (SVG is a file per chart).
pub fn check_printable(opts: &ReportOpts) -> Result<(), Failure> {
    match opts.format {
        Format::Svg => Err(failure(
            Code::Usage,
            "--format svg writes one file per chart: give the directory with `bakeoff report \
             DIR --format svg --out CHARTS_DIR` (compare prints a table; see --export-html)",
        )),
        _ => Ok(()),
    }
}

/// Renders in the requested format, as one text.
pub fn render(report: &StudyReport, opts: &ReportOpts) -> Result<String, Failure> {
    Ok(match opts.format {
        Format::Table => bakeoff_report::comparison::text::render_table(report),
        Format::Export { render, .. } => render(report),
        Format::Svg => return check_printable(opts).map(|()| String::new()),
    })
}

/// Runs the command.
pub fn run(args: ReportArgs) -> Result<Code, Failure> {
    let out = files::Out::check(args.out.as_deref(), args.report.format)?;
    let mut loaded = load(&args.dirs, &args.report)?;
    if args.table_only {
        let report = &mut loaded.report;
        report.rows.iter_mut().for_each(|row| row.findings.clear());
        (report.notes, report.cost, report.adaptive) = (Vec::new(), None, None);
    }
    match out {
        None => {
            check_printable(&args.report)?;
            print!("{}", render(&loaded.report, &args.report)?);
        }
        Some(out) => out.write(&loaded.report, &args.report)?,
    }
    Ok(loaded.code())
}
