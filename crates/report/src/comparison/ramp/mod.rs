//! The comparison of load ramps (issue 12, point 5): per cell, the highest rate within the
//! latency limit with its verdict across repetitions, and the resources each operation cost
//! at the common load point: the highest offered rate at which every cell of the comparison
//! met the limit in every repetition. Points are matched by offered rate, not interpolated:
//! ramps with the same spec climb through the same rates, so the common point is a point
//! every stack was measured at (seed 004: "at 9,000 ops/s the other used less than an
//! eighth of the disk bandwidth"). Rendered as a terminal table, Markdown and rows of the
//! comparison CSV by `text`.

pub mod text;

use super::cells::{figure_cell, CellRuns, FigureCell};
use crate::figures::{Compare, Figure};
use bakeoff_core::ramp::{Phase, RampPoint};
use bakeoff_core::verdict::{Better, Method};
use serde::Serialize;

/// Offered rates this close (relative) are the same point of the grid.
const SAME_RATE: f64 = 1e-9;

/// The ramps of a comparison, one group per baseline (cells compared with each other).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RampComparison {
    /// Keys of [`RampComparison::groups`]' `at_common` figures, in order.
    pub common_figures: Vec<String>,
    /// Cells compared with the same baseline.
    pub groups: Vec<RampGroup>,
}

/// Cells compared with one another (the same workload and sweep values on every stack).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RampGroup {
    /// The latency limit (of the baseline's ramp).
    pub limit: String,
    /// The limit's bound in milliseconds (of the same ramp), drawn on the latency curves.
    #[serde(skip)]
    pub limit_ms: Option<f64>,
    /// The common load point's offered rate; `None` if no rate was met by every cell.
    pub common_ops_s: Option<f64>,
    /// One row per cell.
    pub rows: Vec<RampRow>,
}

/// One cell's ramps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RampRow {
    /// Label.
    pub label: String,
    /// Stack spec.
    pub stack: String,
    /// Runs with a ramp.
    pub runs: usize,
    /// This cell is the group's baseline.
    pub is_baseline: bool,
    /// Highest achieved ops/s within the limit, with the verdict against the baseline.
    pub max_ops_s: FigureCell,
    /// Runs that reached `max_points` within the limit: their maximum is a lower bound.
    pub lower_bound_runs: usize,
    /// Runs where no point met the limit.
    pub none_within_limit_runs: usize,
    /// At the common load point, in [`RampComparison::common_figures`] order.
    pub at_common: Vec<FigureCell>,
    /// Each repetition's climbing points (not the bisection's), in order of offered rate:
    /// what the per-stack curves are drawn from. Not exported: the runs hold them.
    #[serde(skip)]
    pub climbs: Vec<Vec<RampPoint>>,
}

/// A figure of a point at the common load point.
pub struct PointFigure {
    /// Label, unit and how it compares (its `get` is unused).
    pub figure: Figure,
    /// Reads it from a point.
    pub of: fn(&RampPoint) -> Option<f64>,
}

const fn point_figure(
    key: &'static str,
    label: &'static str,
    compare: Compare,
    decimals: usize,
    of: fn(&RampPoint) -> Option<f64>,
) -> PointFigure {
    PointFigure {
        figure: Figure {
            key,
            label,
            compare,
            get: |_| None,
            decimals,
            floor: 1e-9,
            percent: false,
            micros: false,
        },
        of,
    }
}

/// A figure in microseconds at the common load point (shown as `310 µs`).
const fn point_us(
    key: &'static str,
    label: &'static str,
    of: fn(&RampPoint) -> Option<f64>,
) -> PointFigure {
    let mut f = point_figure(key, label, Compare::Verdict(Better::Lower), 1, of);
    f.figure.micros = true;
    f
}

/// The highest rate within the limit.
pub const MAX_OPS: Figure = Figure {
    key: "max_ops_s",
    label: "max ops/s within limit",
    compare: Compare::Verdict(Better::Higher),
    get: |_| None,
    decimals: 0,
    floor: 0.5,
    percent: false,
    micros: false,
};

use Compare::{Diagnostic, Verdict};

/// What each stack cost per operation (and in all) at the common load point.
pub const COMMON_FIGURES: &[PointFigure] = &[
    point_figure("achieved_ops_s", "ops/s", Diagnostic, 0, |p| {
        Some(p.achieved_ops_s)
    }),
    point_figure(
        "limit_stat_ms",
        "limit stat ms",
        Verdict(Better::Lower),
        2,
        |p| p.limit_stat_ns.map(|v| v / 1e6),
    ),
    point_us("cpu_us_per_op", "CPU/op", |p| p.cpu_us_per_op),
    point_figure(
        "device_read_kib_per_op",
        "dev KiB rd/op",
        Verdict(Better::Lower),
        1,
        |p| p.device_read_bytes_per_op().map(|b| b / 1024.0),
    ),
    point_figure(
        "device_write_kib_per_op",
        "dev KiB wr/op",
        Verdict(Better::Lower),
        1,
        |p| p.device_write_bytes_per_op().map(|b| b / 1024.0),
    ),
    point_figure("device_read_mb_s", "dev rd MB/s", Diagnostic, 1, |p| {
        p.device_read_mb_s
    }),
    point_figure("device_write_mb_s", "dev wr MB/s", Diagnostic, 1, |p| {
        p.device_write_mb_s
    }),
    point_figure("page_cache_mib", "page cache MiB", Diagnostic, 0, |p| {
        p.page_cache_bytes.map(mib)
    }),
    point_figure("dirty_max_mib", "dirty max MiB", Diagnostic, 0, |p| {
        p.dirty_max_bytes.map(mib)
    }),
    point_figure("arc_mib", "ARC MiB", Diagnostic, 0, |p| {
        p.arc_bytes.map(mib)
    }),
];

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME_RATE * a.abs().max(b.abs())
}

