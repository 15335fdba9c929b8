//! A comparison of ramps drawn as seed 004's curves (Figures 1–4): one line per cell, each
//! point a climbing rate of the ramp with the medians over repetitions and a band from the
//! smallest to the largest repetition.

use super::ramp::{
    lines, with_limit, Column, Curve, ARC, BUSY, CPU, DEVICES, DEVICE_READS, DEVICE_WRITES,
    LATENCY, MEMORY, PAGE_CACHE,
};
use super::{Chart, Point, Series};
use crate::ramp_comparison::RampGroup;
use bakeoff_core::ramp::RampPoint;
use bakeoff_core::verdict::{median, spread};

/// Climbing points of repetitions whose offered rates are this close (relative) are the
/// same point of the climb.
const SAME_RATE: f64 = 0.01;

const CAPTION: &str = "One line per cell, one point per climbing rate of the ramp (the \
                       bisection's points left out): the median over repetitions of the \
                       achieved rate (x) and of the value (y); band: smallest to largest \
                       repetition.";

/// The four curves of group `i` (ids `ramp_study_<figure>_<i>`), those with data.
pub(super) fn group_curves(i: usize, g: &RampGroup) -> Vec<Chart> {
    let stat = g.limit.split(" <=").next().unwrap_or("latency");
    let latency_column: Column = ("", |p| p.limit_stat_ns.map(|v| v / 1e6));
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
    let devices = chart(
        i,
        g,
        &DEVICES,
        DEVICES.y_label.into(),
        &[DEVICE_READS, DEVICE_WRITES],
    );
    let memory = chart(i, g, &MEMORY, MEMORY.y_label.into(), &[PAGE_CACHE, ARC]);
    [latency, cpu, devices, memory]
        .into_iter()
        .flatten()
        .collect()
}

/// One line per cell and column (a column without a name: the cell's label alone).
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
                name: match name {
                    "" => row.label.clone(),
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
            format!("{} ({})", figure.title, g.limit),
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
