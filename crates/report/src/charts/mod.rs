//! Charts as data, then as SVG. A [`Chart`] is what to draw (series of points with their
//! range, axes with labels, units and ranges, guides such as the baseline), built by pure
//! functions from a comparison ([`study`]) or a run record ([`run`]) and golden-tested as data;
//! [`svg::render`] draws any chart with plotters. The same charts go into the HTML report,
//! `--format svg` and the Markdown report's images.
//!
//! A new kind of result is a new builder returning [`Chart`]s of the existing kinds: a load
//! ramp's curves ([`ramp`]) are [`ChartKind::Lines`] (x achieved ops/s; response time, CPU,
//! device MB/s and memory; the limit as a [`Guide`]); a phase recipe's timings ([`phases`])
//! are [`ChartKind::BarsWithRange`] with one series per stack (grouped bars per phase).

mod note;
pub mod phases;
pub mod ramp;
mod ramp_study;
pub mod run;
pub mod study;
mod style;
pub mod svg;
mod ticks;

use serde::Serialize;
use std::fmt;

pub use ticks::{compact, Tick};

/// How a chart draws its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    /// A bar per category (x is the category's index; with several series, grouped bars),
    /// from zero to `y`, a whisker from `low` to `high`. Drawn horizontally, so long labels
    /// stay readable.
    BarsWithRange,
    /// Like [`ChartKind::BarsWithRange`], of ratios to a baseline: the ×1 line is drawn.
    RelativeBars,
    /// Lines through the points of each series, with a band from `low` to `high` where given.
    Lines,
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Evenly.
    Linear,
    /// By decades.
    Log,
    /// Percentiles by their nines (p90, p99, p99.9 evenly spaced): values are percentiles
    /// 0–100, where 0 stands for the minimum and 100 for the maximum.
    Nines,
}

/// One axis: what it shows, with its unit, and the range drawn.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Axis {
    /// Label with its unit, e.g. `read p99 latency (µs)`.
    pub label: String,
    /// Mapping.
    pub scale: Scale,
    /// Smallest value drawn.
    pub min: f64,
    /// Largest value drawn.
    pub max: f64,
}

/// One point: `y` at `x`, the range `low..high` around it (over repetitions), a note drawn
/// beside it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Point {
    /// Position (a category's index for bars).
    pub x: f64,
    /// Value (a median for bars).
    pub y: f64,
    /// Lower end of the range, if any.
    pub low: Option<f64>,
    /// Upper end of the range, if any.
    pub high: Option<f64>,
    /// Text beside the point (a ratio and verdict mark), if any.
    pub note: Option<String>,
    /// This point is the baseline's (drawn apart).
    pub baseline: bool,
}

/// One named series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points, in drawing order.
    pub points: Vec<Point>,
}

/// A reference line across the chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Guide {
    /// At this value of the y axis, the value axis of bars (the baseline's median, ×1, a
    /// latency limit).
    AtY {
        /// Position.
        y: f64,
        /// What it marks.
        label: String,
    },
    /// At this value of the x axis (the start of the measured window).
    AtX {
        /// Position.
        x: f64,
        /// What it marks.
        label: String,
    },
}

/// A chart: title, kind, axes, series and guides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// Short name, unique in a report: the SVG's file stem.
    pub id: String,
    /// Title.
    pub title: String,
    /// How it is drawn.
    pub kind: ChartKind,
    /// Horizontal axis as the data sees it (for bars: the categories).
    pub x: Axis,
    /// Vertical axis as the data sees it (for bars: the values).
    pub y: Axis,
    /// Category labels, for bars (point `x` is the index).
    pub categories: Vec<String>,
    /// Series.
    pub series: Vec<Series>,
    /// Reference lines.
    pub guides: Vec<Guide>,
    /// One sentence on how to read it (what the bars and whiskers are).
    pub caption: String,
}

impl Chart {
    /// Whether there is anything to draw.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x}"))
}

/// The chart's data as text: the form golden tests compare and the HTML shows under a chart.
impl fmt::Display for Chart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} ({:?}): {}", self.id, self.kind, self.title)?;
        for (name, a) in [("x", &self.x), ("y", &self.y)] {
            writeln!(
                f,
                "{name}: {} [{:?} {}..{}]",
                a.label, a.scale, a.min, a.max
            )?;
        }
        for (i, c) in self.categories.iter().enumerate() {
            writeln!(f, "category {i}: {c}")?;
        }
        for s in &self.series {
            writeln!(f, "series {}:", s.name)?;
            for p in &s.points {
                write!(f, "  {} {}", p.x, p.y)?;
                if p.low.is_some() || p.high.is_some() {
                    write!(f, " [{}..{}]", opt(p.low), opt(p.high))?;
                }
                if let Some(n) = &p.note {
                    write!(f, " \"{n}\"")?;
                }
                if p.baseline {
                    write!(f, " baseline")?;
                }
                writeln!(f)?;
            }
        }
        for g in &self.guides {
            match g {
                Guide::AtY { y, label } => writeln!(f, "guide y={y}: {label}")?,
                Guide::AtX { x, label } => writeln!(f, "guide x={x}: {label}")?,
            }
        }
        writeln!(f, "caption: {}", self.caption)
    }
}

/// A value axis from zero to a round number above every value (and range end) given.
pub fn zero_based(label: impl Into<String>, values: impl IntoIterator<Item = f64>) -> Axis {
    let top = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    Axis {
        label: label.into(),
        scale: Scale::Linear,
        min: 0.0,
        max: ticks::round_up(top),
    }
}

/// A linear axis spanning the values exactly (time).
pub fn spanning(label: impl Into<String>, values: impl IntoIterator<Item = f64>) -> Axis {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let (min, max) = if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    Axis {
        label: label.into(),
        scale: Scale::Linear,
        min,
        max,
    }
}

/// A log axis from the decade at or below the smallest positive value to the decade at or
/// above the largest.
pub fn decades(label: impl Into<String>, values: impl IntoIterator<Item = f64>) -> Axis {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
    let (min, max) = if lo > hi {
        (1.0, 10.0)
    } else {
        let floor = 10f64.powf(lo.log10().floor());
        let ceil = 10f64.powf(hi.log10().ceil());
        (floor, if ceil > floor { ceil } else { floor * 10.0 })
    };
    Axis {
        label: label.into(),
        scale: Scale::Log,
        min,
        max,
    }
}

/// The axis of category indices `0..n`.
pub fn categories_axis(label: impl Into<String>, n: usize) -> Axis {
    Axis {
        label: label.into(),
        scale: Scale::Linear,
        min: -0.5,
        max: n as f64 - 0.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_cover_their_values_with_round_ends() {
        let a = zero_based("x", [0.0, 97_845.0, 99_100.0]);
        assert_eq!((a.min, a.max), (0.0, 100_000.0));
        assert_eq!(
            zero_based("x", [0.0]).max,
            1.0,
            "an empty axis still has a span"
        );
        let d = decades("lat", [310.0, 12_400.0, f64::NAN, 0.0]);
        assert_eq!((d.min, d.max, d.scale), (100.0, 100_000.0, Scale::Log));
        assert_eq!(decades("lat", [1000.0]).max, 10_000.0);
        let s = spanning("t", [1.0, 2.0, 10.0]);
        assert_eq!((s.min, s.max), (1.0, 10.0));
        assert_eq!(
            (spanning("t", [3.0]).min, spanning("t", []).max),
            (2.5, 1.0)
        );
    }
}
