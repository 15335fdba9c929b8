//! A run as CSV: per-second samples (`--export-timeseries`) or one row of headline figures
//! (`--export-csv`). A figure that does not apply is an empty cell, never 0.

use bakeoff_core::plan::OpKind;
use bakeoff_core::record::{RunRecord, Sample};
use std::fmt::Write;

/// Header line of the time-series CSV.
pub const HEADER: &str = "t_s,measured,read_iops,write_iops,read_mb_s,write_mb_s,cpu_busy_pct,\
device_read_iops,device_write_iops,device_read_mb_s,device_write_mb_s,dirty_bytes,cached_bytes";

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

fn f(v: Option<f64>) -> String {
    opt(v.map(|x| format!("{x:.3}")))
}

/// The CSV text, header first: [`HEADER`], then for each operation kind any sample has latency
/// for, `<kind>_lat_p50_ns,<kind>_lat_p99_ns,<kind>_lat_max_ns` (empty where it had none).
pub fn render_timeseries(samples: &[Sample]) -> String {
    let kinds: Vec<OpKind> = OpKind::ALL
        .into_iter()
        .filter(|k| samples.iter().any(|s| s.lat.iter().any(|l| l.kind == *k)))
        .collect();
    let mut out = HEADER.to_string();
    for k in &kinds {
        let k = k.name();
        let _ = write!(out, ",{k}_lat_p50_ns,{k}_lat_p99_ns,{k}_lat_max_ns");
    }
    out.push('\n');
    for s in samples {
        let _ = write!(
            out,
            "{:.3},{},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{},{}",
            s.t_s,
            s.measured,
            s.read_iops,
            s.write_iops,
            s.read_mb_s,
            s.write_mb_s,
            f(s.cpu_busy_pct),
            f(s.device_read_iops),
            f(s.device_write_iops),
            f(s.device_read_mb_s),
            f(s.device_write_mb_s),
            opt(s.dirty_bytes),
            opt(s.cached_bytes),
        );
        for k in &kinds {
            let l = s.lat.iter().find(|l| l.kind == *k);
            let _ = write!(
                out,
                ",{},{},{}",
                opt(l.map(|l| l.p50_ns)),
                opt(l.map(|l| l.p99_ns)),
                opt(l.map(|l| l.max_ns))
            );
        }
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One header line and one row: what ran where, then the headline figures of the comparison
/// table (`summary` keys, base units) so rows of several runs can be stacked in a spreadsheet.
pub fn render_summary(r: &RunRecord) -> String {
    let figures = crate::figures::FIGURES;
    let mut head = vec![
        "workload",
        "target",
        "stack",
        "status",
        "measured_s",
        "threads",
    ];
    head.extend(figures.iter().map(|f| f.key));
    let status = serde_json::to_value(r.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut row = vec![
        field(&r.plan.workload),
        field(&r.target.path),
        field(r.stack.as_ref().map_or("", |s| s.spec.as_str())),
        status,
        format!("{:.3}", r.measured_ns as f64 / 1e9),
        r.plan.threads().to_string(),
    ];
    row.extend(figures.iter().map(|f| opt((f.get)(&r.summary))));
    format!("{}\n{}\n", head.join(","), row.join(","))
}

#[cfg(test)]
mod tests {
    #[test]
    fn missing_figures_are_empty_cells_not_zero() {
        let r = crate::fixture::record();
        insta::assert_snapshot!(super::render_timeseries(&r.samples), @r"
        t_s,measured,read_iops,write_iops,read_mb_s,write_mb_s,cpu_busy_pct,device_read_iops,device_write_iops,device_read_mb_s,device_write_mb_s,dirty_bytes,cached_bytes,read_lat_p50_ns,read_lat_p99_ns,read_lat_max_ns
        1.000,true,12000.000,0.000,98.304,0.000,55.500,12010.000,0.000,98.386,0.000,4096,1073741824,310000,1240000,12400000
        2.000,true,11800.000,0.000,96.666,0.000,,,,,,,,310000,2010000,12400000
        ");
    }

    #[test]
    fn summary_is_one_row_of_headline_figures() {
        let mut r = crate::fixture::record();
        r.target.path = "/mnt/a,b".into();
        insta::assert_snapshot!(super::render_summary(&r));
    }
}
