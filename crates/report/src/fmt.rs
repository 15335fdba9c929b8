//! The one unit grammar of every human-readable output (terminal, Markdown, HTML, `--dry-run`):
//!
//! * durations and latencies: three significant digits, a space, then `ns`, `µs`, `ms` or `s`
//!   (`812 ns`, `45.2 µs`, `310 µs`, `2.26 ms`); never `us`, never `2,261 µs`;
//! * sizes: base 1024 with a space (`8 KiB`, `1.5 GiB`);
//! * counts and rates: thousands separators from 100 up (`12,345`), one decimal below;
//! * percentages: one decimal and `%` with no space (`12.5%`), differences of them in
//!   percentage points (`+3.1 pt`).
//!
//! Machine formats (JSON, CSV) keep base units in field names and never use these.

use bakeoff_core::units::{format_bytes, format_count, format_nanos, format_rate};

/// A duration or latency in nanoseconds: `2.26 ms`, `310 µs`.
pub fn duration(ns: f64) -> String {
    format_nanos(ns)
}

/// A duration or latency in microseconds (the `_us` figures of a summary), or `-`.
pub fn micros(us: Option<f64>) -> String {
    us.map_or_else(|| "-".into(), |u| format_nanos(u * 1e3))
}

/// A size in bytes: `8 KiB`.
pub fn size(b: u64) -> String {
    format_bytes(b)
}

/// `12,345` for counts and rates of at least 100; one decimal below.
pub fn rate(v: f64) -> String {
    format_rate(v)
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays
/// whole on its own line).
pub fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.join("\n")
}

/// The widest line of `text`, in characters.
pub fn width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Thousands separators.
pub fn group(n: u64) -> String {
    format_count(n)
}

/// "1 thread", "7 threads".
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
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
