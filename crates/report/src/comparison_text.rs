//! The comparison as a terminal table, Markdown or CSV. Each figure shows the median, the range
//! over repetitions, and against the baseline the ratio and the verdict:
//! `48,902 [47,1k–50,2k] ×0.50 worse`.

use crate::comparison::{CellRow, FigureCell, StudyReport};
use crate::figures::{figure, Figure};
use bakeoff_core::verdict::Verdict;
use std::fmt::Write;

fn number(v: f64, decimals: usize) -> String {
    if decimals == 0 {
        crate::fmt::group(v.round().max(0.0) as u64)
    } else {
        format!("{v:.decimals$}")
    }
}

pub(crate) fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::NoSignificantDifference => "same",
        Verdict::TooFewSamples => "too few runs",
    }
}

/// The compact mark used in tables: + better, - worse, = no significant difference, ? too few.
pub(crate) fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "+",
        Verdict::Worse => "-",
        Verdict::NoSignificantDifference => "=",
        Verdict::TooFewSamples => "?",
    }
}

/// The text of one figure cell: `median [min–max]` and, against the baseline, `×ratio` with the
/// verdict mark (diagnostic figures: no mark), or `+difference` for percentages and figures that
/// are (near) zero on a side.
pub(crate) fn cell_text(f: &FigureCell, def: Option<&Figure>, with_range: bool) -> String {
    let decimals = def.map_or(1, |d| d.decimals);
    let micros = def.is_some_and(|d| d.micros);
    let value = |v: f64| match micros {
        true => crate::fmt::micros(Some(v)),
        false => number(v, decimals),
    };
    let Some(m) = f.median else { return "-".into() };
    let mut s = value(m);
    if with_range {
        if let (Some(a), Some(b)) = (f.min, f.max) {
            if a != b {
                let _ = write!(s, " [{}–{}]", value(a), value(b));
            }
        }
    }
    let mark = f
        .vs_baseline
        .as_ref()
        .map_or("", |c| verdict_mark(c.verdict));
    if let Some(r) = f.ratio.filter(|r| r.is_finite()) {
        let _ = write!(s, " ×{r:.2}{mark}");
    } else if let Some(d) = f.difference.filter(|d| d.is_finite()) {
        let unit = if def.is_some_and(|d| d.percent) {
            " pt"
        } else {
            ""
        };
        let sign = if d < 0.0 { "−" } else { "+" };
        let magnitude = match micros {
            true => crate::fmt::micros(Some(d.abs())),
            false => signed(d.abs(), decimals.max(1)),
        };
        let _ = write!(s, " {sign}{magnitude}{unit}");
    }
    s
}

