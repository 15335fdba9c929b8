//! The HTML page of a comparison: the table with verdict colours, the charts, the findings.

use super::{charts_section, page, verdict_class};
use crate::comparison::cell_text::{cell_text, verdict_word};
use crate::comparison::text::has_figures;
use crate::comparison::{CellRow, FigureCell, StudyReport};
use crate::figures::figure;
use bakeoff_core::findings::{Finding, Severity};
use maud::{html, Markup};

/// The comparison as one self-contained HTML page.
pub fn render_study(r: &StudyReport) -> String {
    let phase_runs = r.phases.iter().flat_map(|t| &t.runs);
    let runs: usize = r.rows.iter().map(|row| row.runs).sum::<usize>() + phase_runs.sum::<usize>();
    let cells = r.rows.len() + r.phases.iter().map(|t| t.stacks.len()).sum::<usize>();
    let title = format!("bakeoff comparison: {cells} cells");
    let body = html! {
        h1 { (title) }
        @if let Some(answer) = crate::comparison::answer::answer(r) {
            p.answer #answer { (answer) }
        }
        p.meta {
            (cells) " cells, " (runs) " runs; each figure is the median over a cell's \
            repetitions with their range, against its baseline: the ratio and a verdict \
            (minimum effect " (format!("{:.0}", r.min_effect * 100.0)) "%)."
        }
        @if has_figures(r) {
            h2 #comparison { "Comparison" }
            (legend())
            div.wide { (table(r)) }
        }
        (super::phases::section(&r.phases))
        // The charts before the findings: a study's findings run to pages, and the charts are
        // what a reader takes in first.
        (charts_section(&crate::charts::study::charts(r)))
        (findings(r))
    };
    page(&title, body)
}

fn legend() -> Markup {
    html! {
        p.legend {
            span.better { "+ better" }
            span.worse { "- worse" }
            span.same { "= no significant difference" }
            span.few { "? too few repetitions" }
            "no colour: the baseline, or a diagnostic figure (more is neither better nor \
             worse); ±difference (pt: percentage points) where a ratio would mislead. Click a \
             heading to sort."
        }
    }
}

fn figure_cell(key: &str, cell: &FigureCell) -> Markup {
    let class = match cell.vs_baseline.as_ref() {
        Some(c) => format!("num {}", verdict_class(c.verdict)),
        None => "num".into(),
    };
    let title = cell.vs_baseline.as_ref().map(|c| {
        format!(
            "{}: ratio {:.3}, interval {:.3}–{:.3}",
            verdict_word(c.verdict),
            c.ratio,
            c.ci_low,
            c.ci_high
        )
    });
    // The range goes under the value, so that a row of figures fits the page's width.
    let range = match (cell.min, cell.max) {
        (Some(a), Some(b)) if a != b => {
            let span = FigureCell {
                median: Some(a),
                ..FigureCell::default()
            };
            let to = FigureCell {
                median: Some(b),
                ..FigureCell::default()
            };
            let def = figure(key);
            Some(format!(
                "{}–{}",
                cell_text(&span, def, false),
                cell_text(&to, def, false)
            ))
        }
        _ => None,
    };
    html! {
        td class=(class) title=[title] data-sort=[cell.median] {
            (cell_text(cell, figure(key), false))
            @if let Some(range) = range { br; span.range { (range) } }
        }
    }
}

fn table(r: &StudyReport) -> Markup {
    let label = |k: &String| figure(k).map_or(k.clone(), |f| f.label.to_string());
    html! {
        table.sortable #comparison-table {
            thead {
                tr {
                    th { "cell" }
                    th { "runs" }
                    @for k in &r.columns { th title=(k) { (label(k)) } }
                }
            }
            tbody {
                @for row in &r.rows { (table_row(r, row)) }
            }
        }
    }
}

fn table_row(r: &StudyReport, row: &CellRow) -> Markup {
    html! {
        tr {
            td {
                (row.label)
                @if row.is_baseline { " " strong { "(baseline)" } }
            }
            td.num data-sort=(row.runs) { (row.runs) }
            @for (k, cell) in r.columns.iter().zip(&row.figures) { (figure_cell(k, cell)) }
        }
    }
}

