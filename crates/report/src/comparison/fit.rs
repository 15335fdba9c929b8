//! A terminal table that keeps within [`TABLE_WIDTH`] columns: turned so that each column
//! becomes a row when it is too wide, and its cells wrapped as the last resort.

use crate::fmt::width;
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

/// The width the table keeps to: a terminal of 100 columns shows it whole.
pub const TABLE_WIDTH: usize = 100;

/// `t` with its cells wrapped to keep within [`TABLE_WIDTH`] (long cell labels, such as
/// `dir=/a/long/path / randread`, take several lines), as the last resort of each layout.
pub(crate) fn squeezed(mut t: Table) -> String {
    let plain = t.to_string();
    if width(&plain) <= TABLE_WIDTH {
        return plain;
    }
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.set_width(TABLE_WIDTH as u16);
    t.to_string()
}

/// An empty table of the comparison's style under `header`.
pub(crate) fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
}

/// A table of `rows` under `header` (its first column names each row), turned so that each
/// column becomes a row when it is wider than [`TABLE_WIDTH`] as given.
pub fn fitted(header: Vec<String>, rows: Vec<Vec<String>>) -> String {
    let mut t = table(header.clone());
    for row in &rows {
        t.add_row(row.clone());
    }
    let wide = t.to_string();
    if width(&wide) <= TABLE_WIDTH {
        return wide;
    }
    let mut turned = table(
        std::iter::once(String::new())
            .chain(rows.iter().map(|r| r[0].clone()))
            .collect(),
    );
    for (j, name) in header.iter().enumerate().skip(1) {
        let mut line = vec![name.clone()];
        line.extend(rows.iter().map(|r| r.get(j).cloned().unwrap_or_default()));
        turned.add_row(line);
    }
    for i in 1..=rows.len() {
        if let Some(c) = turned.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    squeezed(turned)
}