/// The ramps of a cell's runs.
fn ramps(c: &CellRuns) -> impl Iterator<Item = &bakeoff_core::ramp::RampRecord> {
    c.runs.iter().filter_map(|r| r.ramp.as_ref())
}

/// A ramp's climbing points in order of offered rate.
fn climb(r: &bakeoff_core::ramp::RampRecord) -> Vec<RampPoint> {
    let mut points: Vec<RampPoint> = (r.points.iter())
        .filter(|p| p.phase == Phase::Climb)
        .cloned()
        .collect();
    points.sort_by(|a, b| a.offered_ops_s.total_cmp(&b.offered_ops_s));
    points
}

/// The highest offered rate at which every ramp of `cells` has a point within the limit.
fn common_rate(cells: &[&CellRuns]) -> Option<f64> {
    let all: Vec<_> = cells.iter().flat_map(|c| ramps(c)).collect();
    let first = all.first()?;
    (first.points.iter())
        .filter(|p| p.good())
        .map(|p| p.offered_ops_s)
        .filter(|&rate| {
            all.iter()
                .all(|r| (r.points.iter()).any(|p| p.good() && same_rate(p.offered_ops_s, rate)))
        })
        .max_by(f64::total_cmp)
}

/// The comparison of the ramps among `cells`, if any run has one.
pub fn build(cells: &[CellRuns], method: &Method) -> Option<RampComparison> {
    let with_ramps: Vec<usize> = (0..cells.len())
        .filter(|&i| ramps(&cells[i]).next().is_some())
        .collect();
    if with_ramps.is_empty() {
        return None;
    }
    let group_of = |i: usize| cells[i].baseline.unwrap_or(i);
    let mut keys: Vec<usize> = with_ramps.iter().map(|&i| group_of(i)).collect();
    keys.sort_unstable();
    keys.dedup();
    let groups = keys
        .into_iter()
        .map(|key| {
            let members: Vec<usize> = (with_ramps.iter().copied())
                .filter(|&i| group_of(i) == key)
                .collect();
            group(cells, &members, key, method)
        })
        .collect();
    Some(RampComparison {
        common_figures: COMMON_FIGURES
            .iter()
            .map(|f| f.figure.key.to_string())
            .collect(),
        groups,
    })
}

/// One group: its common load point, and each member's row against the baseline `base`.
fn group(cells: &[CellRuns], members: &[usize], base: usize, method: &Method) -> RampGroup {
    let member_cells: Vec<&CellRuns> = members.iter().map(|&i| &cells[i]).collect();
    let common = common_rate(&member_cells);
    let max_values = |c: &CellRuns| -> Vec<f64> {
        ramps(c)
            .filter_map(|r| r.headline.as_ref().map(|h| h.achieved_ops_s))
            .collect()
    };
    let at = |c: &CellRuns, f: &PointFigure| -> Vec<f64> {
        let Some(rate) = common else {
            return Vec::new();
        };
        (ramps(c).filter_map(|r| {
            (r.points.iter()).find(|p| p.good() && same_rate(p.offered_ops_s, rate))
        }))
        .filter_map(|p| (f.of)(p))
        .filter(|v| v.is_finite())
        .collect()
    };
    let baseline = members.contains(&base).then(|| &cells[base]);
    let limit_ramp =
        (baseline.into_iter().chain(member_cells.iter().copied())).find_map(|c| ramps(c).next());
    let limit = limit_ramp.map(|r| r.limit.clone()).unwrap_or_default();
    let rows = members
        .iter()
        .map(|&i| {
            let c = &cells[i];
            let against = baseline.filter(|_| i != base);
            let bs = against.map(max_values);
            RampRow {
                label: c.label.clone(),
                stack: c.stack.clone(),
                runs: ramps(c).count(),
                is_baseline: i == base,
                max_ops_s: figure_cell(&MAX_OPS, &max_values(c), bs.as_deref(), method),
                lower_bound_runs: ramps(c)
                    .filter(|r| r.headline.as_ref().is_some_and(|h| h.lower_bound))
                    .count(),
                none_within_limit_runs: ramps(c).filter(|r| r.headline.is_none()).count(),
                at_common: COMMON_FIGURES
                    .iter()
                    .map(|f| {
                        let bs = against.map(|b| at(b, f));
                        figure_cell(&f.figure, &at(c, f), bs.as_deref(), method)
                    })
                    .collect(),
                climbs: ramps(c).map(climb).collect(),
            }
        })
        .collect();
    RampGroup {
        limit,
        limit_ms: limit_ramp.map(|r| r.spec.limit.max_ns as f64 / 1e6),
        common_ops_s: common,
        rows,
    }
}

#[cfg(test)]
mod tests;
