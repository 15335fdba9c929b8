//! Which point a ramp runs next, from the points so far: climb by the step until a point is
//! bad (over the limit, or saturated), then bisect between the last good rate and the first
//! bad one. A function of the history only, so a ramp's decisions can be replayed from its
//! record.

use super::RampSpec;
use serde::{Deserialize, Serialize};

/// Bisection ends early when the bracket is narrower than this share of its upper end: the
/// points would differ by less than the noise between runs.
const BRACKET_RESOLUTION: f64 = 0.01;

/// Why a point was run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Raising the load by the step.
    Climb,
    /// Between the last good and the first bad rate.
    Bisect,
}

/// Why a ramp stopped climbing (and so what its headline means).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// A point's latency crossed the limit.
    Limit,
    /// A point's achieved rate fell below 95 % of the offered one.
    Saturated,
    /// `max_points` climbing points all met the limit: the headline is a lower bound.
    MaxPoints,
    /// Ctrl-C or SIGTERM: the finished points are kept.
    Interrupted,
    /// A point failed (an I/O error): the points before it are kept, none is a result.
    Failed,
}

impl Stop {
    /// How a user reads it.
    pub fn describe(self) -> &'static str {
        match self {
            Stop::Limit => "the latency limit was crossed",
            Stop::Saturated => "the stack saturated (achieved < 95% of offered)",
            Stop::MaxPoints => "max_points reached within the limit (the stack carries more)",
            Stop::Interrupted => "interrupted",
            Stop::Failed => "a point failed",
        }
    }
}

/// What the controller needs to know of a finished point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Offered rate.
    pub offered_ops_s: f64,
    /// Why it ran.
    pub phase: Phase,
    /// Its latency statistic exceeded the limit.
    pub over_limit: bool,
    /// It did not carry the offered rate.
    pub saturated: bool,
}

impl Outcome {
    /// Met the limit and carried the load.
    pub fn good(&self) -> bool {
        !self.over_limit && !self.saturated
    }
}

/// The controller's decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Run a point at this offered rate.
    Point {
        /// Operations per second over the whole workload.
        offered_ops_s: f64,
        /// Climbing or bisecting.
        phase: Phase,
    },
    /// The ramp is done, for this reason.
    Done(Stop),
}

/// The next point of `spec` after `done` (in the order they ran).
pub fn next_point(spec: &RampSpec, done: &[Outcome]) -> Next {
    let climbs: Vec<&Outcome> = done.iter().filter(|o| o.phase == Phase::Climb).collect();
    let Some(last) = climbs.last() else {
        return climb(spec.start_ops_s);
    };
    if last.good() {
        if climbs.len() >= spec.max_points as usize {
            return Next::Done(Stop::MaxPoints);
        }
        return climb(spec.step.after(last.offered_ops_s));
    }
    let stop = if last.saturated {
        Stop::Saturated
    } else {
        Stop::Limit
    };
    // The bracket: the last good climbing rate (0 if the first point was bad) and the first
    // bad one, narrowed by each bisection point in turn.
    let mut low = climbs
        .iter()
        .rev()
        .find(|o| o.good())
        .map_or(0.0, |o| o.offered_ops_s);
    let mut high = last.offered_ops_s;
    let bisects: Vec<&Outcome> = done.iter().filter(|o| o.phase == Phase::Bisect).collect();
    for b in &bisects {
        if b.good() {
            low = low.max(b.offered_ops_s);
        } else {
            high = high.min(b.offered_ops_s);
        }
    }
    if bisects.len() >= spec.bisect as usize || high - low < BRACKET_RESOLUTION * high {
        return Next::Done(stop);
    }
    Next::Point {
        offered_ops_s: (low + high) / 2.0,
        phase: Phase::Bisect,
    }
}

fn climb(rate: f64) -> Next {
    Next::Point {
        offered_ops_s: rate,
        phase: Phase::Climb,
    }
}

/// The index (into `done`) of the highest offered rate that met the limit, if any.
pub fn best(done: &[Outcome]) -> Option<usize> {
    (done.iter().enumerate())
        .filter(|(_, o)| o.good())
        .max_by(|(_, a), (_, b)| a.offered_ops_s.total_cmp(&b.offered_ops_s))
        .map(|(i, _)| i)
}
