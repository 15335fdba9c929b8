//! The charts of one run: time series of its per-second samples (application throughput,
//! machine CPU, device MB/s, dirty memory), the latency distribution of each operation kind,
//! and where the window's CPU went.

use super::{
    categories_axis, decades, spanning, zero_based, Axis, Chart, ChartKind, Guide, Point, Scale,
    Series,
};
use bakeoff_core::record::{Latency, RunRecord, Sample};

/// Every chart of a run that has data, in reading order: a ramp's curves first (the run's
/// own are then its headline point's).
pub fn charts(r: &RunRecord) -> Vec<Chart> {
    let ramp = r.ramp.iter().flat_map(super::ramp::run_charts);
    let run = [
        throughput(r),
        latency_percentiles(r),
        cpu_busy(r),
        cpu_modes(r),
        cpu_by_whom(r),
        device_throughput(r),
        dirty_memory(r),
    ]
    .into_iter()
    .flatten();
    ramp.chain(run).collect()
}

/// A sampled quantity: its legend name and how to read it from a sample.
type Column = (&'static str, fn(&Sample) -> Option<f64>);

/// Lines over time, one per column with a value in some sample; `None` if no column has one
/// (or every value is zero, which says the quantity is not sampled for this run, as for the
/// application I/O rates of a database run).
/// The y axis runs from zero to at least `y_top`.
fn time_series(
    r: &RunRecord,
    (id, title): (&str, &str),
    (y_label, y_top): (&str, f64),
    columns: &[Column],
) -> Option<Chart> {
    let series: Vec<Series> = columns
        .iter()
        .map(|(name, get)| Series {
            name: name.to_string(),
            points: r
                .samples
                .iter()
                .filter_map(|s| {
                    let y = get(s).filter(|v| v.is_finite())?;
                    Some(Point {
                        x: s.t_s,
                        y,
                        ..Point::default()
                    })
                })
                .collect(),
        })
        .filter(|s| s.points.iter().any(|p| p.y != 0.0))
        .collect();
    if series.is_empty() {
        return None;
    }
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.y));
    // A little headroom, so the highest line does not run along the frame (a percentage
    // keeps its 0–100 scale).
    let headroom = if y_top > 0.0 { 1.0 } else { 1.04 };
    let y = zero_based(y_label, ys.map(|v| v * headroom).chain([y_top]));
    let measured_from = r.samples.iter().find(|s| s.measured).map(|s| s.t_s);
    let guides = match measured_from {
        Some(t) if r.samples.iter().any(|s| !s.measured) => vec![Guide::AtX {
            x: t,
            label: "measured window".into(),
        }],
        _ => Vec::new(),
    };
    Some(Chart {
        id: id.into(),
        title: title.into(),
        kind: ChartKind::Lines,
        x: spanning(
            "time since the run started (s)",
            r.samples.iter().map(|s| s.t_s),
        ),
        y,
        categories: Vec::new(),
        series,
        guides,
        caption: "One point per second; samples before the measured window (ramp) are drawn \
                  but not counted in the figures."
            .into(),
    })
}

/// Application reads and writes per second.
pub fn throughput(r: &RunRecord) -> Option<Chart> {
    time_series(
        r,
        ("throughput", "Application operations per second"),
        ("operations per second (ops/s)", 0.0),
        &[
            ("reads", |s| Some(s.read_iops)),
            ("writes (data and log)", |s| Some(s.write_iops)),
        ],
    )
}

/// Machine busy % each second.
pub fn cpu_busy(r: &RunRecord) -> Option<Chart> {
    time_series(
        r,
        ("cpu_busy", "Machine CPU busy"),
        ("machine CPU busy (% of all CPUs)", 100.0),
        &[("busy", |s| s.cpu_busy_pct)],
    )
}

/// Stack devices' read and write MB/s each second.
pub fn device_throughput(r: &RunRecord) -> Option<Chart> {
    time_series(
        r,
        ("device_mb_s", "Stack devices: bytes moved per second"),
        ("device throughput (MB/s, 10^6 bytes)", 0.0),
        &[
            ("device reads", |s| s.device_read_mb_s),
            ("device writes", |s| s.device_write_mb_s),
        ],
    )
}

/// Dirty page cache each second.
pub fn dirty_memory(r: &RunRecord) -> Option<Chart> {
    time_series(
        r,
        ("dirty_memory", "Dirty page cache"),
        ("dirty memory (MiB)", 0.0),
        &[("dirty", |s| s.dirty_bytes.map(|b| b as f64 / 1048576.0))],
    )
}

/// A latency distribution as points (percentile, µs): min, the recorded percentiles, max.
fn percentile_points(l: &Latency) -> Vec<Point> {
    let us = |ns: u64| ns as f64 / 1000.0;
    let at = |p: f64, ns: u64| Point {
        x: p,
        y: us(ns),
        ..Point::default()
    };
    let mut points = vec![at(0.0, l.min_ns)];
    points.extend(l.percentiles.iter().map(|p| at(p.p, p.lat_ns)));
    points.push(at(100.0, l.max_ns));
    points
}