/// One finding: its title, evidence and what to do.
pub(super) fn finding(f: &Finding) -> Markup {
    let class = match f.severity {
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    html! {
        li class=(class) {
            strong { (f.title) } " " code { (f.id) } br;
            (f.evidence) ". " em { (f.suggestion) }
        }
    }
}

fn findings(r: &StudyReport) -> Markup {
    let with: Vec<&CellRow> = r
        .rows
        .iter()
        .filter(|row| !row.findings.is_empty())
        .collect();
    html! {
        @if !with.is_empty() || !r.notes.is_empty() {
            h2 #findings { "Findings" }
            @for row in with {
                h3 { (row.label) }
                ul { @for f in &row.findings { (finding(f)) } }
            }
            @for n in &r.notes { p.warning { "note: " (n) } }
        }
        @if let Some(a) = &r.adaptive {
            h2 #adaptive { "Deciding sooner" }
            ul { @for line in crate::comparison::adaptive::lines(a) { li { (line) } } }
        }
        @if let Some(line) = r.cost.as_ref().and_then(|c| c.line()) {
            p { "cost: " (line) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::tests::assert_self_contained;

    #[test]
    fn a_comparison_page_has_its_table_verdicts_findings_and_charts() {
        let report = crate::fixture::study(&["read_iops", "cpu_busy_pct", "read_amplification"]);
        let html = render_study(&report);
        if let Ok(path) = std::env::var("BAKEOFF_DUMP_HTML") {
            std::fs::write(path, &html).unwrap();
        }
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_self_contained(&html);
        assert_eq!(
            html.matches("<svg").count(),
            4,
            "3 columns and the relative chart"
        );
        assert!(
            html.contains("<td class=\"num worse\""),
            "zfs is worse in read IOPS"
        );
        assert!(html.contains("<td class=\"num same\""), "ext4 is the same");
        assert!(html.contains("48,902 ×0.50-<br><span class=\"range\">47,800–50,100</span>"));
        assert!(html.contains("<p class=\"answer\" id=\"answer\">The baseline raw / slob has"));
        assert!(html.contains("(baseline)"));
        assert_eq!(
            html.matches("<tr>").count(),
            1 + 3,
            "a heading row and a row per cell"
        );
    }

    #[test]
    fn a_comparison_of_recipes_has_its_phase_table_and_grouped_charts() {
        let html = render_study(&crate::fixture::phase_study());
        assert_self_contained(&html);
        assert!(html.contains("bakeoff comparison: 2 cells") && html.contains("6 runs"));
        assert!(
            !html.contains("id=\"comparison-table\""),
            "no empty table of headline figures"
        );
        assert!(html.contains("id=\"phase-table-1\""));
        assert!(html.contains("ext4 (baseline), 3 runs"));
        assert!(html.contains("<td class=\"num worse\">120.0 [119.5–121.0] ×1.20-"));
        assert!(
            html.contains("<td class=\"num same\">"),
            "the flush is the same"
        );
        assert!(html.contains("cpu 45.0 s<br>dev r 0 B w 3 GiB"));
        for id in [
            "phases_real_s",
            "phases_device_write_mib",
            "phases_command_cpu_s",
        ] {
            assert!(html.contains(&format!("id=\"chart-{id}\"")), "{id}");
        }
        assert_eq!(html.matches("<svg").count(), 3);
    }

    #[test]
    fn five_stacks_of_three_repetitions_with_every_figure_stay_under_2_mb() {
        let mut cells = crate::fixture::THREE_STACKS.to_vec();
        cells.push((
            "xfs:mount=noatime",
            [90_000.0, 91_000.0, 92_000.0],
            1.0,
            57.0,
        ));
        cells.push((
            "btrfs:devices=4,profile=raid10",
            [60_000.0, 65_000.0, 70_000.0],
            2.0,
            60.0,
        ));
        let every: Vec<&str> = crate::figures::FIGURES.iter().map(|f| f.key).collect();
        let html = render_study(&crate::fixture::study_of(&cells, &every));
        assert!(html.len() < 2 << 20, "{} bytes", html.len());
        assert_eq!(html.matches("<tr>").count(), 1 + 5);
        assert!(
            html.matches("<svg").count() > 10,
            "a chart per figure with values"
        );
        eprintln!("{} bytes", html.len());
    }
}
