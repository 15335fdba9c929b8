//! The load ramp (`--ramp`, a study's `ramp` key): open-loop load points at rising offered
//! rates until a latency limit is crossed or the stack saturates, then a bisection for the
//! highest rate that meets the limit. This module parses and validates the spec; [`control`]
//! decides the next point from the points so far; [`point`] holds the points as the record
//! keeps them and the plan of each; `measure` reads a point from its window's run record. All
//! of it is pure. See `docs/ramp.md`.

pub mod control;
mod measure;
pub mod point;

#[cfg(test)]
mod tests;

use crate::settings::{echo, SettingError, Settings};
use crate::units::{format_nanos, parse_duration};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

pub use control::{next_point, Next, Phase, Stop};
pub use point::{paced_plan, RampHeadline, RampPoint, RampRecord};

/// Below this share of the offered rate a point is saturated: the stack did not carry it.
pub const SATURATED_BELOW: f64 = 0.95;

/// How the offered rate rises from one climbing point to the next.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum RampStep {
    /// Multiply by this factor (`x1.4`), more than 1.
    Factor(f64),
    /// Add this many operations per second (`+500`), more than 0.
    Add(f64),
}

impl RampStep {
    /// The rate after `rate`.
    pub fn after(self, rate: f64) -> f64 {
        match self {
            RampStep::Factor(f) => rate * f,
            RampStep::Add(d) => rate + d,
        }
    }
}

/// The latency statistic a limit applies to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "p")]
pub enum Stat {
    /// Mean response time over every operation.
    Mean,
    /// A percentile (one the histograms report: 50, 90, 99, 99.9, 99.99).
    Percentile(f64),
}

/// The percentiles a limit may name: those every run records.
pub const LIMIT_PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stat::Mean => write!(f, "mean"),
            Stat::Percentile(p) => write!(f, "p{p}"),
        }
    }
}

/// The latency limit: a point meets it when `stat` is at most `max_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// Which statistic.
    pub stat: Stat,
    /// Its largest acceptable value.
    pub max_ns: u64,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} <= {}", self.stat, format_nanos(self.max_ns as f64))
    }
}

/// A validated ramp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RampSpec {
    /// Offered rate of the first point, operations per second over the whole workload.
    pub start_ops_s: f64,
    /// How the rate rises between climbing points.
    pub step: RampStep,
    /// The latency limit.
    pub limit: Limit,
    /// Measured length of each point.
    #[serde(with = "crate::units::duration_ns", rename = "point_ns")]
    pub point: Duration,
    /// Most climbing points (bisection points come on top).
    pub max_points: u32,
    /// Bisection points between the last good and the first bad rate.
    pub bisect: u32,
}

/// Defaults of the parts a spec may leave out (`until` has none).
pub const DEFAULT_START: f64 = 100.0;
/// Default step: seed 004 raised the load by about 40 % a point.
pub const DEFAULT_STEP: RampStep = RampStep::Factor(1.4);
/// Default measured length of a point.
pub const DEFAULT_POINT: Duration = Duration::from_secs(30);
/// Default most climbing points.
pub const DEFAULT_MAX_POINTS: u32 = 20;
/// Default bisection points.
pub const DEFAULT_BISECT: u32 = 3;

/// Bounds that keep a ramp finite and meaningful.
const MAX_POINTS_ALLOWED: u32 = 1000;
const MAX_BISECT: u32 = 20;
const MIN_POINT: Duration = Duration::from_secs(1);
const MAX_RATE: f64 = 1e9;

/// The parts a spec may have, for messages.
const PARTS: &str = "start, step, until, point, max_points, bisect";
/// What a whole spec looks like, for messages.
const EXAMPLE: &str = "e.g. start=500,step=x1.4,until=mean>15ms,point=30s,max_points=20";

impl fmt::Display for RampSpec {
    /// The canonical spec: every part, so that it parses back to the same ramp.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = match self.step {
            RampStep::Factor(x) => format!("x{x}"),
            RampStep::Add(d) => format!("+{d}"),
        };
        let max = match self.limit.stat {
            Stat::Mean => "mean".to_string(),
            Stat::Percentile(p) => format!("p{p}"),
        };
        write!(
            f,
            "start={},step={step},until={max}>{}us,point={}s,max_points={},bisect={}",
            self.start_ops_s,
            self.limit.max_ns as f64 / 1e3,
            self.point.as_secs_f64(),
            self.max_points,
            self.bisect
        )
    }
}