/// Latency at each recorded percentile, per operation kind (and its service time under a
/// target rate), from the merged HdrHistograms.
pub fn latency_percentiles(r: &RunRecord) -> Option<Chart> {
    let mut series = Vec::new();
    for op in &r.ops {
        if let Some(l) = &op.lat {
            series.push(Series {
                name: op.kind.name().to_string(),
                points: percentile_points(l),
            });
        }
        if let Some(l) = &op.service {
            series.push(Series {
                name: format!("{} service time", op.kind.name()),
                points: percentile_points(l),
            });
        }
    }
    if series.is_empty() {
        return None;
    }
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.y));
    Some(Chart {
        id: "latency_percentiles".into(),
        title: "Latency by percentile, per operation kind".into(),
        kind: ChartKind::Lines,
        x: Axis {
            label: "percentile (evenly spaced by nines)".into(),
            scale: Scale::Nines,
            min: 0.0,
            max: 100.0,
        },
        y: decades("latency (µs, log scale)", ys),
        categories: Vec::new(),
        series,
        guides: Vec::new(),
        caption: "Latency at the minimum, p50, p90, p99, p99.9, p99.99 and the maximum of the \
                  measured window (HdrHistogram, 3 significant digits); under a target rate, \
                  from the scheduled start, with the service time beside it."
            .into(),
    })
}

/// Bars of named percentages.
fn percent_bars(id: &str, title: &str, y: &str, bars: &[(&str, f64)], caption: &str) -> Chart {
    let points = bars
        .iter()
        .enumerate()
        .map(|(i, (_, v))| Point {
            x: i as f64,
            y: *v,
            note: Some(format!("{v:.1}%")),
            ..Point::default()
        })
        .collect();
    let highest = bars.iter().map(|(_, v)| *v);
    Chart {
        id: id.into(),
        title: title.into(),
        kind: ChartKind::BarsWithRange,
        x: categories_axis("", bars.len()),
        y: zero_based(y, highest),
        categories: bars.iter().map(|(n, _)| n.to_string()).collect(),
        series: vec![Series {
            name: "share".into(),
            points,
        }],
        guides: Vec::new(),
        caption: caption.into(),
    }
}

/// The window's CPU time by mode (`/proc/stat`, whole machine).
pub fn cpu_modes(r: &RunRecord) -> Option<Chart> {
    let c = r.cpu.as_ref()?;
    Some(percent_bars(
        "cpu_modes",
        &format!("Machine CPU by mode over the window ({} CPUs)", c.cpus),
        "share of all CPU time (%)",
        &[
            ("user", c.user_pct),
            ("system", c.system_pct),
            ("iowait", c.iowait_pct),
            ("irq", c.irq_pct),
            ("softirq", c.softirq_pct),
            ("steal", c.steal_pct),
        ],
        "Whole machine, from /proc/stat deltas over the measured window; iowait is idle time \
         with I/O outstanding, not busy time.",
    ))
}

/// The window's busy CPU by whom it served (bakeoff, the stack's daemons, kernel threads).
pub fn cpu_by_whom(r: &RunRecord) -> Option<Chart> {
    let s = r.cpu.as_ref()?.split.as_ref()?;
    let steal = r.cpu.as_ref().map_or(0.0, |c| c.steal_pct);
    Some(percent_bars(
        "cpu_by_whom",
        "Machine CPU by whom it served over the window",
        "share of all CPU time (%)",
        &[
            ("bakeoff (client)", s.tool_pct),
            ("stack daemons, database server", s.daemons_pct),
            ("kernel for the run", s.kernel_pct),
            ("other processes", s.other_pct),
            ("steal", steal),
        ],
        "The first three are the work's cost (CPU per operation); other processes and steal \
         are competition the run had.",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_charts_from_its_samples_and_histograms() {
        let r = crate::fixture::record();
        let charts = charts(&r);
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "throughput",
                "latency_percentiles",
                "cpu_busy",
                "cpu_modes",
                "cpu_by_whom",
                "device_mb_s",
                "dirty_memory"
            ]
        );
        let text: String = charts.iter().map(|c| format!("{c}\n")).collect();
        insta::assert_snapshot!(text);
    }

    #[test]
    fn unsampled_quantities_make_no_chart_and_a_ramp_is_marked() {
        let mut r = crate::fixture::record();
        for s in &mut r.samples {
            (s.read_iops, s.write_iops) = (0.0, 0.0);
        }
        assert!(
            throughput(&r).is_none(),
            "all zero: not sampled (a database run)"
        );
        r.samples[0].measured = false;
        let busy = cpu_busy(&r).unwrap();
        assert_eq!(
            busy.guides,
            [Guide::AtX {
                x: 2.0,
                label: "measured window".into()
            }]
        );
        r.cpu = None;
        assert!(cpu_modes(&r).is_none() && cpu_by_whom(&r).is_none());
    }
}
