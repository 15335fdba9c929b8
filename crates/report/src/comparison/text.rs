//! The comparison as a terminal table, Markdown, CSV or JSON: the answer, the table of headline
//! figures, the ramps' and the recipes' tables, then the findings and notes.

use super::cell_text::{csv_row, CSV_HEAD};
use super::fit::TABLE_WIDTH;
use super::study::StudyReport;
use super::table::{headings, row_cells};
use super::{answer, phases, ramp, table};
use std::fmt::Write;

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
    if let Some(a) = &r.adaptive {
        let _ = writeln!(s);
        for line in super::adaptive::lines(a) {
            let _ = writeln!(s, "{line}");
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "\nnote: {n}");
    }
    if let Some(line) = r.cost.as_ref().and_then(|c| c.line()) {
        let _ = writeln!(s, "\ncost: {line}");
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
        if let Some(answer) = answer::answer(r) {
            let _ = writeln!(s, "{}\n", crate::fmt::wrap(&answer, TABLE_WIDTH));
        }
        let table = table::render(r);
        let legend = crate::fmt::wrap(&legend, TABLE_WIDTH);
        let _ = writeln!(s, "{table}\n{legend}");
    }
    if let Some(ramps) = &r.ramps {
        s += &ramp::text::render_table(ramps);
    }
    s += &phases::text::render_table(&r.phases);
    s + &findings_text(r, "  - ")
}

/// A Markdown table (and a phase table per recipe), then the findings.
pub fn render_markdown(r: &StudyReport) -> String {
    let mut s = String::new();
    if has_figures(r) {
        if let Some(answer) = answer::answer(r) {
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
        s.push_str(&ramp::text::render_markdown(ramps));
    }
    if has_figures(r) && !r.phases.is_empty() {
        s.push('\n');
    }
    s += &phases::text::render_markdown(&r.phases);
    s + &findings_text(r, "- ")
}

/// CSV: one row per cell and figure, base units, empty cells where a figure does not apply; a
/// study of recipes: one row per recipe, phase and stack (`phases::text::render_csv`).
pub fn render_csv(r: &StudyReport) -> String {
    if !has_figures(r) {
        return phases::text::render_csv(&r.phases);
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
        s.push_str(&ramp::text::csv_rows(ramps));
    }
    s
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
    use crate::figures::figure;
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