impl RampSpec {
    /// Parses `start=R,step=xF|+D,until=STAT>DURATION,point=DURATION,max_points=N,bisect=N`.
    /// `until` is required; the other parts have defaults. Each error names the part that is
    /// wrong and what it may be.
    pub fn parse(text: &str) -> Result<RampSpec, String> {
        let mut spec = RampSpec {
            start_ops_s: DEFAULT_START,
            step: DEFAULT_STEP,
            limit: Limit {
                stat: Stat::Mean,
                max_ns: 0,
            },
            point: DEFAULT_POINT,
            max_points: DEFAULT_MAX_POINTS,
            bisect: DEFAULT_BISECT,
        };
        let mut seen: Vec<&str> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("'{}' is not KEY=VALUE ({EXAMPLE})", echo(part)))?;
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return Err(format!("{key} is given twice"));
            }
            let wrong = |m: String| format!("{key}={}: {m}", echo(value));
            match key {
                "start" => spec.start_ops_s = rate(value).map_err(wrong)?,
                "step" => spec.step = step(value).map_err(wrong)?,
                "until" => spec.limit = limit(value).map_err(wrong)?,
                "point" => spec.point = point(value).map_err(wrong)?,
                "max_points" => {
                    spec.max_points = count(value, 1, MAX_POINTS_ALLOWED).map_err(wrong)?
                }
                "bisect" => spec.bisect = count(value, 0, MAX_BISECT).map_err(wrong)?,
                _ => return Err(format!("unknown part '{}' (parts: {PARTS})", echo(key))),
            }
            seen.push(key);
        }
        if !seen.contains(&"until") {
            return Err(format!(
                "give the latency limit: until=mean>15ms or until=p99>5ms ({EXAMPLE})"
            ));
        }
        Ok(spec)
    }

    /// The longest the ramp can take: every climbing and bisection point.
    pub fn longest(&self) -> Duration {
        self.point * (self.max_points + self.bisect)
    }
}

/// Takes a study workload's `ramp` key out of `settings` (the workload itself does not know
/// it) and parses it; errors point where it was written.
pub fn take_from(settings: &mut Settings) -> Result<Option<RampSpec>, SettingError> {
    let Some(setting) = settings.remove(RAMP_KEY) else {
        return Ok(None);
    };
    RampSpec::parse(&setting.value)
        .map(Some)
        .map_err(|m| SettingError::new(setting.origin, RAMP_KEY, m))
}

/// The key of a ramp in a study file (a workload's, or the study's for every workload).
pub const RAMP_KEY: &str = "ramp";

/// An offered rate: operations per second, `1500` or `1.5k`.
fn rate(text: &str) -> Result<f64, String> {
    let (num, mult) = match text.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1e3),
        None => (text, 1.0),
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * mult)
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= MAX_RATE)
        .ok_or_else(|| {
            "an offered rate is operations per second above 0 and at most 1e9 (e.g. 500 or 1.5k)"
                .to_string()
        })
}

/// `x1.4` (or `*1.4`): multiply; `+500`: add.
fn step(text: &str) -> Result<RampStep, String> {
    let usage = "expected xFACTOR (x1.4: multiply each point's rate) or +OPS (+500: add)";
    if let Some(f) = text.strip_prefix(['x', 'X', '*']) {
        let f: f64 = f.trim().parse().map_err(|_| usage.to_string())?;
        if !(f.is_finite() && f > 1.0 && f <= 100.0) {
            return Err(format!(
                "the factor must be above 1 and at most 100 ({usage})"
            ));
        }
        return Ok(RampStep::Factor(f));
    }
    if let Some(d) = text.strip_prefix('+') {
        return Ok(RampStep::Add(rate(d).map_err(|m| format!("{m}; {usage}"))?));
    }
    Err(usage.into())
}

/// `mean>15ms`, `p99>5ms`, `p99.9>50ms`.
fn limit(text: &str) -> Result<Limit, String> {
    let usage = "expected STAT>DURATION with STAT one of mean, p50, p90, p99, p99.9, p99.99 \
                 (e.g. mean>15ms)";
    let (stat, max) = text.split_once('>').ok_or(usage)?;
    let stat = match stat.trim() {
        "mean" => Stat::Mean,
        s => {
            let p = s
                .strip_prefix('p')
                .and_then(|p| p.parse::<f64>().ok())
                .filter(|p| LIMIT_PERCENTILES.contains(p))
                .ok_or_else(|| format!("'{}' is not a statistic: {usage}", echo(s)))?;
            Stat::Percentile(p)
        }
    };
    let max = parse_duration(max.trim())
        .map_err(|m| format!("{m}: {usage}"))?
        .as_nanos();
    if max == 0 {
        return Err(format!("the limit must be above 0: {usage}"));
    }
    Ok(Limit {
        stat,
        max_ns: u64::try_from(max).unwrap_or(u64::MAX),
    })
}

/// A point's measured length: at least a second (the probes sample once a second).
fn point(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < MIN_POINT {
        return Err("a point lasts at least 1s (the probes sample once a second)".into());
    }
    Ok(d)
}

/// A whole number in `min..=max`.
fn count(text: &str, min: u32, max: u32) -> Result<u32, String> {
    text.parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("expected a whole number from {min} to {max}"))
}
