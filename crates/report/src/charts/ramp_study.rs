//! The charts of a comparison of ramps: per group of compared cells, each cell's highest rate
//! within the limit as bars, then seed 004's curves (Figures 1–4): one line per cell, each
//! point a climbing rate of the ramp with the medians over repetitions and a band from the
//! smallest to the largest repetition.

use super::note::note;
use super::ramp::{
    lines, with_limit, Column, Curve, ARC, BUSY, CPU, DEVICES, DEVICE_READS, DEVICE_WRITES,
    LATENCY, MEMORY, PAGE_CACHE,
};
use super::{categories_axis, zero_based, Chart, ChartKind, Point, Series};
use crate::comparison::ramp::{RampComparison, RampGroup, MAX_OPS};
use bakeoff_core::ramp::RampPoint;
use bakeoff_core::verdict::{median, spread};

/// Climbing points of repetitions whose offered rates are this close (relative) are the
/// same point of the climb.
const SAME_RATE: f64 = 0.01;

const CAPTION: &str = "One line per cell, one point per climbing rate of the ramp (the \
                       bisection's points left out): the median over repetitions of the \
                       achieved rate (x) and of the value (y); band: smallest to largest \
                       repetition.";

/// Per group of compared cells: each cell's highest rate within the limit, then the four
/// curves with one line per cell (ids `ramp_study_latency_<group>` and so on).
pub(super) fn study_charts(rc: &RampComparison) -> Vec<Chart> {
    (rc.groups.iter().enumerate())
        .flat_map(|(i, g)| max_ops_bars(i, g).into_iter().chain(group_curves(i, g)))
        .collect()
}

