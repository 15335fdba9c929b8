//! Where an axis puts its ticks and what they say: round numbers on linear axes, decades on
//! log axes, min/p50/p90/.../max on a percentile axis. Pure, so the renderer only draws.

use super::{Axis, Scale};

/// Round multipliers for axis ends, within a decade.
const ENDS: [f64; 11] = [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0];

/// Round tick steps, within a decade.
const STEPS: [f64; 5] = [1.0, 2.0, 2.5, 5.0, 10.0];

/// The smallest round number at or above `v` (1 for nothing above zero).
pub fn round_up(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let decade = 10f64.powf(v.log10().floor());
    ENDS.iter()
        .map(|m| m * decade)
        .find(|end| *end >= v * (1.0 - 1e-12))
        .unwrap_or(10.0 * decade)
}

/// One tick: where (in the axis' data units), the plot coordinate, and its text.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Data value.
    pub value: f64,
    /// Position on the drawing's (linear) coordinate.
    pub at: f64,
    /// Text.
    pub label: String,
}

/// The percentiles a [`Scale::Nines`] axis labels, with their names.
const NINES: [(f64, &str); 7] = [
    (0.0, "min"),
    (50.0, "p50"),
    (90.0, "p90"),
    (99.0, "p99"),
    (99.9, "p99.9"),
    (99.99, "p99.99"),
    (100.0, "max"),
];

/// Where the maximum (percentile 100) sits on a nines axis: one step past p99.99.
const NINES_MAX: f64 = 5.0;

impl Axis {
    /// A data value as a position on the drawing's linear coordinate.
    pub fn to_plot(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.max(f64::MIN_POSITIVE).log10(),
            Scale::Nines if v >= 100.0 => NINES_MAX,
            Scale::Nines if v <= 0.0 => 0.0,
            Scale::Nines => (-(1.0 - v / 100.0).log10()).min(NINES_MAX - 0.5),
        }
    }

    /// The ticks of the axis, in order.
    pub fn ticks(&self) -> Vec<Tick> {
        let tick = |value: f64, label: String| Tick {
            value,
            at: self.to_plot(value),
            label,
        };
        match self.scale {
            Scale::Nines => NINES
                .iter()
                .filter(|(p, _)| (self.min..=self.max).contains(p))
                .map(|&(p, name)| tick(p, name.to_string()))
                .collect(),
            Scale::Log => {
                let (lo, hi) = (self.to_plot(self.min), self.to_plot(self.max));
                let few = hi - lo <= 2.0;
                let mut out = Vec::new();
                for e in lo.floor() as i32..=hi.ceil() as i32 {
                    let decade = 10f64.powi(e);
                    let within = |v: f64| v >= self.min * 0.999 && v <= self.max * 1.001;
                    for m in if few {
                        &[1.0, 2.0, 5.0][..]
                    } else {
                        &[1.0][..]
                    } {
                        let v = m * decade;
                        if within(v) {
                            out.push(tick(v, compact(v)));
                        }
                    }
                }
                out
            }
            Scale::Linear => {
                let step = step_for(self.max - self.min);
                let first = (self.min / step).ceil() as i64;
                let last = (self.max / step + 1e-9).floor() as i64;
                (first..=last)
                    .map(|i| i as f64 * step)
                    .map(|v| tick(v, compact(v)))
                    .collect()
            }
        }
    }
}

/// A round step that cuts `span` into about five parts.
fn step_for(span: f64) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / 5.0;
    let decade = 10f64.powf(raw.log10().floor());
    STEPS
        .iter()
        .map(|m| m * decade)
        .find(|s| *s >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0 * decade)
}

/// A number in few characters: `97.8k`, `1.2M`, `0.25`, `8`.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = match a {
        _ if a >= 1e9 => (v / 1e9, "G"),
        _ if a >= 1e6 => (v / 1e6, "M"),
        _ if a >= 1e4 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let decimals = match scaled.abs() {
        x if x >= 100.0 || x == 0.0 => 0,
        x if x >= 10.0 => 1,
        x if x >= 0.1 => 2,
        // Two significant digits however small.
        x => (1.0 - x.log10().floor()) as usize,
    };
    let mut s = format!("{scaled:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    s + suffix
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<String> {
        a.ticks().into_iter().map(|t| t.label).collect()
    }

    fn axis(scale: Scale, min: f64, max: f64) -> Axis {
        Axis {
            label: String::new(),
            scale,
            min,
            max,
        }
    }

    #[test]
    fn round_ends_steps_and_compact_numbers() {
        assert_eq!(round_up(99_100.0), 100_000.0);
        assert_eq!(round_up(1.05), 1.2);
        assert_eq!(round_up(3.0), 3.0);
        assert_eq!(round_up(0.0), 1.0);
        assert_eq!(step_for(100_000.0), 20_000.0);
        assert_eq!(compact(97_845.0), "97.8k");
        assert_eq!(compact(100_000.0), "100k");
        assert_eq!(compact(2_500.0), "2500");
        assert_eq!(compact(1.5e6), "1.5M");
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(-12.5), "-12.5");
        assert_eq!(compact(0.00005), "0.00005");
        assert_eq!(compact(0.000125), "0.00013");
    }

    #[test]
    fn ticks_per_scale() {
        assert_eq!(
            labels(&axis(Scale::Linear, 0.0, 100_000.0)),
            ["0", "20k", "40k", "60k", "80k", "100k"]
        );
        assert_eq!(
            labels(&axis(Scale::Log, 100.0, 100_000.0)),
            ["100", "1000", "10k", "100k"]
        );
        assert_eq!(
            labels(&axis(Scale::Log, 10.0, 1000.0)),
            ["10", "20", "50", "100", "200", "500", "1000"]
        );
        let nines = axis(Scale::Nines, 0.0, 100.0);
        assert_eq!(
            labels(&nines),
            ["min", "p50", "p90", "p99", "p99.9", "p99.99", "max"]
        );
        let at: Vec<f64> = nines.ticks().iter().map(|t| t.at).collect();
        assert!(
            (at[2] - 1.0).abs() < 1e-9 && (at[4] - 3.0).abs() < 1e-9,
            "{at:?}"
        );
        assert_eq!(at[6], NINES_MAX);
    }
}
