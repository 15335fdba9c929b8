//! One cell's figure against its baseline cell's, the unit every table of a comparison is
//! made of (the headline figures, a recipe's phases, a ramp's rates), and the runs of a cell
//! it is computed from.

use crate::figures::{Compare, Figure};
use bakeoff_core::record::RunRecord;
use bakeoff_core::verdict::{compare, median, spread, Comparison, Method};
use serde::Serialize;

/// One figure of one cell. Its median, range and comparison come from the same values.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FigureCell {
    /// Median over the repetitions.
    pub median: Option<f64>,
    /// Smallest repetition.
    pub min: Option<f64>,
    /// Largest repetition.
    pub max: Option<f64>,
    /// `median / baseline median`, where both are clear of zero (absent for the baseline).
    pub ratio: Option<f64>,
    /// `median - baseline median`, for percentages and where a side is (near) zero: a ratio of
    /// something near zero says nothing.
    pub difference: Option<f64>,
    /// The verdict against the baseline: only for result and cost figures compared by ratio.
    pub vs_baseline: Option<Comparison>,
}

/// A cell's runs and the index of its baseline cell.
pub struct CellRuns {
    /// Label.
    pub label: String,
    /// Stack spec.
    pub stack: String,
    /// Completed runs.
    pub runs: Vec<RunRecord>,
    /// Index of its baseline cell, if any.
    pub baseline: Option<usize>,
}

/// Compares one figure of a cell (values `xs`) with its baseline's (`bs`).
pub(crate) fn figure_cell(
    f: &Figure,
    xs: &[f64],
    bs: Option<&[f64]>,
    method: &Method,
) -> FigureCell {
    let (min, max) = spread(xs).map_or((None, None), |(a, b)| (Some(a), Some(b)));
    let mut cell = FigureCell {
        median: median(xs),
        min,
        max,
        ..FigureCell::default()
    };
    let (Some(bs), Some(m)) = (bs, cell.median) else {
        return cell;
    };
    let Some(mb) = median(bs) else { return cell };
    let clear = |v: &[f64]| v.iter().all(|x| *x > f.floor);
    if f.percent || !clear(xs) || !clear(bs) {
        cell.difference = Some(m - mb);
        return cell;
    }
    cell.ratio = Some(m / mb);
    if let Compare::Verdict(better) = f.compare {
        cell.vs_baseline = Some(compare(xs, bs, better, method));
    }
    cell
}
