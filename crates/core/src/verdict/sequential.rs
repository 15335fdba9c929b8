//! Sequential verdicts (`compare --until decided`): look again after every round, stop a cell
//! as soon as its comparison with the baseline is decided, and keep the error rate although
//! when to stop depends on the data.
//!
//! The figure is compared on the log scale: the estimate is the difference of the means of
//! `ln(value)` (the log of the ratio of geometric means), its interval a Welch t interval whose
//! per-side variance is at least `noise_floor²` (three values can agree by chance far more
//! closely than the runs do). A look is a call with `k` values on the smaller side,
//! `min_rounds ≤ k ≤ max_rounds`; its interval's two-sided level is `1 - alpha_k`, the `alpha_k`
//! summing to `alpha` over the looks (a weighted Bonferroni split: `last_share` of `alpha` at
//! the last look, the rest evenly over the others). The chance that *any* look's interval
//! misses the true difference is then at most `alpha`, whichever look the data made the caller
//! stop at, and every wrong decision needs such a miss. With `t = ln(1 + min_effect)`:
//! *better* or *worse* when the whole interval is on one side of 0 and the estimate beyond `t`
//! (the shape of [`super::compare`]'s rule), *equivalent* when the whole interval lies inside
//! `(-t, t)` (two one-sided tests), else *undecided*. An undecided cell also stops, *futile*,
//! when a decision at the last look has become unlikely; stopping sooner only removes chances
//! to decide, so it cannot raise the error rate. `docs/verdicts.md` ("Deciding sooner") gives
//! the simulated rates.

use super::{nan_as_null, student, Better};
use serde::{Deserialize, Serialize};

/// Parameters of [`decide`] and of the race ([`super::race`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SequentialMethod {
    /// Smallest relative difference worth a verdict (0.05 = 5 %); also the equivalence margin.
    /// Negative or non-finite: 0.
    pub min_effect: f64,
    /// Largest chance of any wrong decision over all looks, in (0, 1). Anything else: 0.05.
    pub alpha: f64,
    /// First round at which a decision may be made (values per side); at least 2.
    pub min_rounds: usize,
    /// Last round; at least `min_rounds`. The looks are the rounds `min_rounds..=max_rounds`.
    pub max_rounds: usize,
    /// Smallest standard deviation of `ln(value)` assumed for a side (0.01: about 1 % noise).
    /// Negative or non-finite: 0.
    pub noise_floor: f64,
    /// Futility threshold: an undecided cell whose chance of any decision by `max_rounds`
    /// (were the true difference the current estimate) is below this stops early, undecided
    /// ([`SequentialComparison::futile`]). 0 never stops early. Outside [0, 1): 0.
    pub futility: f64,
    /// Share of `alpha` spent at the last look, the rest spread evenly over the others (0.5:
    /// early looks stop only clear differences, the last keeps most of a fixed test's power).
    /// Outside [0, 1): an even spread.
    pub last_share: f64,
}

impl Default for SequentialMethod {
    /// 5 % min effect, alpha 0.05, rounds 3 to 10, a 1 % noise floor, futility below a 10 %
    /// chance, half of alpha at the last look.
    fn default() -> Self {
        SequentialMethod {
            min_effect: 0.05,
            alpha: 0.05,
            min_rounds: 3,
            max_rounds: 10,
            noise_floor: 0.01,
            futility: 0.1,
            last_share: 0.5,
        }
    }
}

impl SequentialMethod {
    /// The method with every field brought into its documented range.
    pub fn sanitized(&self) -> SequentialMethod {
        let non_negative = |x: f64| if x.is_finite() { x.max(0.0) } else { 0.0 };
        let min_rounds = self.min_rounds.max(2);
        SequentialMethod {
            min_effect: non_negative(self.min_effect),
            alpha: if self.alpha > 0.0 && self.alpha < 1.0 {
                self.alpha
            } else {
                0.05
            },
            min_rounds,
            max_rounds: self.max_rounds.max(min_rounds),
            noise_floor: non_negative(self.noise_floor),
            futility: if (0.0..1.0).contains(&self.futility) {
                self.futility
            } else {
                0.0
            },
            last_share: if (0.0..1.0).contains(&self.last_share) {
                self.last_share
            } else {
                0.0
            },
        }
    }

