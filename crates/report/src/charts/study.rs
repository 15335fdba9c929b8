//! The charts of a comparison: a bar chart per headline column (median, range over
//! repetitions, the baseline marked) and each cell relative to its baseline for the first
//! result figure (seed 004's Figure 5).

use super::note::note;
use super::{categories_axis, zero_based, Chart, ChartKind, Guide, Point, Series};
use crate::comparison::{CellRow, FigureCell, StudyReport};
use crate::figures::{figure, Compare, Figure};
use bakeoff_core::verdict::Better;

/// Every chart of a comparison: one per column that has values, the relative chart, the
/// ramps' highest rates within their limit, then the recipes' phases as grouped bars.
pub fn charts(r: &StudyReport) -> Vec<Chart> {
    let bars = (0..r.columns.len()).filter_map(|i| figure_bars(r, i));
    let ramps = r.ramps.iter().flat_map(super::ramp_study::study_charts);
    let phases = super::phases::charts(r);
    bars.chain(relative_bars(r))
        .chain(ramps)
        .chain(phases)
        .collect()
}

/// A figure's label on a value axis, with its unit where the column heading has none.
pub fn value_label(f: &Figure) -> String {
    let unit = match f.key {
        // The table shows these as `2.26 ms`; a chart's axis is in microseconds.
        _ if f.micros => Some("µs"),
        k if k.ends_with("_iops") => Some("ops/s"),
        k if k.contains("amplification") => Some("device bytes per application byte"),
        "nopm" => Some("New-Orders/min"),
        "checkpoints" => Some("count"),
        _ => None,
    };
    match unit {
        Some(u) => format!("{} ({u})", f.label),
        None => f.label.to_string(),
    }
}

/// Category labels: each cell, the baseline named as such.
fn cell_labels(r: &StudyReport) -> Vec<String> {
    let label = |row: &CellRow| match row.is_baseline {
        true => format!("{} (baseline)", row.label),
        false => row.label.clone(),
    };
    r.rows.iter().map(label).collect()
}

/// A point per cell of column `i` (x: the cell's index), where `point` makes one.
fn column_points(
    r: &StudyReport,
    i: usize,
    point: impl Fn(&CellRow, &FigureCell) -> Option<Point>,
) -> Vec<Point> {
    let cells = r.rows.iter().enumerate();
    cells
        .filter_map(|(n, row)| {
            let p = point(row, row.figures.get(i)?)?;
            Some(Point { x: n as f64, ..p })
        })
        .collect()
}

/// The bar chart of column `i`: each cell's median with its range over repetitions; `None`
/// when no cell has a value.
pub fn figure_bars(r: &StudyReport, i: usize) -> Option<Chart> {
    let key = r.columns.get(i)?;
    let f = figure(key)?;
    let points = column_points(r, i, |row, cell| {
        Some(Point {
            y: cell.median?,
            low: cell.min,
            high: cell.max,
            note: note(cell, f, row.is_baseline),
            baseline: row.is_baseline,
            ..Point::default()
        })
    });
    if points.is_empty() {
        return None;
    }
    let baselines: Vec<&Point> = points.iter().filter(|p| p.baseline).collect();
    let (guides, dashed) = match baselines[..] {
        [b] => (
            vec![Guide::AtY {
                y: b.y,
                label: "baseline median".into(),
            }],
            "; dashed line: the baseline's median",
        ),
        _ => (Vec::new(), ""),
    };
    let better = match f.compare {
        Compare::Verdict(Better::Higher) => "Higher is better",
        Compare::Verdict(Better::Lower) => "Lower is better",
        Compare::Diagnostic => "A diagnostic: neither higher nor lower is better",
    };
    let ends = points.iter().flat_map(|p| [p.y, p.high.unwrap_or(p.y)]);
    Some(Chart {
        id: key.clone(),
        title: format!("{} per cell", f.label),
        kind: ChartKind::BarsWithRange,
        x: categories_axis("cell", r.rows.len()),
        y: zero_based(value_label(f), ends),
        categories: cell_labels(r),
        series: vec![Series {
            name: "median over repetitions".into(),
            points,
        }],
        guides,
        caption: format!(
            "Bar: median over the repetitions; whisker: smallest to largest repetition; \
             beside it the ratio to the baseline with its verdict (+ better, - worse, \
             = no significant difference, ? too few repetitions){dashed}. {better}."
        ),
    })
}

