//! Waiting for other threads' calls: each replay thread publishes how many of its calls are
//! done, and a call that depends on another thread's waits until that count is reached. A
//! waiter spins briefly, then sleeps on the counter (a futex); the publisher wakes sleepers
//! only when one says it sleeps, so a call that nobody waits for costs no system call. This is
//! a wait on data, not a lock.

use crate::shared::Shared;
use rustix::thread::futex;
use std::sync::atomic::{AtomicU32, Ordering};

/// Spins before sleeping: a dependency is usually a call that is about to finish.
const SPINS: u32 = 64;

/// FUTEX_WAKE's count for every waiter. The kernel takes the count as an `int`: `u32::MAX`
/// is -1 there, and wakes one waiter only (the others then slept until their slice ended: a
/// MariaDB trace whose eight threads wait on each other's syncs replayed 17 times slower).
const WAKE_ALL: u32 = i32::MAX as u32;

/// Longest sleep before checking whether the run stopped.
const SLICE_NS: i64 = 20_000_000;

/// One thread's progress: how many of its calls are done.
#[repr(align(128))]
#[derive(Default)]
pub struct Progress {
    done: AtomicU32,
    sleepers: AtomicU32,
}

impl Progress {
    /// Calls done so far.
    pub fn done(&self) -> u32 {
        self.done.load(Ordering::Acquire)
    }

    /// The thread has finished `count` calls (its first `count`, in order).
    pub fn publish(&self, count: u32) {
        self.done.store(count, Ordering::SeqCst);
        self.wake();
    }

    /// One more is done (for a count several threads add to); returns the new count.
    pub fn add_one(&self) -> u32 {
        let now = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        self.wake();
        now
    }

    /// Wakes every thread asleep on the count (none is woken when none says it sleeps);
    /// returns how many were.
    fn wake(&self) -> usize {
        if self.sleepers.load(Ordering::SeqCst) == 0 {
            return 0;
        }
        futex::wake(&self.done, futex::Flags::PRIVATE, WAKE_ALL).unwrap_or(0)
    }

    /// Waits until `count` calls are done, the run stops, or (with `limit_ns`) that long has
    /// passed; true once `count` calls are done.
    pub fn wait_for(&self, count: u32, shared: &Shared, limit_ns: Option<u64>) -> bool {
        if self.done() >= count {
            return true;
        }
        for _ in 0..SPINS {
            std::hint::spin_loop();
            if self.done() >= count {
                return true;
            }
        }
        let until = limit_ns.map(|l| shared.now_ns().saturating_add(l));
        loop {
            let left = until.map_or(SLICE_NS as u64, |u| u.saturating_sub(shared.now_ns()));
            let slice = futex::Timespec {
                tv_sec: 0,
                tv_nsec: left.min(SLICE_NS as u64) as i64,
            };
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            let seen = self.done.load(Ordering::SeqCst);
            if seen < count && left > 0 {
                let _ = futex::wait(&self.done, futex::Flags::PRIVATE, seen, Some(&slice));
            }
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            if self.done() >= count {
                return true;
            }
            let late = until.is_some_and(|u| shared.now_ns() >= u);
            if shared.stopped() || late {
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Several threads waiting for one thread's calls (syncs waiting for the previous one) are
    /// all woken by its progress, not one of them.
    #[test]
    fn one_publication_wakes_every_waiter() {
        let (progress, shared) = (Arc::new(Progress::default()), Arc::new(Shared::new()));
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let (p, s) = (progress.clone(), shared.clone());
                std::thread::spawn(move || p.wait_for(1, &s, None))
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        while progress.sleepers.load(Ordering::SeqCst) < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(5));
        progress.done.store(1, Ordering::SeqCst);
        // A waiter between two slices is not asleep in the kernel for a few µs: at least two.
        let woken = progress.wake();
        assert!(woken >= 2, "{woken} of 3 waiters woken");
        for w in waiters {
            assert!(w.join().unwrap());
        }
    }
}
