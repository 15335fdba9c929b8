//! The charts of a load ramp (seed 004's Figures 1–4): response time, CPU, device bandwidth
//! and memory against the load each point achieved, in order of offered rate; and for a
//! comparison of ramps, each cell's highest rate within the limit.

use super::{categories_axis, spanning, zero_based, Chart, ChartKind, Guide, Point, Series};
use crate::ramp_comparison::{RampComparison, MAX_OPS};
use bakeoff_core::ramp::{RampPoint, RampRecord};

fn mib(bytes: Option<u64>) -> Option<f64> {
    bytes.map(|v| v as f64 / 1048576.0)
}

fn ms(ns: Option<u64>) -> Option<f64> {
    ns.map(|v| v as f64 / 1e6)
}

/// A quantity of a point: its legend name and how to read it.
type Column = (&'static str, fn(&RampPoint) -> Option<f64>);

/// Every chart of a ramp that has data.
pub fn run_charts(r: &RampRecord) -> Vec<Chart> {
    let latency = curve(
        r,
        ("ramp_latency", "Response time against load"),
        "response time (ms, from the scheduled start)",
        &[
            ("mean", |p| p.lat_mean_ns.map(|v| v / 1e6)),
            ("p99", |p| ms(p.lat_p99_ns)),
            ("p99.9", |p| ms(p.lat_p999_ns)),
        ],
    )
    .map(|mut c| {
        c.guides.push(Guide::AtY {
            y: r.spec.limit.max_ns as f64 / 1e6,
            label: format!("limit: {}", r.limit),
        });
        c.y = zero_based(
            c.y.label.clone(),
            [c.y.max, r.spec.limit.max_ns as f64 / 1e6],
        );
        c
    });
    let cpu = curve(
        r,
        ("ramp_cpu", "Machine CPU against load"),
        "machine CPU (% of all CPUs)",
        &[
            ("busy", |p| p.cpu.as_ref().map(|c| c.busy_pct)),
            ("system", |p| p.cpu.as_ref().map(|c| c.system_pct)),
        ],
    );
    let devices = curve(
        r,
        ("ramp_devices", "Stack devices: bandwidth against load"),
        "device throughput (MB/s, 10^6 bytes)",
        &[
            ("device reads", |p| p.device_read_mb_s),
            ("device writes", |p| p.device_write_mb_s),
        ],
    );
    let memory = curve(
        r,
        ("ramp_memory", "Memory and dataset against load"),
        "MiB",
        &[
            ("page cache", |p| mib(p.page_cache_bytes)),
            ("dirty (max)", |p| mib(p.dirty_max_bytes)),
            ("ZFS ARC", |p| mib(p.arc_bytes)),
            ("dataset", |p| mib(Some(p.dataset_bytes))),
        ],
    );
    [latency, cpu, devices, memory]
        .into_iter()
        .flatten()
        .collect()
}

/// Lines of `columns` over the points' achieved ops/s, in order of offered rate; `None` if
/// no column has a value.
fn curve(
    r: &RampRecord,
    (id, title): (&str, &str),
    y_label: &str,
    columns: &[Column],
) -> Option<Chart> {
    let mut points: Vec<&RampPoint> = r.points.iter().collect();
    points.sort_by(|a, b| a.offered_ops_s.total_cmp(&b.offered_ops_s));
    let series: Vec<Series> = columns
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
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.y));
    Some(Chart {
        id: id.into(),
        title: title.into(),
        kind: ChartKind::Lines,
        x: spanning(
            "achieved load (ops/s)",
            points.iter().map(|p| p.achieved_ops_s),
        ),
        y: zero_based(y_label, ys.map(|v| v * 1.04)),
        categories: Vec::new(),
        series,
        guides: Vec::new(),
        caption: "One point per load point of the ramp (climbing and bisecting), at the rate it \
                  achieved; caches were not dropped between points."
            .into(),
    })
}

/// Each cell's highest rate within the limit, one chart per group of compared cells.
pub fn study_charts(rc: &RampComparison) -> Vec<Chart> {
    rc.groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let points: Vec<Point> = (g.rows.iter().enumerate())
                .filter_map(|(n, row)| {
                    let c = &row.max_ops_s;
                    Some(Point {
                        x: n as f64,
                        y: c.median?,
                        low: c.min,
                        high: c.max,
                        note: super::study::note(c, &MAX_OPS, row.is_baseline),
                        baseline: row.is_baseline,
                    })
                })
                .collect();
            if points.is_empty() {
                return None;
            }
            let ends = points.iter().flat_map(|p| [p.y, p.high.unwrap_or(p.y)]);
            let labels = g.rows.iter().map(|row| match row.is_baseline {
                true => format!("{} (baseline)", row.label),
                false => row.label.clone(),
            });
            Some(Chart {
                id: format!("ramp_max_ops_{i}"),
                title: format!("Highest rate within {}", g.limit),
                kind: ChartKind::BarsWithRange,
                x: categories_axis("cell", g.rows.len()),
                y: zero_based("highest rate within the limit (ops/s)", ends),
                categories: labels.collect(),
                series: vec![Series {
                    name: "median over repetitions".into(),
                    points,
                }],
                guides: Vec::new(),
                caption: format!(
                    "Bar: the median over repetitions of the highest achieved rate whose {} \
                     met the limit; whisker: smallest to largest repetition; beside it the \
                     ratio to the baseline with its verdict. Higher is better.",
                    g.limit.split(" <=").next().unwrap_or("latency")
                ),
            })
        })
        .collect()
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
            label: "limit: p99 <= 5.00ms".into()
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
