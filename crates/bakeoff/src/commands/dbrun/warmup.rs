//! The automatic warm-up (`ramp_time=auto`) of a benchmark program that times itself
//! (pgbench, sysbench): it runs unmeasured while bakeoff reads the server's counters once a
//! second (commits and the costs [`ManagedDb::warmup_costs`] names: WAL bytes and full-page
//! images, or redo bytes and doublewrite pages); once throughput and every cost per
//! transaction are steady (the criteria of `bakeoff_core::steady`), or at `ramp_max`, the
//! warm-up run is stopped and the measured one starts. The program's own progress lines are
//! not needed: the server counts what every client committed.
//!
//! [`ManagedDb::warmup_costs`]: bakeoff_db::managed::ManagedDb::warmup_costs

use bakeoff_core::steady::{AutoRamp, SeriesSpec, Steadiness, SteadyRecord, WarmupKind, WINDOW_S};
use bakeoff_engine::warmup::{CostReading, Costs};
use bakeoff_engine::RunError;
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A warm-up run of `program`: how to run it until a flag is set, and how many of its
/// connections the server still has.
pub struct WarmupRun<F, C> {
    /// The program's name, for errors.
    pub program: &'static str,
    /// Runs it (for at least the cap) until the flag is set.
    pub run: F,
    /// Its connections the server still has (0 if it cannot say).
    pub connections: C,
}

/// Runs the warm-up until the server's `costs` are steady or `auto.max`; what the record
/// says of it.
pub fn warm_up<T, E, F, C>(
    mut warmup: WarmupRun<F, C>,
    mut costs: Costs<'_>,
    auto: AutoRamp,
    interrupt: &AtomicBool,
) -> Result<SteadyRecord, RunError>
where
    T: Send,
    E: Display + Send,
    F: FnOnce(&AtomicBool) -> Result<T, E> + Send,
    C: FnMut() -> i64,
{
    let program = warmup.program;
    let error = |message: String| RunError::Database {
        what: format!("{program} warm-up"),
        message,
    };
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let run = warmup.run;
    let (record, ran) = std::thread::scope(|s| {
        let handle = s.spawn(|| run(&stop));
        let mut judge = Judge::new(auto, start, &costs.names);
        let mut prev = (costs.read)();
        let mut next = Duration::from_secs(1);
        while !handle.is_finished() {
            if interrupt.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
            if start.elapsed() >= next && !stop.load(Ordering::Relaxed) {
                next += Duration::from_secs(1);
                let now = (costs.read)();
                if judge.second(prev.as_ref(), now.as_ref()) {
                    stop.store(true, Ordering::Relaxed);
                }
                prev = now;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (judge.finish(), handle.join())
    });
    // The stopped program's connections end as the server sees it gone: wait (briefly) so
    // that the measured run's "every client connected" counts its own.
    let deadline = Instant::now() + Duration::from_secs(5);
    while (warmup.connections)() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    match ran {
        Ok(Err(e)) => Err(error(e.to_string())),
        Err(_) => Err(error(format!("the {program} thread panicked"))),
        Ok(Ok(_)) => Ok(record),
    }
}

/// The per-second decision.
struct Judge {
    auto: AutoRamp,
    start: Instant,
    steadiness: Steadiness,
    at: Instant,
    decided: Option<SteadyRecord>,
}

impl Judge {
    fn new(auto: AutoRamp, start: Instant, costs: &[&'static str]) -> Judge {
        let specs = std::iter::once(SeriesSpec::THROUGHPUT)
            .chain(costs.iter().map(|name| SeriesSpec::cost(name)))
            .collect();
        Judge {
            auto,
            start,
            steadiness: Steadiness::new(WINDOW_S, specs),
            at: start,
            decided: None,
        }
    }

    /// One second's readings; true once decided (steady or the cap).
    fn second(&mut self, prev: Option<&CostReading>, now: Option<&CostReading>) -> bool {
        let secs = self.at.elapsed().as_secs_f64();
        self.at = Instant::now();
        if let (Some((ops_then, then)), Some((ops_now, now))) = (prev, now) {
            let ops = ops_now.saturating_sub(*ops_then);
            let deltas: Vec<f64> = std::iter::once(ops as f64)
                .chain(now.iter().zip(then).map(|(n, t)| (n - t).max(0.0)))
                .collect();
            self.steadiness.push(secs, ops, &deltas);
        }
        let steady = self.steadiness.steady();
        let capped = steady.is_none() && self.start.elapsed() >= self.auto.max;
        if steady.is_some() || capped {
            self.decided = Some(self.record(steady, capped));
        }
        self.decided.is_some()
    }

    fn record(
        &self,
        steady: Option<Vec<bakeoff_core::steady::Check>>,
        capped: bool,
    ) -> SteadyRecord {
        SteadyRecord {
            warmup: WarmupKind::Auto,
            warmup_s: self.start.elapsed().as_secs_f64(),
            capped,
            checks: steady.unwrap_or_else(|| self.steadiness.checks().unwrap_or_default()),
            stop: None,
        }
    }

    /// The decision, or (the program ended or was interrupted first) the state when it ended.
    fn finish(self) -> SteadyRecord {
        match self.decided {
            Some(r) => r,
            None => self.record(None, false),
        }
    }
}