    /// Number of looks: the rounds `min_rounds..=max_rounds`.
    pub fn looks(&self) -> usize {
        let m = self.sanitized();
        m.max_rounds - m.min_rounds + 1
    }

    /// Two-sided error rate of the interval at the look with `round` values on the smaller
    /// side (`max_rounds` or more: the last look). The rates of the looks sum to `alpha`.
    pub fn alpha_at(&self, round: usize) -> f64 {
        let m = self.sanitized();
        let k = self.looks();
        if k == 1 || m.last_share == 0.0 {
            return m.alpha / k as f64;
        }
        if round >= m.max_rounds {
            m.alpha * m.last_share
        } else {
            m.alpha * (1.0 - m.last_share) / (k - 1) as f64
        }
    }
}

/// Where a look left a cell's comparison with the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Better beyond the min effect: the interval excludes no change, the estimate clears it.
    Better,
    /// Worse, on the same terms as [`Decision::Better`].
    Worse,
    /// The whole interval lies inside ± the min effect: shown to be the same, within it.
    Equivalent,
    /// None of these yet (or fewer than `min_rounds` values on a side): run another round.
    Undecided,
}

/// One look's comparison of a cell with the baseline.
///
/// `ratio`, `low` and `high` are NaN when undefined (no usable value on a side; fewer than two
/// on a side for the interval) and are written as `null` in JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequentialComparison {
    /// The decision, oriented by [`Better`].
    pub decision: Decision,
    /// Ratio of geometric means, cell over baseline.
    #[serde(with = "nan_as_null")]
    pub ratio: f64,
    /// Lower end of this look's interval of the ratio (level `1 - alpha_look`).
    #[serde(with = "nan_as_null")]
    pub low: f64,
    /// Upper end of this look's interval of the ratio.
    #[serde(with = "nan_as_null")]
    pub high: f64,
    /// Usable (finite, positive) values in the cell.
    pub n_cell: usize,
    /// Usable (finite, positive) values in the baseline.
    pub n_baseline: usize,
    /// The two-sided error rate of the interval ([`SequentialMethod::alpha_at`]).
    pub alpha_look: f64,
    /// Undecided, and no decision is likely by `max_rounds`: stop running the cell, its
    /// answer is undecided. (The chance is that of the rule's decisions at the last round
    /// with the current variances, were the true difference the current estimate.)
    pub futile: bool,
}

impl SequentialComparison {
    /// Whether the cell needs no more rounds: decided, or futile.
    pub fn finished(&self) -> bool {
        self.decision != Decision::Undecided || self.futile
    }
}

/// Count, mean and sample variance (`n - 1` divisor; 0 for one value) of `ln(value)` over the
/// finite, positive values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LogStats {
    pub n: usize,
    pub mean: f64,
    pub var: f64,
}

impl LogStats {
    pub(crate) fn of(values: &[f64]) -> LogStats {
        let logs = values
            .iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .map(|x| x.ln());
        let (mut n, mut mean, mut m2) = (0_usize, 0.0, 0.0);
        // Welford's update: no cancellation when the values are close together.
        for x in logs {
            n += 1;
            let delta = x - mean;
            mean += delta / n as f64;
            m2 += delta * (x - mean);
        }
        let var = if n > 1 { m2 / (n - 1) as f64 } else { 0.0 };
        let mean = if n == 0 { f64::NAN } else { mean };
        LogStats { n, mean, var }
    }
}

/// Welch's view of `mean(a) - mean(b)` on the log scale, each side's variance of one value at
/// least `floor²`.
#[derive(Clone, Copy, Debug)]
struct Welch {
    d: f64,
    /// Per-value variances (floored) and counts of the two sides.
    var: [f64; 2],
    n: [usize; 2],
}

impl Welch {
    /// `None` below two values on a side.
    fn new(a: LogStats, b: LogStats, floor: f64) -> Option<Welch> {
        (a.n >= 2 && b.n >= 2).then(|| Welch {
            d: a.mean - b.mean,
            var: [a.var.max(floor * floor), b.var.max(floor * floor)],
            n: [a.n, b.n],
        })
    }

