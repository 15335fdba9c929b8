//! The comparison of a study: one row per cell, each headline figure as a median with its range
//! and, against the baseline cell, a ratio and a verdict; plus the findings that explain it, the
//! load ramps' comparison and a table per recipe.

use super::cells::{figure_cell, CellRuns, FigureCell};
use super::phases::{self, PhaseTable};
use super::ramp::{self, RampComparison};
use crate::figures::Figure;
use bakeoff_core::findings::{cell_findings, Finding};
use bakeoff_core::record::RunRecord;
use bakeoff_core::verdict::Method;
use serde::Serialize;

/// Version of the comparison JSON.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// One cell of the study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellRow {
    /// Label (stack / workload / sweep values).
    pub label: String,
    /// Stack spec.
    pub stack: String,
    /// Completed repetitions.
    pub runs: usize,
    /// This cell is a baseline.
    pub is_baseline: bool,
    /// Figures, in column order.
    pub figures: Vec<FigureCell>,
    /// Findings over its repetitions.
    pub findings: Vec<Finding>,
}

/// A whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StudyReport {
    /// Format version.
    pub schema_version: u32,
    /// Column keys.
    pub columns: Vec<String>,
    /// Minimum effect used for verdicts.
    pub min_effect: f64,
    /// Rows.
    pub rows: Vec<CellRow>,
    /// Caveats (different machines or tool versions across results directories, ...).
    pub notes: Vec<String>,
    /// Load ramps: each cell's highest rate within the limit and its costs at the common
    /// load point; absent when no run has a ramp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramps: Option<RampComparison>,
    /// Cells that ran recipes, a table per recipe: phases as rows, stacks as columns (their
    /// cells are not among `rows`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseTable>,
    /// What the study's runs cost in wall time, where the records say (`bakeoff report` over
    /// results directories; absent for records without `timing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<super::cost::StudyCost>,
    /// `compare --until decided` or `--search`: what it decided when (`DIR/adaptive.json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<bakeoff_core::study::adaptive::AdaptiveRecord>,
}

/// Builds the comparison of `cells` over `columns`.
pub fn build(
    cells: &[CellRuns],
    columns: &[&'static Figure],
    method: &Method,
    min_repetitions: usize,
) -> StudyReport {
    let values = |c: &CellRuns, f: &Figure| -> Vec<f64> {
        let all = c.runs.iter().filter_map(|r| (f.get)(&r.summary));
        all.filter(|x| x.is_finite()).collect()
    };
    let rows: Vec<CellRow> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let is_baseline = c.baseline == Some(i);
            let figures = columns
                .iter()
                .map(|f| {
                    let base = c.baseline.filter(|b| *b != i && *b < cells.len());
                    let bs = base.map(|b| values(&cells[b], f));
                    figure_cell(f, &values(c, f), bs.as_deref(), method)
                })
                .collect();
            CellRow {
                label: c.label.clone(),
                stack: c.stack.clone(),
                runs: c.runs.len(),
                is_baseline,
                figures,
                findings: cell_findings(&c.runs, min_repetitions),
            }
        })
        .collect();
    // Costs per transaction of database cells at different throughputs are not comparable:
    // every database row says so.
    let labelled: Vec<(&str, &[RunRecord])> = (cells.iter())
        .map(|c| (c.label.as_str(), &c.runs[..]))
        .collect();
    let gap = bakeoff_core::findings::costs_at_different_rates(&labelled);
    let mut rows = rows;
    for (i, (row, c)) in rows.iter_mut().zip(cells).enumerate() {
        if c.runs.iter().any(|r| r.database.is_some()) {
            row.findings.extend(gap.clone());
        }
        // A cell faster than its baseline is never shown better without what it risks.
        if let Some(base) = c.baseline.filter(|b| *b != i && *b < cells.len()) {
            let risk = bakeoff_core::findings::riskier_than_baseline(&c.runs, &cells[base].runs);
            row.findings.extend(risk);
        }
    }
    // A recipe's cells are compared phase by phase instead.
    let is_recipe = |c: &CellRuns| c.runs.iter().any(|r| !r.phases.is_empty());
    let mut rows: Vec<CellRow> = rows
        .into_iter()
        .zip(cells)
        .filter(|(_, c)| !is_recipe(c))
        .map(|(row, _)| row)
        .collect();
    let mut notes = provenance_notes(cells);
    let columns = drop_empty_columns(columns, &mut rows, &mut notes);
    StudyReport {
        schema_version: REPORT_SCHEMA_VERSION,
        columns,
        min_effect: method.min_effect,
        rows,
        notes,
        ramps: ramp::build(cells, method),
        phases: phases::tables(cells, method),
        cost: None,
        adaptive: None,
    }
}

