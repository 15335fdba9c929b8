//! The phase tables as a terminal table, Markdown and CSV: each cell's figure (the median real
//! time, its range, its ratio and verdict), and under it the phase's command CPU and device
//! bytes.

use super::{figure_of, PhaseCell, PhaseRow, PhaseTable};
use crate::comparison::cell_text::{cell_text, verdict_word};
use bakeoff_core::units::format_bytes;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use std::fmt::Write;

/// A cell's lines: the figure, then (for a phase) its CPU and device bytes.
pub(crate) fn cell_lines(row: &PhaseRow, cell: &PhaseCell) -> Vec<String> {
    let mut lines = vec![cell_text(&cell.value, Some(figure_of(&row.figure)), true)];
    if let Some(cpu) = cell.command_cpu_s {
        lines.push(format!("cpu {cpu:.1} s"));
    }
    if let (Some(r), Some(w)) = (cell.device_read_bytes, cell.device_write_bytes) {
        let b = |x: f64| format_bytes(x.round() as u64);
        lines.push(format!("dev r {} w {}", b(r), b(w)));
    }
    lines
}

/// The table's headings: the recipe, then each stack with its runs.
pub(crate) fn headings(t: &PhaseTable) -> Vec<String> {
    let mut h = vec![format!("{} phase", t.recipe.trim())];
    for (i, s) in t.stacks.iter().enumerate() {
        let base = if t.baseline == Some(i) {
            " (baseline)"
        } else {
            ""
        };
        h.push(format!("{s}{base}, {} runs", t.runs[i]));
    }
    h
}

/// A terminal table per recipe.
pub fn render_table(tables: &[PhaseTable]) -> String {
    let mut out = String::new();
    for t in tables {
        let mut table = Table::new();
        table.load_preset(UTF8_FULL_CONDENSED);
        table.set_header(headings(t));
        for row in &t.rows {
            let mut cells = vec![row.name.clone()];
            cells.extend(row.cells.iter().map(|c| cell_lines(row, c).join("\n")));
            table.add_row(cells);
        }
        let _ = writeln!(out, "{table}");
    }
    if !tables.is_empty() {
        out.push_str(LEGEND);
    }
    out
}

/// What the phase tables' cells say, under them.
pub(crate) const LEGEND: &str =
    "phases: median real s [range] ×ratio to the baseline (+ faster, - slower, = \
no significant difference, ? too few runs); cpu: user + sys of the phase's commands; dev: bytes \
read and written on the stack's devices; space and compression read back after the last phase; \
other CPU % and steal %: what other processes and the hypervisor took of the machine's CPU during the runs\n";

/// A Markdown table per recipe.
pub fn render_markdown(tables: &[PhaseTable]) -> String {
    let mut out = String::new();
    for t in tables {
        let h = headings(t);
        let _ = write!(out, "| {} |\n|{}\n", h.join(" | "), "---|".repeat(h.len()));
        for row in &t.rows {
            let cells: Vec<String> = row
                .cells
                .iter()
                .map(|c| cell_lines(row, c).join("<br>"))
                .collect();
            let _ = writeln!(out, "| {} | {} |", row.name, cells.join(" | "));
        }
        out.push('\n');
    }
    if !tables.is_empty() {
        out.push_str(LEGEND);
    }
    out
}

/// CSV: one row per recipe, row and stack, in base units.
pub fn render_csv(tables: &[PhaseTable]) -> String {
    let mut s = String::from(
        "recipe,phase,figure,stack,runs,baseline,median,min,max,ratio,verdict,command_cpu_s,device_read_bytes,device_write_bytes\n",
    );
    let (opt, quote) = (crate::fmt::csv_number, crate::fmt::csv_text);
    for t in tables {
        for row in &t.rows {
            for (i, c) in row.cells.iter().enumerate() {
                let v = &c.value;
                let verdict = v
                    .vs_baseline
                    .as_ref()
                    .map_or("", |x| verdict_word(x.verdict));
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{},{verdict},{},{},{}",
                    quote(t.recipe.trim()),
                    quote(&row.name),
                    row.figure,
                    quote(&t.stacks[i]),
                    t.runs[i],
                    t.baseline == Some(i),
                    opt(v.median),
                    opt(v.min),
                    opt(v.max),
                    opt(v.ratio),
                    opt(c.command_cpu_s),
                    opt(c.device_read_bytes),
                    opt(c.device_write_bytes),
                );
            }
        }
    }
    s
}
