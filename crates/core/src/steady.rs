//! Steady state, decided while a run goes: the warm-up (`ramp_time=auto`) lasts until the
//! run's per-second throughput, and for a database its per-transaction costs, have been steady
//! over a sliding window, or until a cap (`ramp_max`); `ss=` stops the measured window once its
//! own throughput is steady (fio's stop rule).
//!
//! The criteria are fio's (`steadystate.c`), on one-second samples over the last
//! [`WINDOW_S`] seconds: the *spread* is the largest distance of a sample from the window's
//! mean, in percent of the mean; the *slope* is the least-squares slope of the samples, in
//! percent of the mean per second. Per-transaction costs (WAL bytes, full-page images) are
//! judged on their slope only: a second holds too few full-page images for a spread limit to
//! mean anything, while a warm-up's decay (the burst after a checkpoint fading) is a slope.

use std::collections::VecDeque;

pub(crate) mod rules;
pub use crate::record::{Check, SteadyRecord, StopRecord, WarmupKind};
pub use rules::{
    expected_warmup, AutoRamp, StopMetric, StopRule, CLIENTS_RAMP, DEFAULT_RAMP_MAX, MIN_WINDOW,
    WINDOW_S,
};

/// Largest spread of throughput the warm-up accepts, percent of the window's mean.
pub const THROUGHPUT_SPREAD_PCT: f64 = 20.0;
/// Largest slope of throughput the warm-up accepts, percent of the mean per second.
pub const THROUGHPUT_SLOPE_PCT: f64 = 3.0;
/// Largest slope of a per-transaction cost the warm-up accepts, percent of the mean per second.
pub const COST_SLOPE_PCT: f64 = 3.0;
/// A per-transaction cost whose window mean is below this is steady whatever its slope (fewer
/// than one full-page image per 50 transactions moves no figure; its per-second relative noise
/// would hold the warm-up to the cap).
pub const COST_FLOOR: f64 = 0.02;
/// A time series' sample shorter than this share of a second is dropped (the stub the run's
/// end leaves after the last whole second).
pub const MIN_SAMPLE_SHARE: f64 = 0.5;

/// How a series' samples are formed from the counters read each second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// Per second of the sample (a rate).
    Second,
    /// Per operation (transaction) completed in the sample (a cost).
    Op,
}

/// One series a steadiness check watches.
#[derive(Clone, Copy, Debug)]
pub struct SeriesSpec {
    /// Its name in the record (`ops_s`, `wal_bytes_per_txn`).
    pub name: &'static str,
    /// A rate or a per-operation cost.
    pub per: Per,
    /// Largest spread, percent of the mean; `None`: not judged on spread.
    pub spread_pct: Option<f64>,
    /// Largest slope, percent of the mean per second; `None`: not judged on slope.
    pub slope_pct: Option<f64>,
    /// A mean at or below this is steady whatever the spread and slope.
    pub floor: f64,
}

impl SeriesSpec {
    /// Throughput as the automatic warm-up judges it.
    pub const THROUGHPUT: SeriesSpec = SeriesSpec {
        name: "ops_s",
        per: Per::Second,
        spread_pct: Some(THROUGHPUT_SPREAD_PCT),
        slope_pct: Some(THROUGHPUT_SLOPE_PCT),
        floor: 0.0,
    };

    /// A per-transaction cost as the automatic warm-up judges it.
    pub const fn cost(name: &'static str) -> SeriesSpec {
        SeriesSpec {
            name,
            per: Per::Op,
            spread_pct: None,
            slope_pct: Some(COST_SLOPE_PCT),
            floor: COST_FLOOR,
        }
    }

    /// The series a stop rule watches.
    pub fn of_stop(rule: &StopRule) -> SeriesSpec {
        let name = match rule.metric {
            StopMetric::Iops => "ops_s",
            StopMetric::Bw => "bytes_s",
        };
        SeriesSpec {
            name,
            per: Per::Second,
            spread_pct: (!rule.slope).then_some(rule.limit_pct),
            slope_pct: rule.slope.then_some(rule.limit_pct),
            floor: 0.0,
        }
    }
}

/// Spread and slope of `ys` (one sample a second), fio's definitions, in percent of the mean;
/// `None` for fewer than two samples or a mean of zero.
pub fn spread_and_slope(ys: &[f64]) -> Option<(f64, f64, f64)> {
    let n = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / n;
    if ys.len() < 2 || mean == 0.0 || !mean.is_finite() {
        return None;
    }
    let spread = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
    let x_mean = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    Some((mean, 100.0 * spread / mean, 100.0 * (sxy / sxx) / mean))
}

/// Judges series of one-second samples over a sliding window.
#[derive(Clone, Debug)]
pub struct Steadiness {
    window: usize,
    specs: Vec<SeriesSpec>,
    samples: Vec<VecDeque<f64>>,
}

impl Steadiness {
    /// A check of `specs` over the last `window` samples.
    pub fn new(window: usize, specs: Vec<SeriesSpec>) -> Steadiness {
        let samples = specs.iter().map(|_| VecDeque::new()).collect();
        Steadiness {
            window: window.max(2),
            specs,
            samples,
        }
    }

    /// Adds one sample: over `secs` seconds, `ops` operations were done and `deltas[i]` of
    /// series `i`'s counter (its ops or bytes for a rate, its cost's counter for a cost). A
    /// sample with no operations leaves a cost series as it was.
    pub fn push(&mut self, secs: f64, ops: u64, deltas: &[f64]) {
        for ((spec, q), d) in self.specs.iter().zip(&mut self.samples).zip(deltas) {
            let v = match spec.per {
                Per::Second if secs > 0.0 => d / secs,
                Per::Op if ops > 0 => d / ops as f64,
                _ => continue,
            };
            q.push_back(v);
            if q.len() > self.window {
                q.pop_front();
            }
        }
    }

    /// Series it watches.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// It watches no series.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Every series' state, once each has a full window.
    pub fn checks(&self) -> Option<Vec<Check>> {
        self.specs
            .iter()
            .zip(&self.samples)
            .map(|(spec, q)| {
                if q.len() < self.window {
                    return None;
                }
                let ys: Vec<f64> = q.iter().copied().collect();
                let (mean, spread, slope) = spread_and_slope(&ys).unwrap_or((0.0, 0.0, 0.0));
                let within = |v: f64, limit: Option<f64>| limit.is_none_or(|l| v.abs() <= l);
                let steady = mean <= spec.floor
                    || (within(spread, spec.spread_pct) && within(slope, spec.slope_pct));
                Some(Check {
                    name: spec.name.to_string(),
                    mean,
                    spread_pct: spread,
                    slope_pct: slope,
                    steady,
                })
            })
            .collect()
    }

    /// The checks, if every series is steady.
    pub fn steady(&self) -> Option<Vec<Check>> {
        self.checks().filter(|c| c.iter().all(|c| c.steady))
    }
}

#[cfg(test)]
mod tests;