/// The column the relative chart shows: transactions per second for databases, read IOPS
/// otherwise, else the first result figure where higher is better.
fn headline_column(r: &StudyReport) -> Option<usize> {
    let find = |k: &str| r.columns.iter().position(|c| c == k);
    find("tps").or_else(|| find("read_iops")).or_else(|| {
        r.columns
            .iter()
            .position(|c| figure(c).is_some_and(|f| f.compare == Compare::Verdict(Better::Higher)))
    })
}

/// Each cell relative to its baseline for the headline column (seed 004's Figure 5): the
/// ratio of medians, with each end of the cell's range over the baseline's median.
pub fn relative_bars(r: &StudyReport) -> Option<Chart> {
    let i = headline_column(r)?;
    let f = figure(&r.columns[i])?;
    let points = column_points(r, i, |row, cell| {
        let median = cell.median.filter(|m| *m > 0.0)?;
        let ratio = if row.is_baseline { 1.0 } else { cell.ratio? };
        // The baseline's median, recovered from the ratio the comparison computed.
        let base = median / ratio;
        Some(Point {
            y: ratio,
            low: cell.min.map(|v| v / base),
            high: cell.max.map(|v| v / base),
            note: note(cell, f, row.is_baseline),
            baseline: row.is_baseline,
            ..Point::default()
        })
    });
    if points.iter().all(|p| p.baseline) {
        return None;
    }
    let ends = points
        .iter()
        .flat_map(|p| [p.y, p.high.unwrap_or(p.y), 1.0]);
    Some(Chart {
        id: format!("relative_{}", f.key),
        title: format!("{} relative to the baseline", f.label),
        kind: ChartKind::RelativeBars,
        x: categories_axis("cell", r.rows.len()),
        y: zero_based(format!("{} / baseline median (×)", f.label), ends),
        categories: cell_labels(r),
        series: vec![Series {
            name: "median / baseline median".into(),
            points,
        }],
        guides: vec![Guide::AtY {
            y: 1.0,
            label: "baseline ×1".into(),
        }],
        caption: "Bar: the cell's median over its baseline's median (dashed line: ×1, the \
                  same); whisker: the cell's smallest and largest repetition over the \
                  baseline's median. Higher is better."
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture comparison, with a column no cell has a value of (no ARC off ZFS).
    fn report() -> StudyReport {
        crate::fixture::study(&[
            "read_iops",
            "arc_hit_pct",
            "cpu_busy_pct",
            "read_amplification",
        ])
    }

    #[test]
    fn a_bar_chart_per_column_with_values_and_the_relative_chart() {
        let charts = charts(&report());
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "read_iops",
                "cpu_busy_pct",
                "read_amplification",
                "relative_read_iops"
            ],
            "arc_hit_pct has no values, so no chart"
        );
        let text: String = charts.iter().map(|c| format!("{c}\n")).collect();
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_relative_chart_prefers_transactions_and_needs_a_cell_beside_the_baseline() {
        let mut r = report();
        r.columns[2] = "tps".into();
        assert_eq!(headline_column(&r), Some(2));
        r.rows.truncate(1);
        assert!(
            relative_bars(&r).is_none(),
            "the baseline alone: nothing to relate"
        );
        r.columns = vec!["read_lat_p99_us".into()];
        assert_eq!(
            headline_column(&r),
            None,
            "no result where higher is better"
        );
    }
}
