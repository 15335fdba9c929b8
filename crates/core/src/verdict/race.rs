//! Racing a study's cells (`compare --search best|pareto`): after every round, drop the cells
//! shown to be worse than another surviving cell, and spend the next round on the survivors.
//!
//! Successive elimination in the manner of F-race, on the log scale of [`super::sequential`]:
//! the estimate of a cell is the mean of `ln(value)`. The noise is one standard deviation of
//! `ln(value)` shared by the surviving cells: the within-cell variance pooled over them, mixed
//! with a prior (`prior_sd`, worth `prior_df` degrees of freedom) so that the first round, with
//! one value a cell, can already drop a cell far behind; a cell whose own variance (from 3
//! values on) is larger uses its own. The quantile is Student's t with the pooled degrees of
//! freedom plus `prior_df`. A comparison's interval has the two-sided level
//! `alpha / (max_rounds × (cells − 1))`: the true best cell is dropped only when one of its at
//! most `cells − 1` comparisons at one of at most `max_rounds` looks misses, so at most `alpha / 2`
//! of the time (if the noise is no larger than the model says: the prior must not be smaller
//! than the noise).
//!
//! `best`: the reference is the surviving *eligible* (safe) cell with the best estimate; a
//! surviving cell whose interval against it lies wholly on the worse side is dropped. `pareto`
//! (two figures): a cell is dropped when a surviving eligible cell is better on both figures,
//! each interval wholly on the better side. A cell marked unsafe is raced (and can be dropped)
//! but is never a reference, a winner or on the front: pass `safe: true` to allow it.

use super::sequential::{LogStats, SequentialMethod};
use super::{nan_as_null, student, Better};
use serde::{Deserialize, Serialize};

/// Parameters of the race.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RaceMethod {
    /// `min_effect` (the margin of [`RaceStatus::Equivalent`]), `alpha`, `max_rounds` and
    /// `noise_floor` are used; the race looks after every round, from the first.
    pub sequential: SequentialMethod,
    /// Standard deviation of `ln(value)` assumed before the cells' own noise is measured.
    /// Take it no smaller than the noise of such runs: a prior below the true noise drops the
    /// best cell more often than `alpha` says. Non-finite or negative: the noise floor.
    pub prior_sd: f64,
    /// Weight of `prior_sd` in degrees of freedom (the pooled variance has one a cell and
    /// round after the first); 0 uses no prior, so nothing is dropped before round 2.
    pub prior_df: f64,
}

impl Default for RaceMethod {
    /// [`SequentialMethod::default`], a prior of 0.15 (the median of the noise measured in
    /// docs/studies is 0.14) worth 8 degrees of freedom.
    fn default() -> Self {
        RaceMethod {
            sequential: SequentialMethod::default(),
            prior_sd: 0.15,
            prior_df: 8.0,
        }
    }
}

/// One cell as the race sees it (a figure's values over the rounds so far).
#[derive(Clone, Copy, Debug)]
pub struct RaceCell<'a> {
    /// The cell's values (non-finite and non-positive ones are left out).
    pub values: &'a [f64],
    /// Still in the race.
    pub alive: bool,
    /// May win; an unsafe cell (e.g. it lost acknowledged commits) is raced but never chosen.
    pub safe: bool,
}

/// A cell and its two figures, for [`pareto_round`].
#[derive(Clone, Copy, Debug)]
pub struct ParetoCell<'a> {
    /// The values of the two figures.
    pub values: [&'a [f64]; 2],
    /// Still in the race.
    pub alive: bool,
    /// May be on the front.
    pub safe: bool,
}

/// A ratio and its interval, `cell / other`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    /// Ratio of geometric means.
    #[serde(with = "nan_as_null")]
    pub ratio: f64,
    /// Lower end of the interval.
    #[serde(with = "nan_as_null")]
    pub low: f64,
    /// Upper end of the interval.
    #[serde(with = "nan_as_null")]
    pub high: f64,
}

/// Why a cell left the race: the evidence at that moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    /// Index of the dropped cell.
    pub cell: usize,
    /// Round after which it was dropped.
    pub round: usize,
    /// Index of the cell it was shown worse than.
    pub against: usize,
    /// `cell / against` and its interval, one a figure (two for `pareto`).
    pub bounds: Vec<Bound>,
    /// Two-sided error rate of each interval.
    pub alpha: f64,
}

/// Where the race stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RaceStatus {
    /// One eligible cell is left: the winner.
    Won,
    /// Every other surviving eligible cell is shown within the min effect of the best.
    Equivalent,
    /// Surviving eligible cells are not separated yet (at the last round: not separated).
    Open,
    /// No eligible cell survives.
    NoEligible,
}

