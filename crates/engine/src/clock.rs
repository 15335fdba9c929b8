//! The run's clock: the CPU's time-stamp counter read directly (`quanta`), calibrated against
//! `CLOCK_MONOTONIC` when the process first asks, so every operation is timed at a few
//! nanoseconds per reading; where the TSC is not invariant, `quanta` reads `CLOCK_MONOTONIC`.

/// Nanoseconds since the start of a run.
#[derive(Clone, Debug)]
pub struct RunClock {
    clock: quanta::Clock,
    epoch: u64,
}

impl RunClock {
    /// A clock whose zero is now.
    pub fn start() -> RunClock {
        let clock = quanta::Clock::new();
        let epoch = clock.raw();
        RunClock { clock, epoch }
    }

    /// Nanoseconds since the start.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.epoch, self.clock.raw())
    }

    /// Time since the start.
    pub fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.now_ns())
    }
}

/// The measured cost of one reading of the run's clock, in nanoseconds.
pub fn read_cost_ns() -> f64 {
    const CALLS: u32 = 100_000;
    let clock = RunClock::start();
    let start = clock.now_ns();
    let mut last = start;
    for _ in 0..CALLS {
        last = std::hint::black_box(clock.now_ns());
    }
    last.saturating_sub(start) as f64 / f64::from(CALLS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_monotonic_clock() {
        let clock = RunClock::start();
        let wall = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (ours, theirs) = (clock.now_ns() as f64, wall.elapsed().as_nanos() as f64);
        assert!((ours / theirs - 1.0).abs() < 0.01, "{ours} vs {theirs} ns");
        let cost = read_cost_ns();
        assert!(cost > 0.0 && cost < 1000.0, "{cost} ns per reading");
    }
}