fn signed(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

pub(crate) fn headings(r: &StudyReport) -> Vec<String> {
    let mut h = vec!["cell".to_string(), "runs".into()];
    h.extend(
        r.columns
            .iter()
            .map(|k| figure(k).map_or(k.clone(), |f| f.label.to_string())),
    );
    h
}

pub(crate) fn row_cells(r: &StudyReport, row: &CellRow, with_range: bool) -> Vec<String> {
    let label = if row.is_baseline {
        format!("{} (baseline)", row.label)
    } else {
        row.label.clone()
    };
    let mut cells = vec![label, row.runs.to_string()];
    for (k, f) in r.columns.iter().zip(&row.figures) {
        cells.push(cell_text(f, figure(k), with_range));
    }
    cells
}

fn findings_text(r: &StudyReport, bullet: &str) -> String {
    let mut s = String::new();
    for row in r.rows.iter().filter(|row| !row.findings.is_empty()) {
        let _ = writeln!(s, "\n{}:", row.label);
        for f in &row.findings {
            let _ = writeln!(
                s,
                "{bullet}{}: {} ({}). {}",
                f.id, f.title, f.evidence, f.suggestion
            );
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "\nnote: {n}");
    }
    s
}

/// True when the comparison has a table of headline figures to show: it has cells that are not
/// recipes, or nothing else.
pub(crate) fn has_figures(r: &StudyReport) -> bool {
    !r.rows.is_empty() || r.phases.is_empty()
}

/// A terminal table (and a phase table per recipe), then the findings.
pub fn render_table(r: &StudyReport) -> String {
    let mut s = String::new();
    if has_figures(r) {
        let legend = format!(
            "median [range over repetitions] ×ratio to the baseline: + better, - worse, = no significant difference, ? too few repetitions (minimum effect {:.0}%; docs/verdicts.md); no mark: a diagnostic figure; ±difference (pt: percentage points) where a ratio would mislead",
            r.min_effect * 100.0
        );
        if let Some(answer) = crate::comparison_answer::answer(r) {
            let _ = writeln!(
                s,
                "{}\n",
                crate::fmt::wrap(&answer, crate::comparison_table::TABLE_WIDTH)
            );
        }
        let table = crate::comparison_table::render(r);
        let legend = crate::fmt::wrap(&legend, crate::comparison_table::TABLE_WIDTH);
        let _ = writeln!(s, "{table}\n{legend}");
    }
    if let Some(ramps) = &r.ramps {
        s += &crate::ramp_comparison_text::render_table(ramps);
    }
    s += &crate::comparison_phases::render_table(&r.phases);
    s + &findings_text(r, "  - ")
}

/// A Markdown table (and a phase table per recipe), then the findings.
pub fn render_markdown(r: &StudyReport) -> String {
    let mut s = String::new();
    if has_figures(r) {
        if let Some(answer) = crate::comparison_answer::answer(r) {
            let _ = writeln!(s, "**{answer}**\n");
        }
        let h = headings(r);
        let _ = write!(s, "| {} |\n|{}\n", h.join(" | "), "---|".repeat(h.len()));
        for row in &r.rows {
            let _ = writeln!(s, "| {} |", row_cells(r, row, true).join(" | "));
        }
        let _ = writeln!(s, "\nMedian [range over repetitions] ×ratio to the baseline: + better, - worse, = no significant difference, ? too few repetitions; minimum effect {:.0}%. No mark: a diagnostic figure; ±difference (pt: percentage points) where a ratio would mislead.", r.min_effect * 100.0);
    }
    if let Some(ramps) = &r.ramps {
        s.push_str(&crate::ramp_comparison_text::render_markdown(ramps));
    }
    if has_figures(r) && !r.phases.is_empty() {
        s.push('\n');
    }
    s += &crate::comparison_phases::render_markdown(&r.phases);
    s + &findings_text(r, "- ")
}

/// CSV: one row per cell and figure, base units, empty cells where a figure does not apply; a
/// study of recipes: one row per recipe, phase and stack (`comparison_phases::render_csv`).
pub fn render_csv(r: &StudyReport) -> String {
    if !has_figures(r) {
        return crate::comparison_phases::render_csv(&r.phases);
    }
    let mut s = String::from(CSV_HEAD);
    for row in &r.rows {
        let cell = (
            row.label.as_str(),
            row.stack.as_str(),
            row.runs,
            row.is_baseline,
        );
        for (k, f) in r.columns.iter().zip(&row.figures) {
            s.push_str(&csv_row(cell, k, f));
        }
    }
    if let Some(ramps) = &r.ramps {
        s.push_str(&crate::ramp_comparison_text::csv_rows(ramps));
    }
    s
}

/// The heading of the comparison CSV.
pub(crate) const CSV_HEAD: &str =
    "cell,stack,runs,baseline,figure,median,min,max,ratio,difference,ci_low,ci_high,p_value,verdict\n";

/// One row of the comparison CSV: a figure of a cell, base units, empty where it does not apply.
pub(crate) fn csv_row(
    (label, stack, runs, is_baseline): (&str, &str, usize, bool),
    key: &str,
    f: &FigureCell,
) -> String {
    let (opt, quote) = (crate::fmt::csv_number, crate::fmt::csv_text);
    let c = f.vs_baseline.as_ref();
    format!(
        "{},{},{runs},{is_baseline},{key},{},{},{},{},{},{},{},{},{}\n",
        quote(label),
        quote(stack),
        opt(f.median),
        opt(f.min),
        opt(f.max),
        opt(f.ratio),
        opt(f.difference),
        opt(c.map(|c| c.ci_low)),
        opt(c.map(|c| c.ci_high)),
        opt(c.and_then(|c| c.p_value)),
        c.map_or("", |c| verdict_word(c.verdict)),
    )
}

/// JSON with `schema_version`.
pub fn render_json(r: &StudyReport) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("reports serialise");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparison::{build, CellRuns};
    use bakeoff_core::verdict::Method;

    fn report() -> StudyReport {
        crate::fixture::study(&["read_iops", "cpu_busy_pct", "read_amplification"])
    }

    #[test]
    fn markdown_golden() {
        insta::assert_snapshot!(render_markdown(&report()));
    }

    #[test]
    fn csv_golden() {
        insta::assert_snapshot!(render_csv(&report()));
    }

    #[test]
    fn json_golden() {
        insta::assert_snapshot!(render_json(&report()));
    }

    #[test]
    fn results_from_different_machines_are_noted() {
        let base = crate::fixture::record();
        let mut other = base.clone();
        other.environment.hostname = "elsewhere".into();
        let cells = vec![
            CellRuns {
                label: "a".into(),
                stack: "raw".into(),
                runs: vec![base.clone()],
                baseline: Some(0),
            },
            CellRuns {
                label: "b".into(),
                stack: "ext4".into(),
                runs: vec![other],
                baseline: Some(0),
            },
        ];
        let r = build(
            &cells,
            &[figure("read_iops").unwrap()],
            &Method::default(),
            3,
        );
        assert!(
            r.notes.iter().any(|n| n.contains("different machines")),
            "{:?}",
            r.notes
        );
        assert!(render_markdown(&r).contains("note: runs come from different machines"));
    }

    #[test]
    fn table_golden() {
        insta::assert_snapshot!(render_table(&report()));
    }
}
