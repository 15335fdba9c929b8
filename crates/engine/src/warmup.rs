//! The warm-up and stop decisions the harness takes once a second: an automatic warm-up
//! (`ramp_time=auto`) ends when the run's throughput, and the costs per operation a database
//! hands in, are steady over a sliding window (or at the cap); a stop rule (`ss=`) ends the
//! measured window once its throughput is steady. Both read the counters the harness already
//! reads each second: nothing on the workers' path changes.

use crate::stats::Totals;
use bakeoff_core::steady::{
    AutoRamp, Check, SeriesSpec, Steadiness, SteadyRecord, StopMetric, StopRecord, StopRule,
    WarmupKind, WINDOW_S,
};
use std::time::Duration;

/// Cumulative counters of costs per operation (a database's WAL bytes and full-page images)
/// the automatic warm-up also watches: their names, and a reader called once a second (`None`
/// when a reading failed: that second is skipped).
pub struct Costs<'a> {
    /// Series names in the record (`wal_bytes_per_txn`).
    pub names: Vec<&'static str>,
    /// Reads the operations the costs are per (a database's own count of commits, published
    /// with its cost counters, so both cover the same transactions) and every counter, in the
    /// order of `names`.
    pub read: Box<dyn FnMut() -> Option<CostReading> + Send + 'a>,
}

/// One reading of [`Costs`]: operations so far and each cost counter so far.
pub type CostReading = (u64, Vec<f64>);

/// The ramp and the measured time of a run.
pub struct Timing<'a> {
    /// A fixed warm-up before measuring (zero with `auto`).
    pub ramp: Duration,
    /// Measured time.
    pub runtime: Duration,
    /// Warm up until steady, or the cap.
    pub auto: Option<AutoRamp>,
    /// End the window once steady.
    pub stop: Option<StopRule>,
    /// Costs the automatic warm-up watches beside throughput.
    pub costs: Option<Costs<'a>>,
}

impl Timing<'_> {
    /// A fixed warm-up of `ramp`, then `runtime` measured.
    pub fn fixed(ramp: Duration, runtime: Duration) -> Timing<'static> {
        Timing {
            ramp,
            runtime,
            auto: None,
            stop: None,
            costs: None,
        }
    }
}

fn all_ops(t: &Totals) -> u64 {
    t.ops.iter().sum()
}

fn all_bytes(t: &Totals) -> u64 {
    t.bytes.iter().sum()
}

/// What the harness asks each second.
pub(crate) enum Decision {
    /// Keep going.
    Wait,
    /// Start measuring now.
    Measure,
    /// End the measured window now.
    Stop,
}

/// The per-second state of the decisions.
pub(crate) struct Warmup<'a> {
    auto: Option<(AutoRamp, Steadiness)>,
    costs: Option<Costs<'a>>,
    stop: Option<(StopRule, Steadiness)>,
    /// The last second's time, totals and cost counters.
    prev: Option<(Duration, Totals, CostReading)>,
    go: Duration,
    record: Option<SteadyRecord>,
    last_checks: Vec<Check>,
}

