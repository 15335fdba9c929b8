//! Draws a [`Chart`] as SVG with plotters. Text stays `<text>` elements (plotters' SVG backend
//! without its font features), so no font library or fontconfig is needed to build or draw.

use super::style::{colour, dash, legend_sample, marker, BASELINE_FILL, INK};
use super::{Axis, Chart, ChartKind, Guide, Point, Tick};
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::{DashedPathElement, EmptyElement, PathElement, Rectangle, Text};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every chart, pixels.
const WIDTH: u32 = 760;

/// Height of a line chart's plot, pixels.
const LINES_HEIGHT: u32 = 380;

/// The text of every label.
const FONT: &str = "sans-serif";

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart {id}: {reason}")]
pub struct DrawError {
    /// The chart.
    pub id: String,
    /// What plotters reported.
    pub reason: String,
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;
type Drawn = Result<(), String>;

/// plotters' error as text (the chart's id is added by [`render`]).
fn fail(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The chart as a standalone SVG document (an `<svg>` element with its size and view box).
pub fn render(chart: &Chart) -> Result<String, DrawError> {
    let mut out = String::new();
    let legend = LEGEND_ROW * legend_rows(chart) as u32;
    let plot_height = match chart.kind {
        ChartKind::Lines => LINES_HEIGHT,
        ChartKind::BarsWithRange | ChartKind::RelativeBars => bars_height(chart),
    };
    {
        let size = (WIDTH, plot_height + legend);
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        let (plot, below) = root.split_vertically(plot_height);
        let drawn = (root.fill(&WHITE).map_err(fail))
            .and_then(|()| match chart.kind {
                ChartKind::Lines => lines(&plot, chart),
                ChartKind::BarsWithRange | ChartKind::RelativeBars => bars(&plot, chart),
            })
            .and_then(|()| draw_legend(&below, chart))
            .and_then(|()| root.present().map_err(fail));
        drawn.map_err(|reason| DrawError {
            id: chart.id.clone(),
            reason,
        })?;
    }
    Ok(out)
}

/// A linear plot coordinate whose ticks are exactly the axis' ticks (plotters' own key-point
/// combinator has no label formatter).
#[derive(Clone)]
struct Ticked {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        if span == 0.0 || !value.is_finite() {
            return limit.0;
        }
        let share = (value - self.range.start) / span;
        limit.0 + (share * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match hint.weight().allow_light_points() {
            true => Vec::new(),
            false => self.ticks.clone(),
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

impl ValueFormatter<f64> for Ticked {
    fn format(value: &f64) -> String {
        super::compact(*value)
    }
}

/// The label of the tick at plot position `at`.
fn tick_label(ticks: &[Tick], at: f64) -> String {
    let found = ticks.iter().find(|t| (t.at - at).abs() < 1e-9);
    found.map(|t| t.label.clone()).unwrap_or_default()
}

/// The plot coordinate of an axis, and its ticks.
fn plot_range(a: &Axis) -> (Ticked, Vec<Tick>) {
    let ticks = a.ticks();
    let range = a.to_plot(a.min)..a.to_plot(a.max);
    let at = ticks.iter().map(|t| t.at).collect();
    (Ticked { range, ticks: at }, ticks)
}

/// The title, plot area and labelled axes: `x` across with `x_label` under it, `y` up.
fn frame<'a, 'b>(
    area: &'a Area<'b>,
    c: &Chart,
    (x, x_ticks, x_label): (Ticked, &[Tick], &str),
    (y, y_label_text): (Ticked, &dyn Fn(f64) -> String),
    (y_label, y_area): (&str, u32),
) -> Result<Plot<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(area)
        .caption(&c.title, (FONT, 20))
        .margin(10)
        .margin_right(if c.kind == ChartKind::Lines { 24 } else { 130 })
        .x_label_area_size(48)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x, y)
        .map_err(fail)?;
    let x_text = |v: &f64| tick_label(x_ticks, *v);
    let y_text = |v: &f64| y_label_text(*v);
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(WHITE)
        .bold_line_style(INK.mix(0.15))
        .x_desc(x_label)
        .axis_desc_style((FONT, 16))
        .label_style((FONT, 15))
        .x_label_formatter(&x_text)
        .y_label_formatter(&y_text);
    if !y_label.is_empty() {
        mesh.y_desc(y_label);
    }
    if c.kind != ChartKind::Lines {
        mesh.disable_y_mesh();
    }
    mesh.draw().map_err(fail)?;
    Ok(chart)
}

fn bars_height(c: &Chart) -> u32 {
    let per_row = 16 + 12 * c.series.len().max(1) as u32;
    110 + per_row * c.categories.len().max(1) as u32
}

/// A category label short enough for the label area: the middle gives way, since a cell's
/// label starts with the stack type and ends with what tells cells apart (a path's last
/// part, the workload, the sweep values).
fn shorten(label: &str) -> String {
    const MAX: usize = 40;
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= MAX {
        return label.to_string();
    }
    let head: String = chars[..12].iter().collect();
    let tail: String = chars[chars.len() - (MAX - 13)..].iter().collect();
    format!("{head}…{tail}")
}

/// Bars across, one row per category (the first at the top), grouped by series.
fn bars(area: &Area, c: &Chart) -> Drawn {
    let n = c.categories.len();
    let labels: Vec<String> = c.categories.iter().map(|l| shorten(l)).collect();
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4);
    let (values, value_ticks) = plot_range(&c.y);
    let rows = Ticked {
        range: -0.5..n as f64 - 0.5,
        ticks: (0..n).map(|i| i as f64).collect(),
    };
    let row_label = |v: f64| {
        let i = (n as f64 - 1.0 - v).round();
        labels.get(i as usize).cloned().unwrap_or_default()
    };
    let label_area = (widest as u32 * 8 + 16).clamp(60, 420);
    let mut chart = frame(
        area,
        c,
        (values, &value_ticks, &c.y.label),
        (rows, &row_label),
        ("", label_area),
    )?;
    let band = 0.7 / c.series.len().max(1) as f64;
    for (k, s) in c.series.iter().enumerate() {
        for p in &s.points {
            let mid = (n as f64 - 1.0 - p.x) + 0.35 - (k as f64 + 0.5) * band;
            bar(&mut chart, c, (k, p), (mid, band))?;
        }
    }
    for g in &c.guides {
        if let Guide::AtY { y, .. } = g {
            let x = c.y.to_plot(*y);
            let ends = vec![(x, -0.5), (x, n as f64 - 0.5)];
            let line = DashedPathElement::new(ends, 6, 4, INK.stroke_width(1));
            chart.draw_series([line]).map_err(fail)?;
        }
    }
    Ok(())
}

/// One bar of series `k` centred on row position `mid`, its whisker and its note.
fn bar(chart: &mut Plot, c: &Chart, (k, p): (usize, &Point), (mid, band): (f64, f64)) -> Drawn {
    let (top, bottom) = (mid + band * 0.42, mid - band * 0.42);
    let fill = if p.baseline { BASELINE_FILL } else { colour(k) };
    let (zero, end) = (c.y.to_plot(c.y.min.max(0.0)), c.y.to_plot(p.y));
    let corners = [(zero, bottom), (end, top)];
    let body = Rectangle::new(corners, fill.filled());
    let edge = Rectangle::new(corners, INK.stroke_width(1));
    chart.draw_series([body, edge]).map_err(fail)?;
    let hi = p.high.map(|v| c.y.to_plot(v));
    if let (Some(lo), Some(hi)) = (p.low.map(|v| c.y.to_plot(v)), hi) {
        let cap = band * 0.2;
        let whisker = [
            vec![(lo, mid), (hi, mid)],
            vec![(lo, mid - cap), (lo, mid + cap)],
            vec![(hi, mid - cap), (hi, mid + cap)],
        ];
        let whisker = whisker.map(|w| PathElement::new(w, INK.stroke_width(2)));
        chart.draw_series(whisker).map_err(fail)?;
    }
    if let Some(note) = &p.note {
        let style = TextStyle::from((FONT, 15))
            .color(&INK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let x = hi.unwrap_or(end).max(end);
        let text = EmptyElement::at((x, mid)) + Text::new(note.clone(), (6, 0), style);
        chart.draw_series([text]).map_err(fail)?;
    }
    Ok(())
}

/// Lines with markers (and bands where points have ranges), guides labelled.
fn lines(area: &Area, c: &Chart) -> Drawn {
    let (xs, x_ticks) = plot_range(&c.x);
    let (ys, y_ticks) = plot_range(&c.y);
    let y_text = |v: f64| tick_label(&y_ticks, v);
    let mut chart = frame(
        area,
        c,
        (xs, &x_ticks, &c.x.label),
        (ys, &y_text),
        (&c.y.label, 72),
    )?;
    let at = |p: &Point| (c.x.to_plot(p.x), c.y.to_plot(p.y));
    for (k, s) in c.series.iter().enumerate() {
        let ranged: Vec<(f64, f64, f64)> = (s.points.iter())
            .filter_map(|p| Some((c.x.to_plot(p.x), c.y.to_plot(p.low?), c.y.to_plot(p.high?))))
            .collect();
        if ranged.len() > 1 {
            let upper = ranged.iter().map(|(x, _, hi)| (*x, *hi));
            let lower = ranged.iter().rev().map(|(x, lo, _)| (*x, *lo));
            let outline: Vec<(f64, f64)> = upper.chain(lower).collect();
            let band = Polygon::new(outline, colour(k).mix(0.2).filled());
            chart.draw_series([band]).map_err(fail)?;
        }
        let (size, gap) = dash(k);
        let style = colour(k).stroke_width(2);
        let line = DashedLineSeries::new(s.points.iter().map(at), size, gap, style);
        chart.draw_series(line).map_err(fail)?;
        // About a dozen markers per series: enough to tell it apart, few enough to read it.
        let every = s.points.len().div_ceil(12).max(1);
        let markers = s.points.iter().step_by(every).map(|p| marker(k, at(p)));
        chart.draw_series(markers).map_err(fail)?;
    }
    for g in &c.guides {
        let (from, to, label) = match g {
            Guide::AtX { x, label } => {
                let x = c.x.to_plot(*x);
                ((x, c.y.to_plot(c.y.min)), (x, c.y.to_plot(c.y.max)), label)
            }
            Guide::AtY { y, label } => {
                let y = c.y.to_plot(*y);
                ((c.x.to_plot(c.x.min), y), (c.x.to_plot(c.x.max), y), label)
            }
        };
        let line = DashedPathElement::new(vec![from, to], 6, 4, INK.stroke_width(1));
        let style = TextStyle::from((FONT, 14)).color(&INK);
        // A level's label sits above its line's right end, inside the plot (beyond the end
        // it was cut off); a time's beside the top of its line.
        let (style, offset) = match g {
            Guide::AtY { .. } => (style.pos(Pos::new(HPos::Right, VPos::Bottom)), (-4, -3)),
            Guide::AtX { .. } => (style, (4, 2)),
        };
        let text = EmptyElement::at(to) + Text::new(label.clone(), offset, style);
        chart.draw_series([line]).map_err(fail)?;
        chart.draw_series([text]).map_err(fail)?;
    }
    Ok(())
}

/// Legend entries per row at most.
const LEGEND_PER_ROW: usize = 3;

/// Height of a legend row, pixels.
const LEGEND_ROW: u32 = 24;

/// Width of the legend's sample and the gap after it, pixels.
const LEGEND_SAMPLE: i32 = 36;

/// Legend entries per row: three when the names fit (about 8 pixels a character), fewer
/// when they are long (a stack spec with its path), so they never overlap.
fn legend_per_row(c: &Chart) -> usize {
    let widest = c.series.iter().map(|s| shorten(&s.name).chars().count());
    let entry = LEGEND_SAMPLE as usize + 8 * widest.max().unwrap_or(0) + 16;
    ((WIDTH as usize - 80) / entry).clamp(1, LEGEND_PER_ROW)
}

/// Rows of legend under the chart: for lines, and for bars grouped by several series.
fn legend_rows(c: &Chart) -> usize {
    match c.kind {
        ChartKind::Lines => c.series.len().div_ceil(legend_per_row(c)),
        _ if c.series.len() > 1 => c.series.len().div_ceil(legend_per_row(c)),
        _ => 0,
    }
}

/// The legend under the chart: each series' sample (dash and marker, or bar colour) and name.
fn draw_legend(area: &Area, c: &Chart) -> Drawn {
    if legend_rows(c) == 0 {
        return Ok(());
    }
    let per_row = legend_per_row(c);
    let column = (WIDTH as i32 - 80) / per_row as i32;
    for (k, s) in c.series.iter().enumerate() {
        let (row, col) = ((k / per_row) as i32, (k % per_row) as i32);
        let (x, y) = (74 + col * column, 10 + row * LEGEND_ROW as i32);
        if c.kind == ChartKind::Lines {
            let (line, marker) = legend_sample(k, (x, y));
            area.draw(&line).map_err(fail)?;
            area.draw(&marker).map_err(fail)?;
        } else {
            // A series of the baseline's bars (a stack in grouped bars) has their grey.
            let baseline = !s.points.is_empty() && s.points.iter().all(|p| p.baseline);
            let fill = if baseline { BASELINE_FILL } else { colour(k) };
            let corners = [(x, y - 7), (x + 28, y + 7)];
            area.draw(&Rectangle::new(corners, fill.filled()))
                .map_err(fail)?;
            area.draw(&Rectangle::new(corners, INK.stroke_width(1)))
                .map_err(fail)?;
        }
        let style = TextStyle::from((FONT, 15))
            .color(&INK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let name = Text::new(shorten(&s.name), (x + LEGEND_SAMPLE, y), style);
        area.draw(&name).map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_keep_their_ends() {
        assert_eq!(shorten("ext4 / slob"), "ext4 / slob");
        let long = "dir=/work/target-html/tmp/.tmpp2x5NM/a / randread";
        let short = shorten(long);
        assert_eq!(short.chars().count(), 40);
        assert!(
            short.starts_with("dir=/work/ta") && short.ends_with("5NM/a / randread"),
            "{short}"
        );
    }

    /// A comparison of the ramp fixture's two stacks: its bars and curves with bands.
    fn ramp_study() -> crate::comparison::StudyReport {
        let cols = [crate::figures::figure("read_iops").unwrap()];
        let cells = crate::ramp_fixture::cells();
        crate::comparison::build(&cells, &cols, &Default::default(), 3)
    }

    #[test]
    fn every_chart_of_the_fixtures_draws_with_its_parts() {
        let run = crate::fixture::record();
        let study = crate::fixture::study(&["read_iops", "write_iops", "read_amplification"]);
        let charts = super::super::run::charts(&run)
            .into_iter()
            .chain(super::super::study::charts(&study))
            .chain(super::super::study::charts(&crate::fixture::phase_study()))
            .chain(super::super::study::charts(&ramp_study()));
        for c in charts {
            let svg = render(&c).unwrap();
            if let Ok(dir) = std::env::var("BAKEOFF_DUMP_SVG") {
                std::fs::write(format!("{dir}/{}.svg", c.id), &svg).unwrap();
            }
            assert!(svg.starts_with("<svg"), "{}: {svg:.80}", c.id);
            // Text is XML-escaped (a ramp's limit reads `p99 <= 5.00 ms`).
            let title = c.title.replace('<', "&lt;");
            assert!(svg.contains(&title), "{}: title", c.id);
            assert!(
                svg.contains(&c.y.label) || svg.contains(&c.x.label),
                "{}: axis label",
                c.id
            );
            match c.kind {
                ChartKind::Lines => assert!(svg.contains("<polyline"), "{}", c.id),
                _ => assert!(
                    svg.matches("<rect").count() > c.series[0].points.len(),
                    "{}",
                    c.id
                ),
            }
            let legend = c.kind == ChartKind::Lines || c.series.len() > 1;
            for s in c.series.iter().filter(|_| legend) {
                assert!(
                    svg.contains(&shorten(&s.name)),
                    "{}: legend {}",
                    c.id,
                    s.name
                );
            }
        }
    }
}