    /// Half width of the two-sided `1 - alpha` interval with `n` values a side.
    fn half_width(&self, n: [usize; 2], alpha: f64) -> f64 {
        let [va, vb] = [self.var[0] / n[0] as f64, self.var[1] / n[1] as f64];
        let se2 = va + vb;
        if se2 <= 0.0 {
            return 0.0;
        }
        let df = se2 * se2 / (va * va / (n[0] - 1) as f64 + vb * vb / (n[1] - 1) as f64);
        student::quantile_upper(alpha / 2.0, df) * se2.sqrt()
    }

    /// `[estimate, low, high]` with the values there are.
    fn interval(&self, alpha: f64) -> [f64; 3] {
        let half = self.half_width(self.n, alpha);
        [self.d, self.d - half, self.d + half]
    }

    /// Chance that the last round (`rounds` values a side) decides anything, were the true
    /// difference the current estimate and the variances the current ones: the estimate then
    /// moves by a normal amount whose variance is that of the values still to come.
    fn conditional_power(&self, rounds: usize, alpha: f64, t: f64) -> f64 {
        let n = self.n.map(|k| k.max(rounds));
        let half = self.half_width(n, alpha);
        let spread = |i: usize| (n[i] - self.n[i]) as f64 * self.var[i] / (n[i] * n[i]) as f64;
        let tau = (spread(0) + spread(1)).sqrt();
        // P(final estimate in (lo, hi)).
        let between = |lo: f64, hi: f64| {
            if tau == 0.0 {
                f64::from(u8::from(lo < self.d && self.d < hi))
            } else {
                normal_cdf((hi - self.d) / tau) - normal_cdf((lo - self.d) / tau)
            }
        };
        let beyond = half.max(t);
        let differs = 1.0 - between(-beyond, beyond);
        let same = if half < t {
            between(half - t, t - half)
        } else {
            0.0
        };
        differs + same
    }
}

/// Standard normal distribution function.
fn normal_cdf(x: f64) -> f64 {
    let tail = 0.5 * super::erfc(x.abs() / std::f64::consts::SQRT_2);
    if x < 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// The decision on a log-scale `[low, estimate, high]` with `t = ln(1 + min_effect)`.
fn decision([d, lo, hi]: [f64; 3], t: f64, better: Better) -> Decision {
    let higher = d > t && lo > 0.0;
    let lower = d < -t && hi < 0.0;
    match (higher, lower, better) {
        (true, _, Better::Higher) | (_, true, Better::Lower) => Decision::Better,
        (true, _, Better::Lower) | (_, true, Better::Higher) => Decision::Worse,
        _ if lo > -t && hi < t => Decision::Equivalent,
        _ => Decision::Undecided,
    }
}

/// One look at `cell` against `baseline` (see the module documentation for the rule).
/// Undecided below `min_rounds` usable values on a side. Call it once a round, after the
/// round, and stop the cell when [`SequentialComparison::finished`] or at `max_rounds`: the
/// error rate counts one look for each count of values on the smaller side, so a round whose
/// run of the cell or baseline was left out repeats a look the bound does not cover.
/// Never panics.
pub fn decide(
    cell: &[f64],
    baseline: &[f64],
    better: Better,
    method: &SequentialMethod,
) -> SequentialComparison {
    let m = method.sanitized();
    let (c, b) = (LogStats::of(cell), LogStats::of(baseline));
    let alpha_look = m.alpha_at(c.n.min(b.n));
    let t = m.min_effect.ln_1p();
    let welch = Welch::new(c, b, m.noise_floor);
    let [d, lo, hi] = welch.map_or([c.mean - b.mean, f64::NAN, f64::NAN], |w| {
        w.interval(alpha_look)
    });
    let ready = c.n >= m.min_rounds && b.n >= m.min_rounds;
    let decision = match ready {
        true => decision([d, lo, hi], t, better),
        false => Decision::Undecided,
    };
    let futile = ready
        && decision == Decision::Undecided
        && welch.is_some_and(|w| {
            w.conditional_power(m.max_rounds, m.alpha_at(m.max_rounds), t) < m.futility
        });
    SequentialComparison {
        decision,
        ratio: d.exp(),
        low: lo.exp(),
        high: hi.exp(),
        n_cell: c.n,
        n_baseline: b.n,
        alpha_look,
        futile,
    }
}

#[cfg(test)]
mod tests;
