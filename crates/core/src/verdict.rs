//! Verdicts: is a cell better, worse, or not significantly different from the baseline?
//!
//! A bootstrap interval against a noise threshold (criterion), with the Mann-Whitney p-value as
//! a second opinion (benchstat); `docs/verdicts.md` explains it to users and gives the simulated
//! error rates. Only finite, positive values are compared. The estimate is `median(cell) /
//! median(baseline)`; a percentile bootstrap (groups resampled independently, fixed seed) gives
//! its interval. With `t = 1 + min_effect`, the cell is *higher* when the estimate is above `t`
//! and the interval lies above 1 or, with fewer than [`STRICT_BELOW`] values on a side, above
//! `t`; *lower* likewise below `1 / t` and 1. [`Better`] orients that into Better or Worse;
//! anything else is no significant difference. All of it is symmetric in log space, so swapping
//! cell and baseline exactly swaps Better and Worse.

use serde::{Deserialize, Serialize};

pub mod race;
pub mod sequential;
#[cfg(test)]
mod simulation;
mod student;

/// Fewest values per side for a verdict. With 2, samples from one distribution have disjoint
/// ranges one time in three: the rule then gives 6–20 % false verdicts (docs/verdicts.md).
pub const MIN_SAMPLES: usize = 3;

/// Below this many values on a side the whole interval, not only the estimate, must clear the
/// min effect. With 3 per side the bootstrap interval is `[min/max, max/min]`, which excludes 1
/// in one A/A comparison in ten; the extra margin brings that down to 1–6 %.
pub const STRICT_BELOW: usize = 5;

/// Largest number of bootstrap resamples [`compare`] will draw (bounds memory).
pub const MAX_RESAMPLES: usize = 1_000_000;

/// Largest pooled size for which [`mann_whitney_p`] is exact (above: normal approximation).
pub const EXACT_MAX: usize = 40;

/// Which direction is better for a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// More is better: IOPS, MB/s, transactions per second.
    Higher,
    /// Less is better: latency, CPU µs per operation.
    Lower,
}

/// How a cell's figure compares with the baseline's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Better than the baseline by more than the min effect, and the interval excludes no change
    /// (with fewer than [`STRICT_BELOW`] values on a side: the whole interval clears the min effect).
    Better,
    /// Worse than the baseline, on the same terms as [`Verdict::Better`].
    Worse,
    /// Neither: the difference is inside the min effect, or not shown beyond the noise.
    NoSignificantDifference,
    /// Fewer than [`MIN_SAMPLES`] usable values on a side: no verdict is possible.
    TooFewSamples,
    /// Shown to be within the minimum effect of the baseline: `compare --until decided`'s
    /// sequential rule ([`sequential::decide`]) only; [`compare`] never gives it.
    Equivalent,
}

/// The comparison of one figure of a cell with the same figure of the baseline.
///
/// `ratio`, `ci_low` and `ci_high` are NaN when undefined (no values on a side; fewer than two
/// values on a side for the interval) and are written as `null` in JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The verdict, oriented by [`Better`].
    pub verdict: Verdict,
    /// `median(cell) / median(baseline)`.
    #[serde(with = "nan_as_null")]
    pub ratio: f64,
    /// Lower end of the bootstrap interval of the ratio (at [`Method::confidence`]).
    #[serde(with = "nan_as_null")]
    pub ci_low: f64,
    /// Upper end of the bootstrap interval of the ratio.
    #[serde(with = "nan_as_null")]
    pub ci_high: f64,
    /// Two-sided Mann-Whitney U p-value (exact up to [`EXACT_MAX`] values). Reported, not
    /// used for the verdict: with 3 values per side it can never go below 0.1.
    pub p_value: Option<f64>,
    /// Usable (finite, positive) values in the cell.
    pub n_cell: usize,
    /// Usable (finite, positive) values in the baseline.
    pub n_baseline: usize,
    /// The min effect used (0.05 = 5 %); differences inside it are reported as no difference.
    pub min_effect: f64,
}

/// Parameters of [`compare`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Method {
    /// Smallest relative difference worth a verdict (0.05 = 5 %). Negative or non-finite: 0.
    pub min_effect: f64,
    /// Confidence level of the interval, in (0, 1). Anything else: 0.95.
    pub confidence: f64,
    /// Bootstrap resamples, clamped to `1..=MAX_RESAMPLES`.
    pub resamples: usize,
    /// Seed of the resampling; the same inputs and seed give the same result.
    pub seed: u64,
}

impl Default for Method {
    /// 5 % min effect, 95 % confidence, 2000 resamples, a fixed seed.
    fn default() -> Self {
        Method {
            min_effect: 0.05,
            confidence: 0.95,
            resamples: 2000,
            seed: 0x0bad_cafe_5eed_f00d,
        }
    }
}

/// Median of the finite values (mean of the middle two for an even count); `None` if none.
pub fn median(xs: &[f64]) -> Option<f64> {
    sorted_median(&kept(xs, f64::is_finite))
}

