//! The comparison's headline figures as a terminal table that fits [`TABLE_WIDTH`] columns.
//! Cells as rows and figures as columns when that fits; else, as hyperfine and criterion do,
//! one row per figure (grouped: throughput, latency, CPU, device, caches) and one column per
//! cell; and if even that is too wide, without the ranges (the CSV, JSON and Markdown keep
//! them). docs/report.md says so.

use super::cell_text::cell_text;
use super::fit::{squeezed, table, TABLE_WIDTH};
use super::study::{CellRow, StudyReport};
use crate::figures::{figure, group_of, GROUPS};
use crate::fmt::width;
use comfy_table::CellAlignment;

/// The first layout that fits: cells as rows, figures as rows, figures as rows without ranges.
pub fn render(r: &StudyReport) -> String {
    let wide = by_cell(r);
    if width(&wide) <= TABLE_WIDTH {
        return wide;
    }
    let tall = by_figure(r, true);
    if width(&tall) <= TABLE_WIDTH {
        return tall;
    }
    by_figure(r, false)
}

/// The headings of the table of headline figures: cell, runs, then each figure's label.
pub(crate) fn headings(r: &StudyReport) -> Vec<String> {
    let mut h = vec!["cell".to_string(), "runs".into()];
    h.extend(
        r.columns
            .iter()
            .map(|k| figure(k).map_or(k.clone(), |f| f.label.to_string())),
    );
    h
}

/// The texts of one cell's row of that table: its label, runs, then each figure.
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

/// One row per cell, one column per figure.
fn by_cell(r: &StudyReport) -> String {
    let mut t = table(headings(r));
    for row in &r.rows {
        t.add_row(row_cells(r, row, true));
    }
    t.to_string()
}

/// One row per figure under its group's heading, one column per cell.
fn by_figure(r: &StudyReport, with_range: bool) -> String {
    let mut header = vec![String::new()];
    header.extend(r.rows.iter().map(|row| match row.is_baseline {
        true => format!("{}\n(baseline)", row.label),
        false => row.label.clone(),
    }));
    let mut t = table(header);
    let mut runs = vec!["runs".to_string()];
    runs.extend(r.rows.iter().map(|row| row.runs.to_string()));
    t.add_row(runs);
    let mut order: Vec<usize> = (0..r.columns.len()).collect();
    order.sort_by_key(|&i| group_of(&r.columns[i]));
    let mut group = usize::MAX;
    for i in order {
        let key = &r.columns[i];
        let def = figure(key);
        if group_of(key) != group {
            group = group_of(key);
            let name = GROUPS.get(group).map_or("other", |(name, _)| name);
            t.add_row(vec![name.to_string()]);
        }
        let mut line = vec![format!("  {}", def.map_or(key.as_str(), |f| f.label))];
        line.extend((r.rows.iter()).map(|row| cell_text(&row.figures[i], def, with_range)));
        t.add_row(line);
    }
    for i in 1..=r.rows.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    match with_range {
        true => t.to_string(),
        false => squeezed(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_cell_labels_wrap_to_keep_the_width() {
        let mut r = crate::fixture::study(&["read_iops", "read_lat_p99_us"]);
        for row in &mut r.rows {
            row.label = format!("dir=/var/tmp/a/rather/long/path/{} / randread", row.label);
        }
        let text = render(&r);
        assert!(width(&text) <= TABLE_WIDTH, "{text}");
        assert!(text.contains("1.22 ms"), "{text}");
    }

    #[test]
    fn a_wide_comparison_turns_to_one_row_per_figure_and_fits() {
        let every: Vec<&str> = crate::figures::FIGURES.iter().map(|f| f.key).collect();
        let r = crate::fixture::study(&every);
        let text = render(&r);
        assert!(width(&text) <= TABLE_WIDTH, "{text}");
        assert!(text.contains("│ latency"), "grouped:\n{text}");
        // No figure without a value in some cell, and latencies in the one grammar.
        assert!(!text.contains("commit p99"), "{text}");
        assert!(!text.contains(" µs/") && !text.contains("us "), "{text}");
        insta::assert_snapshot!(text);
    }
}
