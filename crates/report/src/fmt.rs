//! Number formatting shared by the human-readable exporters.

use bakeoff_core::units::{format_bytes, format_nanos};

/// `12,345` for counts and rates of at least 100; one decimal below.
pub fn rate(v: f64) -> String {
    if v >= 100.0 {
        group(v.round() as u64)
    } else {
        format!("{v:.1}")
    }
}

/// Thousands separators.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A latency in nanoseconds, or `-`.
pub fn lat(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".into(), |n| format_nanos(n as f64))
}

/// Bytes with a binary unit, or `-`.
pub fn bytes(b: Option<f64>) -> String {
    b.map_or_else(|| "-".into(), |v| format_bytes(v.round() as u64))
}

/// A ratio with two decimals, or `-`.
pub fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// A percentage with one decimal, or `-`.
pub fn pct(p: Option<f64>) -> String {
    p.map_or_else(|| "-".into(), |v| format!("{v:.1}%"))
}

/// A borderless table (the terminal summary's style) with columns `right` right-aligned.
pub fn plain_table(
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: std::ops::Range<usize>,
) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(header);
    for row in rows {
        t.add_row(row);
    }
    for i in right {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    t
}

/// A CSV field: a number as Rust prints it, empty for `None`.
pub fn csv_number(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x}"))
}

/// A CSV field: text in quotes, quotes doubled.
pub fn csv_text(t: &str) -> String {
    format!("\"{}\"", t.replace('"', "\"\""))
}
