//! The ramp comparison as a terminal table, Markdown, or rows of the comparison CSV: per cell
//! the highest rate within the limit (median [range] ×ratio with its verdict), then what each
//! operation cost at the common load point.

use super::{RampComparison, RampGroup, RampRow, COMMON_FIGURES, MAX_OPS};
use crate::comparison::cell_text::{cell_text, csv_row};
use crate::comparison::cells::FigureCell;
use crate::comparison::fit::{fitted, TABLE_WIDTH};
use crate::fmt::rate;
use std::fmt::Write;

/// The common-point figures any row of `g` has a value for (an ARC column only with ZFS).
fn shown_figures(g: &RampGroup) -> Vec<usize> {
    (0..COMMON_FIGURES.len())
        .filter(|&i| g.rows.iter().any(|r| r.at_common[i].median.is_some()))
        .collect()
}

fn headings(g: &RampGroup, shown: &[usize]) -> Vec<String> {
    let mut h = vec!["cell".to_string(), "runs".into(), MAX_OPS.label.into()];
    h.extend(
        shown
            .iter()
            .map(|&i| COMMON_FIGURES[i].figure.label.to_string()),
    );
    if g.common_ops_s.is_none() {
        h.truncate(3);
    }
    h
}

fn cells(row: &RampRow, shown: &[usize], common: bool) -> Vec<String> {
    let label = if row.is_baseline {
        format!("{} (baseline)", row.label)
    } else {
        row.label.clone()
    };
    let mut max = cell_text(&row.max_ops_s, Some(&MAX_OPS), true);
    if row.lower_bound_runs > 0 {
        max = format!(">= {max}");
    }
    let mut out = vec![label, row.runs.to_string(), max];
    if common {
        out.extend(shown.iter().map(|&i| {
            let f: &FigureCell = &row.at_common[i];
            cell_text(f, Some(&COMMON_FIGURES[i].figure), false)
        }));
    }
    out
}

/// What the group's table shows, in words.
fn intro(g: &RampGroup) -> String {
    let at = match g.common_ops_s {
        Some(rate_) => format!(
            "and what each operation cost at the common load point, {} ops/s offered (the \
             highest rate every cell met the limit at in every repetition; points matched by \
             offered rate, not interpolated)",
            rate(rate_)
        ),
        None => "no common load point: no offered rate met the limit in every run of every \
                 cell (or the ramps' rates differ)"
            .into(),
    };
    format!(
        "ramps: the highest rate within {} (median [range] ×ratio to the baseline), {at}",
        g.limit
    )
}

/// Caveats of the group's rows.
fn notes(g: &RampGroup) -> String {
    let mut s = String::new();
    for r in &g.rows {
        if r.lower_bound_runs > 0 {
            let _ = writeln!(
                s,
                "{}: {} of {} runs reached max_points within the limit: >= is a lower bound",
                r.label, r.lower_bound_runs, r.runs
            );
        }
        if r.none_within_limit_runs > 0 {
            let _ = writeln!(
                s,
                "{}: in {} of {} runs no point met the limit",
                r.label, r.none_within_limit_runs, r.runs
            );
        }
    }
    s
}

/// The terminal form: one table per group.
pub fn render_table(rc: &RampComparison) -> String {
    let mut s = String::new();
    for g in &rc.groups {
        let shown = shown_figures(g);
        let rows = (g.rows.iter())
            .map(|row| cells(row, &shown, g.common_ops_s.is_some()))
            .collect();
        let t = fitted(headings(g, &shown), rows);
        let intro = crate::fmt::wrap(&intro(g), TABLE_WIDTH);
        let _ = write!(s, "\n{intro}\n{t}\n{}", notes(g));
    }
    s
}

/// The Markdown form.
pub fn render_markdown(rc: &RampComparison) -> String {
    let mut s = String::new();
    for g in &rc.groups {
        let shown = shown_figures(g);
        let h = headings(g, &shown);
        let _ = write!(
            s,
            "\n{}.\n\n| {} |\n|{}\n",
            intro(g),
            h.join(" | "),
            "---|".repeat(h.len())
        );
        for row in &g.rows {
            let _ = writeln!(
                s,
                "| {} |",
                cells(row, &shown, g.common_ops_s.is_some()).join(" | ")
            );
        }
        let n = notes(g);
        if !n.is_empty() {
            let _ = write!(s, "\n{n}");
        }
    }
    s
}

/// Rows of the comparison CSV: `ramp.max_ops_s`, `ramp.common_offered_ops_s` and one
/// `ramp.common.<figure>` per figure at the common load point.
pub fn csv_rows(rc: &RampComparison) -> String {
    let mut s = String::new();
    for g in &rc.groups {
        for row in &g.rows {
            let cell = (
                row.label.as_str(),
                row.stack.as_str(),
                row.runs,
                row.is_baseline,
            );
            s.push_str(&csv_row(cell, "ramp.max_ops_s", &row.max_ops_s));
            let common = FigureCell {
                median: g.common_ops_s,
                ..FigureCell::default()
            };
            s.push_str(&csv_row(cell, "ramp.common_offered_ops_s", &common));
            for (f, v) in COMMON_FIGURES.iter().zip(&row.at_common) {
                s.push_str(&csv_row(cell, &format!("ramp.common.{}", f.figure.key), v));
            }
        }
    }
    s
}