/// The race's answer after a round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RaceResult {
    /// Where the race stands.
    pub status: RaceStatus,
    /// The winner, or the surviving eligible cell with the best estimate.
    pub best: Option<usize>,
    /// The next eligible cell by estimate (surviving if any survives, else dropped).
    pub runner_up: Option<usize>,
    /// `best / runner_up` and its interval.
    pub vs_runner_up: Option<Bound>,
    /// The other surviving eligible cells.
    pub not_separated: Vec<usize>,
}

/// The shared noise of one figure: variance of `ln(value)` and its degrees of freedom.
#[derive(Clone, Copy, Debug)]
struct Noise {
    var: f64,
    df: f64,
}

impl Noise {
    /// Pooled over the surviving cells, mixed with the prior; `None` without either.
    fn pooled(stats: &[LogStats], alive: &[bool], m: &RaceMethod) -> Option<Noise> {
        let s = m.sequential.sanitized();
        let prior_df = if m.prior_df.is_finite() {
            m.prior_df.max(0.0)
        } else {
            0.0
        };
        let prior_sd = if m.prior_sd.is_finite() && m.prior_sd >= 0.0 {
            m.prior_sd
        } else {
            s.noise_floor
        };
        let (mut ss, mut df) = (prior_df * prior_sd * prior_sd, prior_df);
        for (st, _) in stats.iter().zip(alive).filter(|(st, a)| **a && st.n >= 2) {
            ss += st.var * (st.n - 1) as f64;
            df += (st.n - 1) as f64;
        }
        let floor = s.noise_floor * s.noise_floor;
        (df > 0.0).then(|| Noise {
            var: (ss / df).max(floor),
            df,
        })
    }

    /// Interval of `mean(a) - mean(b)` at two-sided level `1 - alpha`: `[estimate, low, high]`.
    fn interval(&self, a: LogStats, b: LogStats, alpha: f64) -> [f64; 3] {
        // A cell whose own variance (from 3 values) exceeds the shared one uses its own.
        let var = |s: LogStats| {
            if s.n >= 3 {
                self.var.max(s.var)
            } else {
                self.var
            }
        };
        let se = (var(a) / a.n as f64 + var(b) / b.n as f64).sqrt();
        let half = student::quantile_upper(alpha / 2.0, self.df) * se;
        let d = a.mean - b.mean;
        [d, d - half, d + half]
    }
}

/// The two-sided level of one comparison at one look.
fn alpha_pair(m: &RaceMethod, cells: usize) -> f64 {
    let s = m.sequential.sanitized();
    s.alpha / (s.max_rounds * cells.saturating_sub(1).max(1)) as f64
}

fn bound([d, lo, hi]: [f64; 3]) -> Bound {
    Bound {
        ratio: d.exp(),
        low: lo.exp(),
        high: hi.exp(),
    }
}

/// Whether the whole interval of `a - b` lies on `a`'s worse side.
fn worse([_, lo, hi]: [f64; 3], better: Better) -> bool {
    match better {
        Better::Higher => hi < 0.0,
        Better::Lower => lo > 0.0,
    }
}

/// `mean` oriented so that larger is better.
fn score(s: LogStats, better: Better) -> f64 {
    match better {
        Better::Higher => s.mean,
        Better::Lower => -s.mean,
    }
}

/// Eligible surviving cells with values, best estimate first (ties: lower index first).
fn ranking(stats: &[LogStats], keep: impl Fn(usize) -> bool, better: Better) -> Vec<usize> {
    let mut order: Vec<usize> = (0..stats.len())
        .filter(|&i| keep(i) && stats[i].n > 0)
        .collect();
    order.sort_by(|&a, &b| {
        score(stats[b], better)
            .total_cmp(&score(stats[a], better))
            .then(a.cmp(&b))
    });
    order
}

/// The cells to drop after `round` in a `best` race, each with its evidence: every surviving
/// cell whose interval against the best surviving eligible cell lies wholly on the worse side.
/// Call it once after each round, at most `max_rounds` times (the error rate counts those
/// looks). Deterministic; never panics.
pub fn race_round(
    cells: &[RaceCell],
    better: Better,
    m: &RaceMethod,
    round: usize,
) -> Vec<Dropped> {
    let stats: Vec<LogStats> = cells.iter().map(|c| LogStats::of(c.values)).collect();
    let alive: Vec<bool> = cells.iter().map(|c| c.alive).collect();
    let (Some(noise), Some(&reference)) = (
        Noise::pooled(&stats, &alive, m),
        ranking(&stats, |i| alive[i] && cells[i].safe, better).first(),
    ) else {
        return Vec::new();
    };
    let alpha = alpha_pair(m, cells.len());
    (0..cells.len())
        .filter(|&i| alive[i] && i != reference && stats[i].n > 0)
        .filter_map(|i| {
            let iv = noise.interval(stats[i], stats[reference], alpha);
            worse(iv, better).then(|| Dropped {
                cell: i,
                round,
                against: reference,
                bounds: vec![bound(iv)],
                alpha,
            })
        })
        .collect()
}