/// The keys of the columns with a value in some row; the others (commit latency of a
/// workload without commits, write IOPS of randread) leave every row, named in a note.
fn drop_empty_columns(
    columns: &[&'static Figure],
    rows: &mut [CellRow],
    notes: &mut Vec<String>,
) -> Vec<String> {
    let keep: Vec<bool> = (0..columns.len())
        .map(|i| rows.iter().any(|r| r.figures[i].median.is_some()))
        .collect();
    if rows.is_empty() || keep.iter().all(|k| *k) {
        return columns.iter().map(|f| f.key.to_string()).collect();
    }
    for row in rows.iter_mut() {
        let mut i = 0;
        row.figures.retain(|_| (keep[i], i += 1).0);
    }
    let dropped: Vec<&str> = (columns.iter().zip(&keep))
        .filter(|(_, k)| !**k)
        .map(|(f, _)| f.key)
        .collect();
    notes.push(format!(
        "not shown, no cell has a value: {}",
        dropped.join(", ")
    ));
    (columns.iter().zip(&keep))
        .filter(|(_, k)| **k)
        .map(|(f, _)| f.key.to_string())
        .collect()
}

/// Says when runs come from different machines, kernels or tool versions.
fn provenance_notes(cells: &[CellRuns]) -> Vec<String> {
    let mut notes = Vec::new();
    let all = || cells.iter().flat_map(|c| c.runs.iter());
    let distinct = |f: &dyn Fn(&RunRecord) -> String| {
        let mut v: Vec<String> = all().map(f).collect();
        v.sort();
        v.dedup();
        v
    };
    for (what, values) in [
        ("machines", distinct(&|r| r.environment.hostname.clone())),
        ("kernels", distinct(&|r| r.environment.kernel.clone())),
        (
            "bakeoff versions",
            distinct(&|r| {
                format!(
                    "{} {}",
                    r.environment.tool_version,
                    r.environment.git_hash.clone().unwrap_or_default()
                )
            }),
        ),
    ] {
        if values.len() > 1 {
            notes.push(format!(
                "runs come from different {what}: {}",
                values.join(", ")
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::figure;
    use bakeoff_core::verdict::Verdict;

    fn cell(label: &str, values: &[(f64, f64, f64)]) -> CellRuns {
        let runs = values
            .iter()
            .map(|&(iops, amp, busy)| {
                let mut r = crate::fixture::record();
                r.summary.read_iops = Some(iops);
                r.summary.read_amplification = Some(amp);
                r.summary.cpu_busy_pct = Some(busy);
                r
            })
            .collect();
        CellRuns {
            label: label.into(),
            stack: label.into(),
            runs,
            baseline: Some(0),
        }
    }

    #[test]
    fn near_zero_figures_get_a_difference_and_diagnostics_no_verdict() {
        // A cached cell: read amplification structurally near zero, one run exactly 0.
        let cells = [
            cell(
                "base",
                &[(100.0, 1.0, 50.0), (101.0, 1.0, 51.0), (99.0, 1.0, 49.0)],
            ),
            cell(
                "cached",
                &[
                    (300.0, 0.0, 90.0),
                    (310.0, 0.003, 91.0),
                    (305.0, 0.001, 92.0),
                ],
            ),
        ];
        let cols: Vec<_> = ["read_iops", "read_amplification", "cpu_busy_pct"]
            .iter()
            .map(|k| figure(k).unwrap())
            .collect();
        let r = build(&cells, &cols, &Method::default(), 3);
        let [iops, amp, busy] = &r.rows[1].figures[..] else {
            panic!("three figures")
        };
        // IOPS: a ratio and a verdict from the same three values as the median.
        assert_eq!(iops.median, Some(305.0));
        assert!((iops.ratio.unwrap() - 305.0 / 100.0).abs() < 1e-12);
        let v = iops.vs_baseline.as_ref().unwrap();
        assert_eq!((v.verdict, v.n_cell, v.n_baseline), (Verdict::Better, 3, 3));
        // Amplification: the median keeps the zero; no ratio of something near zero.
        assert_eq!((amp.median, amp.min), (Some(0.001), Some(0.0)));
        assert_eq!((amp.ratio, amp.vs_baseline.is_none()), (None, true));
        assert!((amp.difference.unwrap() - (0.001 - 1.0)).abs() < 1e-12);
        // Machine busy %: a diagnostic, compared in points, never better or worse.
        assert_eq!(
            (busy.difference, busy.vs_baseline.is_none()),
            (Some(41.0), true)
        );
    }

    #[test]
    fn a_figure_with_no_value_in_any_cell_is_not_a_column() {
        let cells = [
            cell("base", &[(100.0, 1.0, 50.0)]),
            cell("other", &[(200.0, 1.0, 50.0)]),
        ];
        let cols: Vec<_> = ["read_iops", "commit_lat_p99_us", "cpu_busy_pct"]
            .iter()
            .map(|k| figure(k).unwrap())
            .collect();
        let mut cells = cells;
        for c in &mut cells {
            for r in &mut c.runs {
                r.summary.commit_lat_p99_us = None;
            }
        }
        let r = build(&cells, &cols, &Method::default(), 1);
        assert_eq!(r.columns, ["read_iops", "cpu_busy_pct"]);
        assert!(r.rows.iter().all(|row| row.figures.len() == 2));
        assert_eq!(r.rows[1].figures[0].median, Some(200.0));
        assert!(
            r.notes.iter().any(|n| n.ends_with(": commit_lat_p99_us")),
            "{:?}",
            r.notes
        );
    }
}