/// `(min, max)` of the finite values, the range shown next to a median; `None` if none.
pub fn spread(xs: &[f64]) -> Option<(f64, f64)> {
    let s = kept(xs, f64::is_finite);
    Some((*s.first()?, *s.last()?))
}

/// Compares `cell` with `baseline` (see the module documentation for the rule). Never panics.
pub fn compare(cell: &[f64], baseline: &[f64], better: Better, method: &Method) -> Comparison {
    let usable = |x: f64| x.is_finite() && x > 0.0;
    let (c, b) = (kept(cell, usable), kept(baseline, usable));
    let me = method.min_effect;
    let min_effect = if me.is_finite() { me.max(0.0) } else { 0.0 };
    let (ratio, point) = match (sorted_median(&c), sorted_median(&b)) {
        (Some(mc), Some(mb)) => (mc / mb, mc.ln() - mb.ln()),
        _ => (f64::NAN, f64::NAN),
    };
    let (mut ci_low, mut ci_high, mut verdict) = (f64::NAN, f64::NAN, Verdict::TooFewSamples);
    if c.len() >= 2 && b.len() >= 2 {
        let (lo, hi) = log_ratio_interval(&c, &b, method);
        (ci_low, ci_high) = (lo.exp(), hi.exp());
        if c.len() >= MIN_SAMPLES && b.len() >= MIN_SAMPLES {
            let t = (1.0 + min_effect).ln();
            let margin = if c.len().min(b.len()) < STRICT_BELOW {
                t
            } else {
                0.0
            };
            verdict = decide([lo, point, hi], t, margin, better);
        }
    }
    Comparison {
        verdict,
        ratio,
        ci_low,
        ci_high,
        p_value: mann_whitney_p(&c, &b),
        n_cell: c.len(),
        n_baseline: b.len(),
        min_effect,
    }
}

/// The decision on log ratios: the estimate must clear `t`, the interval must clear `margin`.
fn decide([lo, point, hi]: [f64; 3], t: f64, margin: f64, better: Better) -> Verdict {
    let higher = point > t && lo > margin;
    let lower = point < -t && hi < -margin;
    match (higher, lower, better) {
        (true, _, Better::Higher) | (_, true, Better::Lower) => Verdict::Better,
        (true, _, Better::Lower) | (_, true, Better::Higher) => Verdict::Worse,
        _ => Verdict::NoSignificantDifference,
    }
}

/// Two-sided Mann-Whitney U (Wilcoxon rank-sum) p-value of the finite values, with mid-ranks
/// for ties. Exact permutation distribution (conditional on ties) when the pooled size is at
/// most [`EXACT_MAX`]; otherwise the normal approximation with tie and continuity corrections.
/// `None` when a side has no finite value.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    rank_sum_p(a, b, EXACT_MAX)
}

fn rank_sum_p(a: &[f64], b: &[f64], exact_max: usize) -> Option<f64> {
    let (a, b) = (kept(a, f64::is_finite), kept(b, f64::is_finite));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).collect();
    pooled.extend(b.iter().map(|&x| (x, false)));
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Doubled mid-ranks, so that every rank is an integer; `ties` sums t^3 - t over tie groups.
    let (mut ranks2, mut ties, mut i) = (vec![0_i64; pooled.len()], 0.0, 0);
    while i < pooled.len() {
        let mut j = i;
        while j + 1 < pooled.len() && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        ranks2[i..=j].fill((i + j + 2) as i64);
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let (m, n, big) = (a.len(), b.len(), pooled.len());
    let w2: i64 = (0..big).filter(|&i| pooled[i].1).map(|i| ranks2[i]).sum();
    // |2W - E[2W]|, the same as |2U - mn| without ties.
    let dev = (w2 - (m * (big + 1)) as i64).abs();
    if big <= exact_max {
        return Some(if ties == 0.0 {
            exact_p_no_ties(m, n, dev)
        } else {
            exact_p_ties(&ranks2, m, dev)
        });
    }
    let var = (m * n) as f64 / 12.0 * ((big + 1) as f64 - ties / (big * (big - 1)) as f64);
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = (dev as f64 / 2.0 - 0.5).max(0.0) / var.sqrt();
    Some(erfc(z / std::f64::consts::SQRT_2).min(1.0))
}

/// Without ties U is distributed as the coefficients of the Gaussian binomial `[m+n, m]_q`,
/// built as a product of `(1 - q^(n+i)) / (1 - q^i)` (Harding 1984): O(m·mn).
fn exact_p_no_ties(m: usize, n: usize, dev: i64) -> f64 {
    let top = m * n;
    let mut f = vec![0.0_f64; top + 1];
    f[0] = 1.0;
    for i in 1..=m {
        for u in (n + i..=top).rev() {
            f[u] -= f[u - n - i];
        }
        for u in i..=top {
            f[u] += f[u - i];
        }
    }
    tail_fraction(&f, 2, top as i64, dev)
}

