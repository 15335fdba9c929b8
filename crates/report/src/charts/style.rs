//! How series look: the Okabe–Ito colours (distinct for the common colour-vision
//! deficiencies), and for greyscale print a dash pattern and a marker shape per series too.

use plotters::element::{DashedPathElement, Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::RGBColor;
use plotters_backend::{BackendCoord, DrawingErrorKind};

/// Okabe–Ito, without its yellow (too faint on white, and in greyscale), black last.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(230, 159, 0),   // orange
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
];

/// The baseline's bars: light grey with a black edge, apart from every palette colour.
pub const BASELINE_FILL: RGBColor = RGBColor(200, 200, 200);

/// Grid, whiskers and guide lines.
pub const INK: RGBColor = RGBColor(40, 40, 40);

/// Dash and gap lengths (pixels); a gap of 0 is a solid line.
const DASHES: [(u32, u32); 5] = [(10_000, 0), (9, 4), (3, 3), (16, 5), (7, 3)];

/// Marker outlines as offsets from the point (pixels).
const MARKERS: [&[(i32, i32)]; 7] = [
    &[
        (-2, -4),
        (2, -4),
        (4, -2),
        (4, 2),
        (2, 4),
        (-2, 4),
        (-4, 2),
        (-4, -2),
    ], // disc
    &[(0, -5), (5, 4), (-5, 4)],           // triangle up
    &[(-4, -4), (4, -4), (4, 4), (-4, 4)], // square
    &[(0, -5), (5, 0), (0, 5), (-5, 0)],   // diamond
    &[(0, 5), (5, -4), (-5, -4)],          // triangle down
    &[(-5, -5), (5, 0), (-5, 5)],          // triangle right
    &[(5, -5), (-5, 0), (5, 5)],           // triangle left
];

/// The colour of series `k`.
pub fn colour(k: usize) -> RGBColor {
    PALETTE[k % PALETTE.len()]
}

/// The dash pattern of series `k`: it cycles at another length than the colours, so two
/// series that share a colour differ in dash.
pub fn dash(k: usize) -> (u32, u32) {
    DASHES[k % DASHES.len()]
}

/// A marker: series `k`'s filled shape at a point.
pub struct Marker<C> {
    at: C,
    k: usize,
}

/// The marker of series `k` at `at` (a chart coordinate, or pixels on a drawing area).
pub fn marker<C>(k: usize, at: C) -> Marker<C> {
    Marker { at, k }
}

impl<'a, C> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = points.next() else {
            return Ok(());
        };
        let shape = MARKERS[self.k % MARKERS.len()];
        let outline = shape.iter().map(|(dx, dy)| (x + dx, y + dy));
        backend.fill_polygon(outline, &colour(self.k).filled())
    }
}

/// A dashed line in pixels.
pub type PixelDash = DashedPathElement<std::vec::IntoIter<(i32, i32)>, u32>;

/// The legend sample of series `k`: its dash, 28 pixels wide from `at`, and its marker.
pub fn legend_sample(k: usize, (x, y): (i32, i32)) -> (PixelDash, Marker<(i32, i32)>) {
    let (size, gap) = dash(k);
    let style = colour(k).stroke_width(2);
    let line = DashedPathElement::new(vec![(x, y), (x + 28, y)], size, gap, style);
    (line, marker(k, (x + 14, y)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative luminance (sRGB), for the greyscale check.
    fn luminance(c: RGBColor) -> f64 {
        let lin = |v: u8| {
            let v = v as f64 / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
    }

    #[test]
    fn series_differ_in_colour_dash_or_marker_and_stay_visible_in_grey() {
        for a in 0..12 {
            for b in a + 1..12 {
                let same = colour(a) == colour(b) && dash(a) == dash(b) && a % 7 == b % 7;
                assert!(!same, "series {a} and {b} look alike");
            }
        }
        // Every colour is darker than the baseline's grey, which is darker than white.
        for c in PALETTE {
            assert!(luminance(c) < luminance(BASELINE_FILL) - 0.1, "{c:?}");
        }
    }
}
