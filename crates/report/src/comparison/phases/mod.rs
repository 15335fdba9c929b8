//! The comparison of recipe runs in seed 002's shape: for each recipe (with its settings), its
//! phases as rows and the stacks as columns. Each cell holds the phase's median real time with
//! its range over repetitions, its ratio to the baseline stack and the verdict (less is better),
//! and under it the phase's command CPU and device bytes; the last rows are the whole run and
//! the space and compression read back after the last phase. Rendered as a terminal table,
//! Markdown and CSV (`text`); the JSON comparison carries the tables as they are.

pub mod text;

use super::cells::{figure_cell, CellRuns, FigureCell};
use crate::figures::{Compare, Figure};
use bakeoff_core::phaserecord::{PhaseRecord, SpaceRecord};
use bakeoff_core::record::RunRecord;
use bakeoff_core::verdict::{median, Better, Method};
use serde::Serialize;

/// The rows' figures: times are results (less is better), space and compression are what the
/// stacks did with the same data (diagnostics).
const fn figure(
    key: &'static str,
    label: &'static str,
    compare: Compare,
    decimals: usize,
) -> Figure {
    Figure {
        key,
        label,
        compare,
        get: |_| None,
        decimals,
        floor: 0.0,
        percent: false,
        micros: false,
    }
}
const REAL_S: Figure = figure("real_s", "real s", Compare::Verdict(Better::Lower), 1);
const SPACE_MIB: Figure = figure("space_used_mib", "space used MiB", Compare::Diagnostic, 0);
const COMPRESS: Figure = figure(
    "compress_ratio",
    "compression ratio",
    Compare::Diagnostic,
    2,
);
/// What else used the machine during the runs (the disturbed-run rule's figures), so that a
/// phase table says whether its machine was quiet as the other tables' columns do.
const OTHER_PCT: Figure = figure("cpu_other_pct", "other CPU %", Compare::Diagnostic, 1);
const STEAL_PCT: Figure = figure("cpu_steal_pct", "steal %", Compare::Diagnostic, 1);

/// One recipe's phases on every stack it ran on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseTable {
    /// The recipe and its settings, as the cells' labels name them.
    pub recipe: String,
    /// The stacks, one column each, as the cells' labels name them.
    pub stacks: Vec<String>,
    /// The column compared against, if one is the baseline.
    pub baseline: Option<usize>,
    /// Completed runs per column.
    pub runs: Vec<usize>,
    /// The phases in order, then `total`, `space used MiB`, `compression ratio`, `other CPU %`
    /// and `steal %`.
    pub rows: Vec<PhaseRow>,
}

/// The rows after the phases: `total`, `space used MiB`, `compression ratio`, `other CPU %`
/// and `steal %`.
const TRAILING_ROWS: usize = 5;

impl PhaseTable {
    /// The rows of the phases, without the whole run and the space figures after them.
    pub fn phase_rows(&self) -> &[PhaseRow] {
        &self.rows[..self.rows.len().saturating_sub(TRAILING_ROWS)]
    }
}

/// One row: a phase, the whole run, or a space figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseRow {
    /// Phase name, `total`, `space used MiB`, `compression ratio`, `other CPU %` or `steal %`.
    pub name: String,
    /// `real_s`, `space_used_mib`, `compress_ratio`, `cpu_other_pct` or `cpu_steal_pct`.
    pub figure: String,
    /// One per column.
    pub cells: Vec<PhaseCell>,
}

/// One phase on one stack, over its repetitions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PhaseCell {
    /// The row's figure: median, range, ratio and verdict against the baseline column.
    pub value: FigureCell,
    /// Median user + system CPU of the phase's commands.
    pub command_cpu_s: Option<f64>,
    /// Median bytes read from the stack's devices over the phase.
    pub device_read_bytes: Option<f64>,
    /// Median bytes written to the stack's devices over the phase.
    pub device_write_bytes: Option<f64>,
}

/// The part of a cell label before ` / ` (the stack) and after it (the workload and settings).
fn split_label(label: &str) -> (&str, &str) {
    label.split_once(" / ").unwrap_or((label, ""))
}

/// A table per recipe among `cells` (cells whose runs have phases), the cells compared with the
/// same baseline cell sharing a table.
pub fn tables(cells: &[CellRuns], method: &Method) -> Vec<PhaseTable> {
    let is_recipe = |c: &CellRuns| c.runs.iter().any(|r| !r.phases.is_empty());
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, c) in cells.iter().enumerate().filter(|(_, c)| is_recipe(c)) {
        let key = c.baseline.filter(|b| *b < cells.len()).unwrap_or(i);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    groups
        .into_iter()
        .map(|(key, members)| table(cells, key, &members, method))
        .collect()
}