/// With ties: counts of subsets of size `m` by doubled rank sum (dynamic programming).
fn exact_p_ties(ranks2: &[i64], m: usize, dev: i64) -> f64 {
    let width = ranks2.iter().sum::<i64>() as usize + 1;
    // counts[k * width + s]: subsets of size k with doubled rank sum s.
    let (mut counts, mut reach) = (vec![0.0_f64; (m + 1) * width], 0);
    counts[0] = 1.0;
    for (i, &r) in ranks2.iter().enumerate() {
        let r = r as usize;
        reach += r;
        let k_min = (m + i + 1).saturating_sub(ranks2.len()).max(1);
        for k in (k_min..=m.min(i + 1)).rev() {
            let (prev, cur) = counts.split_at_mut(k * width);
            let prev = &prev[(k - 1) * width..];
            for s in r..=reach {
                cur[s] += prev[s - r];
            }
        }
    }
    let center2 = (m * (ranks2.len() + 1)) as i64;
    tail_fraction(&counts[m * width..], 1, center2, dev)
}

/// Share of the distribution `f` whose statistic `scale * index` is at least `dev` from `center2`.
fn tail_fraction(f: &[f64], scale: i64, center2: i64, dev: i64) -> f64 {
    let total: f64 = f.iter().sum();
    let far = |s: usize| (scale * s as i64 - center2).abs() >= dev;
    let tail: f64 = f.iter().enumerate().filter(|x| far(x.0)).map(|x| x.1).sum();
    (tail / total).min(1.0)
}

/// Complementary error function (Numerical Recipes `erfcc`, relative error < 1.2e-7), x ≥ 0.
fn erfc(x: f64) -> f64 {
    #[rustfmt::skip]
    const C: [f64; 10] = [-1.265_512_23, 1.000_023_68, 0.374_091_96, 0.096_784_18, -0.186_288_06,
        0.278_868_07, -1.135_203_98, 1.488_515_87, -0.822_152_23, 0.170_872_77];
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = C.iter().rev().fold(0.0, |acc, c| c + t * acc);
    t * (-x * x + poly).exp()
}

/// The values passing `keep`, sorted.
fn kept(xs: &[f64], keep: impl Fn(f64) -> bool) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|&x| keep(x)).collect();
    v.sort_by(f64::total_cmp);
    v
}

fn sorted_median(s: &[f64]) -> Option<f64> {
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some(s[n / 2 - 1] + (s[n / 2] - s[n / 2 - 1]) / 2.0),
    }
}

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, good enough for resampling.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift; bias below 2^-50 for benchmark-sized n).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Median of a resample (with replacement) of `sorted`, via index counts: O(n), no sort.
/// (Plain loops: this is the hot loop of the simulation tests, which run unoptimised.)
fn resample_median(sorted: &[f64], counts: &mut [u32], rng: &mut SplitMix64) -> f64 {
    let n = sorted.len();
    counts.fill(0);
    let mut drawn = 0;
    while drawn < n {
        counts[rng.below(n)] += 1;
        drawn += 1;
    }
    // i: the index holding the lower median (position (n - 1) / 2 of the resample).
    let (k, mut i) = ((n - 1) / 2, 0);
    let mut seen = counts[0] as usize;
    while seen <= k {
        i += 1;
        seen += counts[i] as usize;
    }
    if n % 2 == 1 || seen > k + 1 {
        return sorted[i];
    }
    let lo = sorted[i];
    i += 1;
    while counts[i] == 0 {
        i += 1;
    }
    lo + (sorted[i] - lo) / 2.0
}

/// Percentile bootstrap interval of `ln(median(cell) / median(base))`; both sides non-empty,
/// sorted, positive. The two random streams are assigned to the samples in a canonical order,
/// so swapping `cell` and `base` negates every resampled log ratio exactly.
fn log_ratio_interval(cell: &[f64], base: &[f64], method: &Method) -> (f64, f64) {
    let resamples = method.resamples.clamp(1, MAX_RESAMPLES);
    let c = method.confidence;
    let conf = if c > 0.0 && c < 1.0 { c } else { 0.95 };
    // Positive floats order like their bits: a total order on samples, to pick the streams.
    let key = |s: &[f64]| (s.len(), s.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let swap = usize::from(key(cell) > key(base));
    let seeds = [method.seed, method.seed ^ 0x5851_f42d_4c95_7f2d];
    let (rc, rb) = (
        &mut SplitMix64(seeds[swap]),
        &mut SplitMix64(seeds[1 - swap]),
    );
    let (mut cc, mut cb) = (vec![0; cell.len()], vec![0; base.len()]);
    let mut d: Vec<f64> = (0..resamples)
        .map(|_| resample_median(cell, &mut cc, rc).ln() - resample_median(base, &mut cb, rb).ln())
        .collect();
    let lo = ((((1.0 - conf) / 2.0) * resamples as f64) as usize).min((resamples - 1) / 2);
    let hi = resamples - 1 - lo;
    let high = *d.select_nth_unstable_by(hi, f64::total_cmp).1;
    (*d[..=hi].select_nth_unstable_by(lo, f64::total_cmp).1, high)
}

/// Serde for f64 fields that may be NaN or infinite: written as `null`, read back as NaN.
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        x.is_finite().then_some(x).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests;
