//! A load ramp's curve: the terminal and Markdown table (one row per point in order of offered
//! rate, with a bar of the limited latency against the limit, so the column reads as the curve),
//! the headline, and the CSV with one row per point.

use crate::fmt::{lat, pct, rate};
use bakeoff_core::ramp::{Phase, RampPoint, RampRecord, RampStep, Stop};
use bakeoff_core::record::RunRecord;
use bakeoff_core::units::{format_bytes, format_nanos};
use std::fmt::Write;

/// Eighths of a block, for bars and sparklines.
const EIGHTHS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
/// Cells of the bar that reach the limit; a bar may run a half again past it.
const BAR_AT_LIMIT: f64 = 8.0;
const BAR_MAX: f64 = 12.0;

/// The points in order of offered rate: the curve.
fn by_rate(r: &RampRecord) -> Vec<&RampPoint> {
    let mut points: Vec<&RampPoint> = r.points.iter().collect();
    points.sort_by(|a, b| a.offered_ops_s.total_cmp(&b.offered_ops_s));
    points
}

/// A bar of `value` where [`BAR_AT_LIMIT`] cells are the limit: `████▌`, `████████████›`.
pub fn bar(value: Option<f64>, limit: f64) -> String {
    let Some(v) = value.filter(|v| v.is_finite() && *v >= 0.0 && limit > 0.0) else {
        return String::new();
    };
    let cells = v / limit * BAR_AT_LIMIT;
    let shown = cells.min(BAR_MAX);
    let eighths = (shown * 8.0).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    if eighths % 8 > 0 {
        s.push(EIGHTHS[eighths % 8 - 1]);
    }
    if cells > BAR_MAX {
        s.push('›');
    }
    s
}

/// A sparkline of `values` scaled to their largest: `▁▂▂▃▅█`.
pub fn sparkline(values: &[f64]) -> String {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().fold(0.0, f64::max);
    values
        .iter()
        .map(|v| {
            let level = if max > 0.0 { v / max * 7.0 } else { 0.0 };
            LEVELS[(level.round() as usize).min(7)]
        })
        .collect()
}

fn mb(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

fn mem(v: Option<u64>) -> String {
    v.map_or("-".into(), format_bytes)
}

fn result_word(p: &RampPoint) -> &'static str {
    match (p.over_limit, p.saturated) {
        (false, false) => "ok",
        (true, true) => "over, saturated",
        (true, false) => "over",
        (false, true) => "saturated",
    }
}

/// Headings and one row per point, in order of offered rate.
fn rows(r: &RampRecord) -> (Vec<String>, Vec<Vec<String>>) {
    let stat = r.spec.limit.stat.to_string();
    let heads = [
        "#",
        "offered/s",
        "achieved/s",
        "mean",
        "p99",
        "p99.9",
        "cpu",
        "CPU/op",
        "dev rd MB/s",
        "dev wr MB/s",
        "cache",
        "dirty max",
    ];
    let mut h: Vec<String> = heads.iter().map(|s| s.to_string()).collect();
    h.push(format!("{stat} vs limit"));
    h.push("result".into());
    let limit = r.spec.limit.max_ns as f64;
    let rows = by_rate(r)
        .into_iter()
        .map(|p| {
            let mark = if p.phase == Phase::Bisect { "b" } else { "" };
            vec![
                format!("{}{mark}", p.index),
                rate(p.offered_ops_s),
                rate(p.achieved_ops_s),
                p.lat_mean_ns.map_or("-".into(), format_nanos),
                lat(p.lat_p99_ns),
                lat(p.lat_p999_ns),
                pct(p.cpu.as_ref().map(|c| c.busy_pct)),
                crate::fmt::micros(p.cpu_us_per_op),
                mb(p.device_read_mb_s),
                mb(p.device_write_mb_s),
                mem(p.page_cache_bytes),
                mem(p.dirty_max_bytes),
                bar(p.limit_stat_ns, limit),
                result_word(p).into(),
            ]
        })
        .collect();
    (h, rows)
}

/// `ramp: until p99 <= 5.00 ms, 3 s points, x1.4 from 100 ops/s; ...`.
fn about(r: &RampRecord) -> String {
    let s = &r.spec;
    let step = match s.step {
        RampStep::Factor(f) => format!("x{f}"),
        RampStep::Add(d) => format!("+{}", rate(d)),
    };
    format!(
        "ramp: until {}, {} points, step {step} from {} ops/s, {} bisection steps; caches \
         not dropped between points",
        r.limit,
        crate::fmt::duration(s.point.as_nanos() as f64),
        rate(s.start_ops_s),
        s.bisect
    )
}

