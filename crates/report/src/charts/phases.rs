//! The charts of a comparison of recipes (seed 001's and 002's timed steps): per recipe, the
//! phases as groups of bars, one bar per stack. The real time of each phase with its range
//! over repetitions and its verdict against the baseline stack; then, where the phases have
//! them, the bytes written on the stack's devices and the commands' CPU (medians: the phase
//! table keeps no range of those).

use super::note::note;
use super::{categories_axis, zero_based, Chart, ChartKind, Point, Series};
use crate::comparison::phases::{figure_of, PhaseCell, PhaseTable};
use crate::comparison::StudyReport;
use std::path::Path;

/// Bytes in a MiB, the unit of the phase table's space row.
const MIB: f64 = 1_048_576.0;

/// What one chart of a phase table shows: its id, title, value axis, and how a cell gives a
/// bar (the real time draws its range and verdict; the others a median and its ratio).
struct Quantity {
    id: &'static str,
    title: &'static str,
    axis: &'static str,
    value: fn(&PhaseCell) -> Option<f64>,
    with_range: bool,
    more: &'static str,
}

const QUANTITIES: [Quantity; 3] = [
    Quantity {
        id: "phases_real_s",
        title: "real time per phase",
        axis: "real time (s)",
        value: |c| c.value.median,
        with_range: true,
        more: "Lower is better.",
    },
    Quantity {
        id: "phases_device_write_mib",
        title: "device writes per phase",
        axis: "written to the stack's devices (MiB)",
        value: |c| c.device_write_bytes.map(|b| b / MIB),
        with_range: false,
        more: "A diagnostic: what the file system wrote for the same commands.",
    },
    Quantity {
        id: "phases_command_cpu_s",
        title: "command CPU per phase",
        axis: "user + system CPU of the commands (s)",
        value: |c| c.command_cpu_s,
        with_range: false,
        more: "A diagnostic; for a built-in action (sync, cold), bakeoff's own CPU in it.",
    },
];

/// The charts of every phase table: for each, real time, device writes and command CPU per
/// phase, those with a value. With several tables, the ids of all but the first end in `-N`.
pub fn charts(r: &StudyReport) -> Vec<Chart> {
    let mut out = Vec::new();
    for (n, t) in r.phases.iter().enumerate() {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{}", n + 1)
        };
        for q in &QUANTITIES {
            if let Some(mut c) = grouped(t, q) {
                c.id.push_str(&suffix);
                out.push(c);
            }
        }
    }
    out
}

/// The bar of stack `k` in one phase: its value, its range and verdict or its ratio to the
/// baseline stack's value, `None` without a value.
fn bar(t: &PhaseTable, cells: &[PhaseCell], k: usize, q: &Quantity) -> Option<Point> {
    let cell = cells.get(k)?;
    let y = (q.value)(cell).filter(|v| v.is_finite())?;
    let is_baseline = t.baseline == Some(k);
    if q.with_range {
        return Some(Point {
            y,
            low: cell.value.min,
            high: cell.value.max,
            note: note(&cell.value, figure_of("real_s"), is_baseline),
            baseline: is_baseline,
            ..Point::default()
        });
    }
    let base = t.baseline.and_then(|b| (q.value)(cells.get(b)?));
    let ratio = base.filter(|b| *b > 0.0 && !is_baseline).map(|b| y / b);
    let note = match is_baseline {
        true => Some("baseline".to_string()),
        false => ratio.map(|r| format!("×{r:.2}")),
    };
    Some(Point {
        y,
        note,
        baseline: is_baseline,
        ..Point::default()
    })
}

/// The recipe as a title names it: a recipe file by its file name (its directory is in the
/// phase table), then its settings.
fn recipe_name(recipe: &str) -> String {
    let recipe = recipe.trim();
    let (first, settings) = recipe.split_once(' ').unwrap_or((recipe, ""));
    let file = Path::new(first).file_name().map(|n| n.to_string_lossy());
    let name = file.map_or_else(|| first.to_string(), |n| n.into_owned());
    format!("{name} {settings}").trim_end().to_string()
}

/// A group of bars per phase, a series per stack; `None` when no phase has a value.
fn grouped(t: &PhaseTable, q: &Quantity) -> Option<Chart> {
    let phases = t.phase_rows();
    let series: Vec<Series> = (t.stacks.iter().enumerate())
        .map(|(k, stack)| Series {
            name: match t.baseline == Some(k) {
                true => format!("{stack} (baseline)"),
                false => stack.clone(),
            },
            points: (phases.iter().enumerate())
                .filter_map(|(i, row)| {
                    let p = bar(t, &row.cells, k, q)?;
                    Some(Point { x: i as f64, ..p })
                })
                .collect(),
        })
        .collect();
    let points = || series.iter().flat_map(|s| &s.points);
    if points().all(|p| p.y == 0.0) {
        return None;
    }
    let ends = points().flat_map(|p| [p.y, p.high.unwrap_or(p.y)]);
    let y = zero_based(q.axis, ends);
    let what = match q.with_range {
        true => {
            "the median over the repetitions; whisker: smallest to largest repetition; beside \
             it the ratio to the baseline stack with its verdict (+ faster, - slower, = no \
             significant difference, ? too few repetitions)"
        }
        false => "the median over the repetitions; beside it the ratio to the baseline stack",
    };
    Some(Chart {
        id: q.id.to_string(),
        title: format!("{}: {}", recipe_name(&t.recipe), q.title),
        kind: ChartKind::BarsWithRange,
        x: categories_axis("phase", phases.len()),
        y,
        categories: phases.iter().map(|r| r.name.clone()).collect(),
        series,
        guides: Vec::new(),
        caption: format!(
            "A group of bars per phase, one bar per stack (grey: the baseline): {what}. {}",
            q.more
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_groups_of_a_bar_per_stack_with_the_baseline_marked() {
        let r = crate::fixture::phase_study();
        let charts = charts(&r);
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "phases_real_s",
                "phases_device_write_mib",
                "phases_command_cpu_s"
            ]
        );
        let time = &charts[0];
        assert_eq!(time.categories, ["build-2x", "flush"], "no total, no space");
        assert_eq!(time.series.len(), 2, "a series per stack");
        assert!(time.series[0].points.iter().all(|p| p.baseline));
        assert!(time.series[1].points.iter().all(|p| !p.baseline));
        let text: String = charts.iter().map(|c| format!("{c}\n")).collect();
        insta::assert_snapshot!(text);
    }

    #[test]
    fn a_quantity_no_phase_has_draws_no_chart() {
        let mut r = crate::fixture::phase_study();
        for row in &mut r.phases[0].rows {
            for c in &mut row.cells {
                (c.device_write_bytes, c.command_cpu_s) = (None, Some(0.0));
            }
        }
        let ids: Vec<String> = charts(&r).into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["phases_real_s"]);
        r.phases.push(r.phases[0].clone());
        let ids: Vec<String> = charts(&r).into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["phases_real_s", "phases_real_s-2"], "ids stay unique");
    }

    #[test]
    fn a_recipe_file_is_named_by_its_file_name_with_its_settings() {
        assert_eq!(recipe_name(" build"), "build");
        assert_eq!(recipe_name("/tmp/x/tiny.toml N=2 M=3"), "tiny.toml N=2 M=3");
    }
}
