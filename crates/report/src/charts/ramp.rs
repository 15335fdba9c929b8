//! The charts of a load ramp (seed 004's Figures 1–4): response time, CPU, device bandwidth
//! and memory against the load each point achieved, in order of offered rate; and the curves'
//! definitions a comparison of ramps draws too (`ramp_study`).

use super::{spanning, zero_based, Chart, ChartKind, Guide, Point, Series};
use bakeoff_core::ramp::{RampPoint, RampRecord};

fn mib(bytes: Option<u64>) -> Option<f64> {
    bytes.map(|v| v as f64 / 1048576.0)
}

fn ms(ns: Option<u64>) -> Option<f64> {
    ns.map(|v| v as f64 / 1e6)
}

/// A quantity of a point: its legend name and how to read it.
pub(super) type Column = (&'static str, fn(&RampPoint) -> Option<f64>);

/// One of the four curves: id stem, title and value axis label.
pub(super) struct Curve {
    pub stem: &'static str,
    pub title: &'static str,
    pub y_label: &'static str,
}

/// Figure 1: response time (the run's columns; a study draws the limit's statistic).
pub(super) const LATENCY: Curve = Curve {
    stem: "latency",
    title: "Response time against load",
    y_label: "response time (ms, from the scheduled start)",
};
/// Figure 2.
pub(super) const CPU: Curve = Curve {
    stem: "cpu",
    title: "Machine CPU against load",
    y_label: "machine CPU (% of all CPUs)",
};
/// Figure 3.
pub(super) const DEVICES: Curve = Curve {
    stem: "devices",
    title: "Stack devices: bandwidth against load",
    y_label: "device throughput (MB/s, 10^6 bytes)",
};
/// Figure 4.
pub(super) const MEMORY: Curve = Curve {
    stem: "memory",
    title: "Memory and dataset against load",
    y_label: "MiB",
};

pub(super) const BUSY: Column = ("busy", |p| p.cpu.as_ref().map(|c| c.busy_pct));
pub(super) const DEVICE_READS: Column = ("device reads", |p| p.device_read_mb_s);
pub(super) const DEVICE_WRITES: Column = ("device writes", |p| p.device_write_mb_s);
pub(super) const PAGE_CACHE: Column = ("page cache", |p| mib(p.page_cache_bytes));
pub(super) const ARC: Column = ("ZFS ARC", |p| mib(p.arc_bytes));

/// Every chart of a ramp that has data.
pub fn run_charts(r: &RampRecord) -> Vec<Chart> {
    let limit_ms = r.spec.limit.max_ns as f64 / 1e6;
    let latency = curve(
        r,
        &LATENCY,
        &[
            ("mean", |p| p.lat_mean_ns.map(|v| v / 1e6)),
            ("p99", |p| ms(p.lat_p99_ns)),
            ("p99.9", |p| ms(p.lat_p999_ns)),
        ],
    )
    .map(|c| with_limit(c, limit_ms, &r.limit));
    let cpu = curve(
        r,
        &CPU,
        &[BUSY, ("system", |p| p.cpu.as_ref().map(|c| c.system_pct))],
    );
    let devices = curve(r, &DEVICES, &[DEVICE_READS, DEVICE_WRITES]);
    let memory = curve(
        r,
        &MEMORY,
        &[
            PAGE_CACHE,
            ("dirty (max)", |p| mib(p.dirty_max_bytes)),
            ARC,
            ("dataset", |p| mib(Some(p.dataset_bytes))),
        ],
    );
    [latency, cpu, devices, memory]
        .into_iter()
        .flatten()
        .collect()
}

/// `chart` with the latency limit drawn and kept in view.
pub(super) fn with_limit(mut chart: Chart, limit_ms: f64, limit: &str) -> Chart {
    chart.guides.push(Guide::AtY {
        y: limit_ms,
        label: format!("limit: {limit}"),
    });
    // Headroom above the limit, so its line is not the chart's frame.
    chart.y = zero_based(chart.y.label.clone(), [chart.y.max, limit_ms * 1.1]);
    chart
}

/// Lines of `columns` over the points' achieved ops/s, in order of offered rate; `None` if
/// no column has a value.
fn curve(r: &RampRecord, figure: &Curve, columns: &[Column]) -> Option<Chart> {
    let mut points: Vec<&RampPoint> = r.points.iter().collect();
    points.sort_by(|a, b| a.offered_ops_s.total_cmp(&b.offered_ops_s));
    let series = columns
        .iter()
        .map(|(name, get)| Series {
            name: name.to_string(),
            points: (points.iter())
                .filter_map(|p| {
                    let y = get(p).filter(|v| v.is_finite())?;
                    Some(Point {
                        x: p.achieved_ops_s,
                        y,
                        ..Point::default()
                    })
                })
                .collect(),
        })
        .collect();
    lines(
        (format!("ramp_{}", figure.stem), figure.title.into()),
        figure.y_label.into(),
        series,
        "One point per load point of the ramp (climbing and bisecting), at the rate it \
         achieved; caches were not dropped between points.",
    )
}

/// A chart of lines over achieved ops/s from the series that have points; `None` if none
/// has. The value axis covers every point's range.
pub(super) fn lines(
    (id, title): (String, String),
    y_label: String,
    series: Vec<Series>,
    caption: &str,
) -> Option<Chart> {
    let series: Vec<Series> = series
        .into_iter()
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let points = || series.iter().flat_map(|s| s.points.iter());
    Some(Chart {
        id,
        title,
        kind: ChartKind::Lines,
        x: spanning("achieved load (ops/s)", points().map(|p| p.x)),
        y: zero_based(
            y_label,
            points().map(|p| p.high.unwrap_or(p.y).max(p.y) * 1.04),
        ),
        categories: Vec::new(),
        series,
        guides: Vec::new(),
        caption: caption.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ramp_fixture::{ramp, DIRECT};

    #[test]
    fn a_ramps_curves_follow_the_offered_rate_with_the_limit_marked() {
        let charts = run_charts(&ramp(DIRECT, 1.0));
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            ["ramp_latency", "ramp_cpu", "ramp_devices", "ramp_memory"]
        );
        let lat = &charts[0];
        assert!(lat.guides.contains(&Guide::AtY {
            y: 5.0,
            label: "limit: p99 <= 5.00 ms".into()
        }));
        let memory = &charts[3];
        assert!(
            memory.series.iter().all(|s| s.name != "ZFS ARC"),
            "no ARC off ZFS: no line"
        );
        let text: String = charts.iter().map(|c| format!("{c}\n")).collect();
        insta::assert_snapshot!(text);
    }
}