/// Each cell's highest rate within the limit, as bars.
fn max_ops_bars(i: usize, g: &RampGroup) -> Option<Chart> {
    let points: Vec<Point> = (g.rows.iter().enumerate())
        .filter_map(|(n, row)| {
            let c = &row.max_ops_s;
            Some(Point {
                x: n as f64,
                y: c.median?,
                low: c.min,
                high: c.max,
                note: note(c, &MAX_OPS, row.is_baseline),
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
}

/// The curves of group `i` (ids `ramp_study_<figure>_<i>`: latency, cpu, device_reads,
/// device_writes, memory), those with data.
fn group_curves(i: usize, g: &RampGroup) -> Vec<Chart> {
    let stat = g.limit.split(" <=").next().unwrap_or("latency");
    let latency_column: Column = ("limit statistic", |p| p.limit_stat_ns.map(|v| v / 1e6));
    let latency = chart(
        i,
        g,
        &LATENCY,
        format!("{stat} {}", LATENCY.y_label),
        &[latency_column],
    )
    .map(|c| match g.limit_ms {
        Some(ms) => with_limit(c, ms, &g.limit),
        None => c,
    });
    let cpu = chart(i, g, &CPU, CPU.y_label.into(), &[BUSY]);
    // Reads and writes apart: one line per cell, as in the other figures.
    let device = |stem, title, column| {
        let figure = Curve {
            stem,
            title,
            ..DEVICES
        };
        chart(i, g, &figure, DEVICES.y_label.into(), &[column])
    };
    let reads = device(
        "device_reads",
        "Stack devices: reads against load",
        DEVICE_READS,
    );
    let writes = device(
        "device_writes",
        "Stack devices: writes against load",
        DEVICE_WRITES,
    );
    let memory = Curve {
        title: "Memory against load",
        ..MEMORY
    };
    let memory = chart(i, g, &memory, MEMORY.y_label.into(), &[PAGE_CACHE, ARC]);
    [latency, cpu, reads, writes, memory]
        .into_iter()
        .flatten()
        .collect()
}

/// One line per cell and column, named by the cell (and the column if there are several).
fn chart(
    i: usize,
    g: &RampGroup,
    figure: &Curve,
    y_label: String,
    columns: &[Column],
) -> Option<Chart> {
    let series = columns
        .iter()
        .flat_map(|&(name, get)| {
            g.rows.iter().map(move |row| Series {
                name: match columns.len() {
                    1 => row.label.clone(),
                    _ => format!("{}: {name}", row.label),
                },
                points: by_rate(&row.climbs)
                    .iter()
                    .filter_map(|same| summary(same, get))
                    .collect(),
            })
        })
        .collect();
    lines(
        (
            format!("ramp_study_{}_{i}", figure.stem),
            figure.title.into(),
        ),
        y_label,
        series,
        CAPTION,
    )
}

/// The repetitions' climbing points grouped by offered rate, in order of rate.
fn by_rate(climbs: &[Vec<RampPoint>]) -> Vec<Vec<&RampPoint>> {
    let mut all: Vec<&RampPoint> = climbs.iter().flatten().collect();
    all.sort_by(|a, b| a.offered_ops_s.total_cmp(&b.offered_ops_s));
    let mut groups: Vec<Vec<&RampPoint>> = Vec::new();
    for p in all {
        match groups.last_mut() {
            Some(g)
                if (p.offered_ops_s - g[0].offered_ops_s).abs()
                    <= SAME_RATE * g[0].offered_ops_s.abs() =>
            {
                g.push(p)
            }
            _ => groups.push(vec![p]),
        }
    }
    groups
}

/// The medians of the achieved rate and of `get` over the points that have a value, with
/// the value's range when more than one repetition has it.
fn summary(points: &[&RampPoint], get: fn(&RampPoint) -> Option<f64>) -> Option<Point> {
    let (xs, ys): (Vec<f64>, Vec<f64>) = points
        .iter()
        .filter_map(|p| Some((p.achieved_ops_s, get(p).filter(|v| v.is_finite())?)))
        .unzip();
    let (low, high) = spread(&ys)?;
    let ranged = ys.len() > 1;
    Some(Point {
        x: median(&xs)?,
        y: median(&ys)?,
        low: ranged.then_some(low),
        high: ranged.then_some(high),
        ..Point::default()
    })
}

#[cfg(test)]
mod tests {
    use super::super::Guide;
    use crate::ramp_fixture::cells;
    use bakeoff_core::verdict::Method;

    /// The fixture's comparison, each repetition's latencies scaled (0.9, 1.0, 1.2) so the
    /// bands have width.
    fn charts() -> Vec<super::Chart> {
        let mut cells = cells();
        for cell in &mut cells {
            for (run, k) in cell.runs.iter_mut().zip([1.0, 0.9, 1.2]) {
                let ramp = run.ramp.as_mut().unwrap();
                (ramp.points.iter_mut())
                    .for_each(|p| p.limit_stat_ns = p.limit_stat_ns.map(|v| v * k));
            }
        }
        let rc = crate::comparison::ramp::build(&cells, &Method::default()).unwrap();
        super::study_charts(&rc)
    }

    #[test]
    fn each_cell_is_a_line_of_medians_over_its_climbing_rates_with_a_band() {
        let charts = charts();
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "ramp_max_ops_0",
                "ramp_study_latency_0",
                "ramp_study_cpu_0",
                "ramp_study_device_reads_0",
                "ramp_study_device_writes_0",
                "ramp_study_memory_0"
            ]
        );
        let lat = &charts[1];
        let names: Vec<&str> = lat.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ext4 / randread", "zfs / randread"]);
        assert_eq!(
            lat.y.label,
            "p99 response time (ms, from the scheduled start)"
        );
        assert_eq!(lat.x.label, "achieved load (ops/s)");
        assert!(lat.guides.contains(&Guide::AtY {
            y: 5.0,
            label: "limit: p99 <= 5.00 ms".into()
        }));
        // ext4 climbs 1000, 1500, 2250, 3375 (its bisection's 2812.5 and 3093.75 left out);
        // at 3375 the repetitions achieved 2997 x (1, 0.99, 1.01) with p99 9 ms x (1, 0.9, 1.2).
        let ext4 = &lat.series[0].points;
        assert_eq!(ext4.len(), 4, "climbing points only: {ext4:?}");
        let top = &ext4[3];
        assert_eq!((top.x, top.y), (2997.0, 9.0));
        assert!((top.low.unwrap() - 8.1).abs() < 1e-9 && (top.high.unwrap() - 10.8).abs() < 1e-9);
        let memory = &charts[5];
        assert!(
            memory.series.iter().all(|s| !s.name.contains("ARC")),
            "no ARC off ZFS"
        );
        let text: String = charts[1..].iter().map(|c| format!("{c}\n")).collect();
        insta::assert_snapshot!(text);
    }
}
