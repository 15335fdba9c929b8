//! Per-second samples as CSV (`--timeseries`). A figure that does not apply is an empty cell.

use bakeoff_core::record::Sample;
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

/// The CSV text, header first.
pub fn render_timeseries(samples: &[Sample]) -> String {
    let mut out = format!("{HEADER}\n");
    for s in samples {
        let _ = writeln!(
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
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn missing_figures_are_empty_cells_not_zero() {
        let r = crate::fixture::record();
        insta::assert_snapshot!(super::render_timeseries(&r.samples), @r"
        t_s,measured,read_iops,write_iops,read_mb_s,write_mb_s,cpu_busy_pct,device_read_iops,device_write_iops,device_read_mb_s,device_write_mb_s,dirty_bytes,cached_bytes
        1.000,true,12000.000,0.000,98.304,0.000,55.500,12010.000,0.000,98.386,0.000,4096,1073741824
        2.000,true,11800.000,0.000,96.666,0.000,,,,,,,
        ");
    }
}
