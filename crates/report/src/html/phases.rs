//! The phase tables of a comparison of recipes on the HTML page: per recipe, its phases as
//! rows and the stacks as columns, as the terminal and Markdown show them, each time coloured
//! by its verdict.

use super::verdict_class;
use crate::comparison::phases::text::{cell_lines, headings, LEGEND};
use crate::comparison::phases::{PhaseCell, PhaseRow, PhaseTable};
use maud::{html, Markup};

/// A table per recipe under a heading, and the legend; nothing without recipes.
pub(super) fn section(tables: &[PhaseTable]) -> Markup {
    html! {
        @if !tables.is_empty() {
            h2 #phases { "Phases" }
            @for (n, t) in tables.iter().enumerate() {
                div.wide { (table(t, n)) }
            }
            p.meta { (LEGEND) }
        }
    }
}

fn table(t: &PhaseTable, n: usize) -> Markup {
    html! {
        table.phases id=(format!("phase-table-{}", n + 1)) {
            thead { tr { @for h in headings(t) { th { (h) } } } }
            tbody {
                @for row in &t.rows {
                    tr {
                        th { (row.name) }
                        @for cell in &row.cells { (cell_td(row, cell)) }
                    }
                }
            }
        }
    }
}

/// A cell: the figure with its range, ratio and verdict (coloured), then CPU and device bytes.
fn cell_td(row: &PhaseRow, cell: &PhaseCell) -> Markup {
    let class = match cell.value.vs_baseline.as_ref() {
        Some(c) => format!("num {}", verdict_class(c.verdict)),
        None => "num".into(),
    };
    let lines = cell_lines(row, cell);
    html! {
        td class=(class) {
            @for (i, line) in lines.iter().enumerate() {
                @if i > 0 { br; }
                (line)
            }
        }
    }
}