impl<'a> Warmup<'a> {
    /// The decisions of `timing`, the schedule having started at `go`.
    pub fn new(timing: &mut Timing<'a>, go: Duration) -> Warmup<'a> {
        let costs = timing.costs.take();
        let auto = timing.auto.map(|a| {
            let mut specs = vec![SeriesSpec::THROUGHPUT];
            let names = costs.as_ref().map_or(&[][..], |c| &c.names[..]);
            specs.extend(names.iter().map(|n| SeriesSpec::cost(n)));
            (a, Steadiness::new(WINDOW_S, specs))
        });
        let stop = timing.stop.map(|r| {
            let window = (r.dur_s as usize).max(2);
            (r, Steadiness::new(window, vec![SeriesSpec::of_stop(&r)]))
        });
        let record = timing.auto.is_none().then(|| SteadyRecord {
            warmup: WarmupKind::Fixed,
            warmup_s: timing.ramp.as_secs_f64(),
            capped: false,
            checks: Vec::new(),
            stop: None,
        });
        let mut costs = costs;
        let first = match (&mut costs, auto.is_some()) {
            (Some(c), true) => (c.read)().unwrap_or_default(),
            _ => (0, Vec::new()),
        };
        Warmup {
            auto,
            costs,
            stop,
            prev: Some((go, Totals::default(), first)),
            go,
            record,
            last_checks: Vec::new(),
        }
    }

    /// The automatic warm-up is still deciding.
    pub fn deciding(&self) -> bool {
        self.auto.is_some() && self.record.is_none()
    }

    /// One second passed (at `elapsed`, with `totals` done so far); `measuring`: the window
    /// started.
    pub fn second(&mut self, elapsed: Duration, totals: &Totals, measuring: bool) -> Decision {
        let deciding = self.deciding();
        let read = match (&mut self.costs, deciding) {
            (Some(c), true) => (c.read)(),
            _ => Some((0, Vec::new())),
        };
        let prev = self
            .prev
            .replace((elapsed, *totals, read.clone().unwrap_or_default()));
        let Some((t0, before, costs0)) = prev else {
            return Decision::Wait;
        };
        let secs = elapsed.saturating_sub(t0).as_secs_f64();
        let d = totals.since(&before);
        if deciding {
            return self.decide_warmup(elapsed, secs, &d, read.map(|r| (r, costs0)));
        }
        match (&mut self.stop, measuring) {
            (Some((rule, s)), true) => {
                let v = match rule.metric {
                    StopMetric::Iops => all_ops(&d),
                    StopMetric::Bw => all_bytes(&d),
                };
                s.push(secs, all_ops(&d), &[v as f64]);
                if let Some(mut checks) = s.steady() {
                    let rule = *rule;
                    if let Some(r) = self.record.as_mut() {
                        r.stop = Some(StopRecord {
                            rule,
                            attained: checks.pop(),
                        });
                    }
                    self.stop = None;
                    return Decision::Stop;
                }
                Decision::Wait
            }
            _ => Decision::Wait,
        }
    }

    fn decide_warmup(
        &mut self,
        elapsed: Duration,
        secs: f64,
        d: &Totals,
        costs: Option<(CostReading, CostReading)>,
    ) -> Decision {
        let Some((auto, s)) = &mut self.auto else {
            return Decision::Wait;
        };
        let ops = all_ops(d);
        if let Some(((n1, now), (n0, before))) = costs {
            let mut deltas = vec![ops as f64];
            deltas.extend(now.iter().zip(&before).map(|(a, b)| (a - b).max(0.0)));
            // A second whose cost counters could not be read (or were not read the second
            // before) is not a sample.
            if deltas.len() == s.len() {
                s.push(secs, n1.saturating_sub(n0), &deltas);
            }
        }
        if let Some(c) = s.checks() {
            self.last_checks = c;
        }
        let warmed = elapsed.saturating_sub(self.go);
        let steady = s.steady();
        let capped = steady.is_none() && warmed >= auto.max;
        if steady.is_none() && !capped {
            return Decision::Wait;
        }
        self.record = Some(SteadyRecord {
            warmup: WarmupKind::Auto,
            warmup_s: warmed.as_secs_f64(),
            capped,
            checks: steady.unwrap_or_else(|| self.last_checks.clone()),
            stop: None,
        });
        Decision::Measure
    }

    /// What the record says, with the stop rule's outcome; `opened`: when the window opened
    /// (or the run ended, if it never did). An automatic warm-up cut short (Ctrl-C) is
    /// recorded with the time it ran and the last state seen.
    pub fn finish(mut self, opened: Duration) -> Option<SteadyRecord> {
        let warmed = opened.saturating_sub(self.go).as_secs_f64();
        let mut record = self.record.take().unwrap_or_else(|| SteadyRecord {
            warmup: WarmupKind::Auto,
            warmup_s: warmed,
            capped: false,
            checks: std::mem::take(&mut self.last_checks),
            stop: None,
        });
        if record.warmup == WarmupKind::Fixed {
            record.warmup_s = warmed;
        }
        if let Some((rule, _)) = self.stop {
            record.stop = Some(StopRecord {
                rule,
                attained: None,
            });
        }
        Some(record)
    }
}