fn table(cells: &[CellRuns], key: usize, members: &[usize], method: &Method) -> PhaseTable {
    let columns: Vec<&CellRuns> = members.iter().map(|&i| &cells[i]).collect();
    let baseline = members.iter().position(|&i| i == key);
    let mut names: Vec<String> = Vec::new();
    for r in columns.iter().flat_map(|c| &c.runs) {
        for p in &r.phases {
            if !names.contains(&p.name) {
                names.push(p.name.clone());
            }
        }
    }
    let base_runs = baseline.map(|b| columns[b].runs.as_slice());
    let row = |name: &str, fig: &Figure, get: &dyn Fn(&RunRecord) -> Option<f64>| PhaseRow {
        name: name.to_string(),
        figure: fig.key.to_string(),
        cells: columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let bs = base_runs
                    .filter(|_| Some(i) != baseline)
                    .map(|b| values(b, get));
                let value = figure_cell(fig, &values(&c.runs, get), bs.as_deref(), method);
                PhaseCell {
                    value,
                    ..PhaseCell::default()
                }
            })
            .collect(),
    };
    let mut rows: Vec<PhaseRow> = names
        .iter()
        .map(|n| {
            let mut r = row(n, &REAL_S, &|run| phase(run, n).map(|p| p.real_s));
            for (cell, c) in r.cells.iter_mut().zip(&columns) {
                let m = |f: &dyn Fn(&PhaseRecord) -> Option<f64>| {
                    median(&values(&c.runs, &|run| phase(run, n).and_then(f)))
                };
                cell.command_cpu_s = m(&PhaseRecord::command_cpu_s);
                cell.device_read_bytes = m(&|p| p.device_read_bytes.map(|b| b as f64));
                cell.device_write_bytes = m(&|p| p.device_write_bytes.map(|b| b as f64));
            }
            r
        })
        .collect();
    rows.push(row("total", &REAL_S, &|run| {
        // From the first phase's start: a phase accounted before the window opened (TPC-H's
        // initdb) starts at a negative offset.
        let before = run
            .phases
            .first()
            .map_or(0.0, |p| (-p.start_offset_s).max(0.0));
        (!run.phases.is_empty()).then(|| run.measured_ns as f64 / 1e9 + before)
    }));
    let space =
        |f: fn(&SpaceRecord) -> Option<f64>| move |run: &RunRecord| run.space.as_ref().and_then(f);
    let mib = space(|s| s.used_bytes.map(|b| b as f64 / f64::from(1 << 20)));
    rows.push(row(SPACE_MIB.label, &SPACE_MIB, &mib));
    rows.push(row(COMPRESS.label, &COMPRESS, &space(|s| s.compress_ratio)));
    rows.push(row(OTHER_PCT.label, &OTHER_PCT, &|run| {
        run.summary.cpu_other_pct
    }));
    rows.push(row(STEAL_PCT.label, &STEAL_PCT, &|run| {
        run.summary.cpu_steal_pct
    }));
    PhaseTable {
        recipe: split_label(&columns[0].label).1.to_string(),
        stacks: columns
            .iter()
            .map(|c| split_label(&c.label).0.to_string())
            .collect(),
        baseline,
        runs: columns.iter().map(|c| c.runs.len()).collect(),
        rows,
    }
}

/// The phase called `name` of a completed run.
fn phase<'r>(run: &'r RunRecord, name: &str) -> Option<&'r PhaseRecord> {
    run.phases.iter().find(|p| p.name == name)
}

fn values(runs: &[RunRecord], get: &dyn Fn(&RunRecord) -> Option<f64>) -> Vec<f64> {
    runs.iter()
        .filter_map(get)
        .filter(|x| x.is_finite())
        .collect()
}

/// The figure of a row's `figure` key (the real time for an unknown key).
pub(crate) fn figure_of(key: &str) -> &'static Figure {
    [&REAL_S, &SPACE_MIB, &COMPRESS, &OTHER_PCT, &STEAL_PCT]
        .into_iter()
        .find(|f| f.key == key)
        .unwrap_or(&REAL_S)
}

#[cfg(test)]
mod tests {
    fn report() -> crate::comparison::StudyReport {
        crate::fixture::phase_study()
    }

    #[test]
    fn phases_are_rows_and_stacks_columns_with_verdicts() {
        let r = report();
        assert!(r.rows.is_empty(), "recipe cells are compared by phase");
        let [t] = &r.phases[..] else {
            panic!("one table")
        };
        assert_eq!(t.stacks, ["ext4", "zfs:compression=on"]);
        assert_eq!((t.recipe.as_str(), t.baseline), ("build", Some(0)));
        let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "build-2x",
                "flush",
                "total",
                "space used MiB",
                "compression ratio",
                "other CPU %",
                "steal %"
            ]
        );
        let zfs_build = &t.rows[0].cells[1];
        assert_eq!(zfs_build.value.median, Some(120.0));
        let verdict = zfs_build.value.vs_baseline.as_ref().unwrap().verdict;
        assert_eq!(
            verdict,
            bakeoff_core::verdict::Verdict::Worse,
            "slower is worse"
        );
        assert_eq!(zfs_build.command_cpu_s, Some(45.0));
        assert_eq!(zfs_build.device_write_bytes, Some(f64::from(3u32 << 30)));
        let flush = t.rows[1].cells[1]
            .value
            .vs_baseline
            .as_ref()
            .unwrap()
            .verdict;
        assert_eq!(
            flush,
            bakeoff_core::verdict::Verdict::NoSignificantDifference
        );
        let ratio = &t.rows[4].cells[1].value;
        assert_eq!(
            (ratio.median, ratio.vs_baseline.is_none()),
            (Some(1.8), true)
        );
    }

    #[test]
    fn table_golden() {
        insta::assert_snapshot!(crate::comparison::text::render_table(&report()));
    }

    #[test]
    fn markdown_golden() {
        insta::assert_snapshot!(crate::comparison::text::render_markdown(&report()));
    }

    #[test]
    fn csv_golden() {
        insta::assert_snapshot!(crate::comparison::text::render_csv(&report()));
    }
}
