//! An open loop's arrivals: one schedule per role, shared by the role's threads.
//!
//! Arrival `k` of a role paced at `R` operations per second is due at `start + k / R`. Any of
//! the role's threads that is free takes the oldest arrival not yet taken, so the threads
//! together serve one queue, as a server's threads serve its clients' requests. A schedule
//! per thread (arrival `k` of thread `t` due at `start + k * threads / R`) would instead make
//! `threads` separate queues: an arrival would wait behind a slow operation on its own
//! thread while the others sit idle, and near capacity those private queues grow long
//! (at 85 % load, a p99 several times the service time) where the device's one queue would
//! not. That waiting is the generator's, not the stack's. A thread sleeps until its arrival is
//! due on the run's clock (`Shared::sleep_until`).

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// Not started yet: the first thread to ask starts the schedule.
const UNSET: u64 = u64::MAX;

/// The timer slack of a paced thread: how late the kernel may wake it after a sleep. The
/// default (50 µs) would add up to 50 µs to every paced operation's latency.
const TIMER_SLACK_NS: u64 = 1_000;

/// The arrivals of one role under `rate_iops`.
#[derive(Debug)]
pub struct Schedule {
    /// Picoseconds between two arrivals of the role (nanoseconds would round 3 µs gaps by
    /// up to 17 %).
    period_ps: u64,
    /// The run-clock time of arrival 0, set by the first thread that asks.
    start_ns: AtomicU64,
    /// The next arrival no thread has taken.
    next: AtomicU64,
}

impl Schedule {
    /// The schedule of `threads` threads each paced at `rate_per_thread` operations per second.
    pub fn new(rate_per_thread: f64, threads: u32) -> Schedule {
        let rate = rate_per_thread * f64::from(threads.max(1));
        Schedule {
            period_ps: (1e12 / rate).clamp(1.0, u64::MAX as f64) as u64,
            start_ns: AtomicU64::new(UNSET),
            next: AtomicU64::new(0),
        }
    }

    /// When arrival `k` is due.
    fn due(&self, start_ns: u64, k: u64) -> u64 {
        let offset_ps = u128::from(k) * u128::from(self.period_ps);
        start_ns.saturating_add(u64::try_from(offset_ps / 1000).unwrap_or(u64::MAX))
    }

    /// The start, setting it to `now` if no thread has asked before.
    fn start(&self, now: u64) -> u64 {
        match (self.start_ns).compare_exchange(UNSET, now, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => now,
            Err(start) => start,
        }
    }

    /// Takes the oldest arrival not yet taken, due or not: its scheduled time.
    pub fn take(&self, now: u64) -> u64 {
        let start = self.start(now);
        self.due(start, self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Takes the oldest arrival not yet taken if it is due by `now` (a thread with other
    /// operations in flight does not wait for the next one).
    pub fn take_due(&self, now: u64) -> Option<u64> {
        let start = self.start(now);
        let mut k = self.next.load(Ordering::Relaxed);
        loop {
            let due = self.due(start, k);
            if due > now {
                return None;
            }
            match (self.next).compare_exchange_weak(k, k + 1, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(due),
                Err(taken) => k = taken,
            }
        }
    }
}

/// Makes the calling thread's sleeps end close to their deadline (see [`TIMER_SLACK_NS`]).
/// A paced thread calls it once; if the kernel refuses, sleeps are merely less punctual.
pub fn tighten_timer_slack() {
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(TIMER_SLACK_NS));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_are_evenly_spaced_over_all_threads() {
        // 16 threads at 1,000/s each: one arrival every 62.5 µs.
        let s = Schedule::new(1000.0, 16);
        let times: Vec<u64> = (0..5).map(|_| s.take(1_000)).collect();
        assert_eq!(times, [1_000, 63_500, 126_000, 188_500, 251_000]);
    }

    #[test]
    fn take_due_takes_only_what_is_due() {
        let s = Schedule::new(1000.0, 1);
        assert_eq!(s.take_due(5_000), Some(5_000));
        assert_eq!(s.take_due(5_000 + 999_999), None);
        // Late: every arrival due by now is taken in order, then none.
        assert_eq!(s.take_due(3_100_000), Some(1_005_000));
        assert_eq!(s.take_due(3_100_000), Some(2_005_000));
        assert_eq!(s.take_due(3_100_000), Some(3_005_000));
        assert_eq!(s.take_due(3_100_000), None);
        // An idle thread takes the next one ahead of time and sleeps until it.
        assert_eq!(s.take(3_100_000), 4_005_000);
    }

    #[test]
    fn threads_share_the_arrivals_without_losing_or_repeating_one() {
        let s = std::sync::Arc::new(Schedule::new(1e6, 4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || (0..10_000).map(|_| s.take(0)).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 40_000);
        // 4 M arrivals/s: 250 ns apart, the last at 39,999 x 250 ns.
        assert_eq!(all[39_999], 39_999 * 250);
    }
}