/// The answer: `12,300 ops/s at p99 <= 5.00 ms ...`, and why the ramp stopped.
pub fn headline(r: &RampRecord) -> String {
    let stopped = match (r.stop, r.stopped_at_ops_s) {
        (Stop::Limit | Stop::Saturated, Some(at)) => {
            format!("{} at {} ops/s offered", r.stop.describe(), rate(at))
        }
        (stop, _) => stop.describe().to_string(),
    };
    let Some(h) = &r.headline else {
        return format!("no point met {} ({stopped})", r.limit);
    };
    let at_least = if h.lower_bound { "at least " } else { "" };
    let stat = h.limit_stat_ns.map_or("-".into(), format_nanos);
    format!(
        "{at_least}{} ops/s at {} (point {}: offered {}/s, {} {stat}); stopped: {stopped}",
        rate(h.achieved_ops_s),
        r.limit,
        h.point,
        rate(h.offered_ops_s),
        r.spec.limit.stat,
    )
}

/// The terminal section of a ramp run: what it was, the curve, the headline.
pub fn render_table(r: &RampRecord) -> String {
    let (heads, rows) = rows(r);
    let t = crate::fmt::plain_table(heads, rows, 1..12);
    let stats: Vec<f64> = by_rate(r).iter().filter_map(|p| p.limit_stat_ns).collect();
    let shown = match &r.headline {
        Some(h) => format!("point {}, the headline", h.point),
        None => "the last point".into(),
    };
    format!(
        "{}\n{t}\n{} vs offered load: {}   (#: run order, b: bisection)\nheadline: {}\nthe \
         figures below are those of {shown}\n\n",
        about(r),
        r.spec.limit.stat,
        sparkline(&stats),
        headline(r)
    )
}

/// The same as Markdown.
pub fn render_markdown(r: &RampRecord) -> String {
    let (heads, rows) = rows(r);
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut s = format!("{}\n\n", about(r));
    s.push_str(&line(&heads));
    s.push_str(&line(&vec!["---:".to_string(); heads.len()]));
    for row in &rows {
        s.push_str(&line(row));
    }
    let _ = write!(s, "\nheadline: {}\n\n", headline(r));
    s
}

/// Columns of the per-point CSV, base units.
const CSV_HEAD: &str = "index,phase,offered_ops_s,achieved_ops_s,ops,measured_s,lat_mean_ns,\
lat_p50_ns,lat_p99_ns,lat_p999_ns,lat_max_ns,service_p50_ns,limit_stat_ns,over_limit,saturated,\
cpu_busy_pct,cpu_user_pct,cpu_system_pct,cpu_iowait_pct,cpu_tool_us,cpu_daemons_us,\
cpu_kernel_us,cpu_other_us,cpu_us_per_op,device_read_bytes,device_write_bytes,device_read_mb_s,\
device_write_mb_s,device_util_pct,device_read_bytes_per_op,device_write_bytes_per_op,\
page_cache_bytes,dirty_max_bytes,arc_bytes,dataset_bytes,headline";

/// One row per point in the order run, base units, empty where a figure does not apply.
pub fn render_csv(r: &RampRecord) -> String {
    fn o<T: std::fmt::Display>(v: Option<T>) -> String {
        v.map_or(String::new(), |x| x.to_string())
    }
    let mut s = format!("{CSV_HEAD}\n");
    let best = r.headline.as_ref().map(|h| h.point);
    for p in &r.points {
        let cpu = p.cpu.as_ref();
        let split = cpu.and_then(|c| c.split.as_ref());
        let phase = match p.phase {
            Phase::Climb => "climb",
            Phase::Bisect => "bisect",
        };
        let cells = [
            p.index.to_string(),
            phase.into(),
            p.offered_ops_s.to_string(),
            p.achieved_ops_s.to_string(),
            p.ops.to_string(),
            (p.measured_ns as f64 / 1e9).to_string(),
            o(p.lat_mean_ns),
            o(p.lat_p50_ns),
            o(p.lat_p99_ns),
            o(p.lat_p999_ns),
            o(p.lat_max_ns),
            o(p.service_p50_ns),
            o(p.limit_stat_ns),
            p.over_limit.to_string(),
            p.saturated.to_string(),
            o(cpu.map(|c| c.busy_pct)),
            o(cpu.map(|c| c.user_pct)),
            o(cpu.map(|c| c.system_pct)),
            o(cpu.map(|c| c.iowait_pct)),
            o(split.map(|x| x.tool_us)),
            o(split.map(|x| x.daemons_us)),
            o(split.map(|x| x.kernel_us)),
            o(split.map(|x| x.other_us)),
            o(p.cpu_us_per_op),
            o(p.device_read_bytes),
            o(p.device_write_bytes),
            o(p.device_read_mb_s),
            o(p.device_write_mb_s),
            o(p.device_util_pct),
            o(p.device_read_bytes_per_op()),
            o(p.device_write_bytes_per_op()),
            o(p.page_cache_bytes),
            o(p.dirty_max_bytes),
            o(p.arc_bytes),
            p.dataset_bytes.to_string(),
            (best == Some(p.index)).to_string(),
        ];
        let _ = writeln!(s, "{}", cells.join(","));
    }
    s
}

/// `--export-csv` of a run: a ramp's points, one row each, else the run's headline figures.
pub fn run_csv(r: &RunRecord) -> String {
    match &r.ramp {
        Some(ramp) => render_csv(ramp),
        None => crate::csv::render_summary(r),
    }
}

#[cfg(test)]
mod tests;