/// Where a `best` race stands: the winner, or the best survivor by estimate and whom it is not
/// separated from, with its interval against the runner-up. Deterministic; never panics.
pub fn race_result(cells: &[RaceCell], better: Better, m: &RaceMethod) -> RaceResult {
    let stats: Vec<LogStats> = cells.iter().map(|c| LogStats::of(c.values)).collect();
    let alive: Vec<bool> = cells.iter().map(|c| c.alive).collect();
    let survivors = ranking(&stats, |i| alive[i] && cells[i].safe, better);
    let Some(&best) = survivors.first() else {
        return RaceResult {
            status: RaceStatus::NoEligible,
            best: None,
            runner_up: None,
            vs_runner_up: None,
            not_separated: Vec::new(),
        };
    };
    let others = ranking(&stats, |i| i != best && cells[i].safe, better);
    let runner_up = survivors.get(1).or(others.first()).copied();
    let alpha = alpha_pair(m, cells.len());
    let noise = Noise::pooled(&stats, &alive, m);
    let interval = |i: usize| noise.map(|n| n.interval(stats[best], stats[i], alpha));
    let t = m.sequential.sanitized().min_effect.ln_1p();
    let within = |i: usize| interval(i).is_some_and(|[_, lo, hi]| lo > -t && hi < t);
    let status = match survivors.len() {
        1 => RaceStatus::Won,
        _ if survivors[1..].iter().all(|&i| within(i)) => RaceStatus::Equivalent,
        _ => RaceStatus::Open,
    };
    RaceResult {
        status,
        best: Some(best),
        runner_up,
        vs_runner_up: runner_up.and_then(|r| interval(r).map(bound)),
        not_separated: survivors[1..].to_vec(),
    }
}

/// The cells to drop after `round` in a `pareto` race: every surviving cell that a surviving
/// eligible cell beats on both figures, each interval wholly on the better side (the evidence
/// names the first such cell by index). Once a round, as [`race_round`]. Deterministic; never
/// panics.
pub fn pareto_round(
    cells: &[ParetoCell],
    better: [Better; 2],
    m: &RaceMethod,
    round: usize,
) -> Vec<Dropped> {
    let alive: Vec<bool> = cells.iter().map(|c| c.alive).collect();
    let stats: [Vec<LogStats>; 2] =
        [0, 1].map(|f| cells.iter().map(|c| LogStats::of(c.values[f])).collect());
    let (Some(n0), Some(n1)) = (
        Noise::pooled(&stats[0], &alive, m),
        Noise::pooled(&stats[1], &alive, m),
    ) else {
        return Vec::new();
    };
    let alpha = alpha_pair(m, cells.len());
    let has = |i: usize| stats[0][i].n > 0 && stats[1][i].n > 0;
    let mut dropped = Vec::new();
    for i in (0..cells.len()).filter(|&i| alive[i] && has(i)) {
        let beaten = |j: usize| {
            let ivs = [
                n0.interval(stats[0][i], stats[0][j], alpha),
                n1.interval(stats[1][i], stats[1][j], alpha),
            ];
            (worse(ivs[0], better[0]) && worse(ivs[1], better[1])).then_some(ivs)
        };
        let by = (0..cells.len()).filter(|&j| j != i && alive[j] && cells[j].safe && has(j));
        if let Some((j, ivs)) = by.filter_map(|j| beaten(j).map(|ivs| (j, ivs))).next() {
            dropped.push(Dropped {
                cell: i,
                round,
                against: j,
                bounds: ivs.map(bound).to_vec(),
                alpha,
            });
        }
    }
    dropped
}

/// The surviving eligible cells of a `pareto` race (the front, as far as the rounds so far
/// can tell), in index order.
pub fn pareto_front(cells: &[ParetoCell]) -> Vec<usize> {
    (0..cells.len())
        .filter(|&i| cells[i].alive && cells[i].safe)
        .collect()
}

#[cfg(test)]
mod pareto_tests;
#[cfg(test)]
mod tests;
