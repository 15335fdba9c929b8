//! Couplings between roles: filebench-style gates (semblock/sempost) and the group-commit queue
//! between database writers and the log writer. Waits poll `stopped` so a run ends promptly.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How often a blocked thread re-checks whether the run has ended.
const POLL: Duration = Duration::from_millis(20);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A worker that panicked while holding the lock leaves plain counters behind: keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Default)]
struct GateState {
    posted: u64,
    allowance: u64,
}

/// One waiter's gate: it needs `value` posts per pass; posters may be `highwater` posts ahead of
/// what it has asked for. Mirrors filebench's pair of SysV semaphores (low and high water).
pub struct Gate {
    value: u64,
    state: Mutex<GateState>,
    to_waiter: Condvar,
    to_posters: Condvar,
}

impl Gate {
    /// A gate from the plan's parameters.
    pub fn new(spec: bakeoff_core::plan::Gate) -> Gate {
        Gate {
            value: spec.value,
            state: Mutex::new(GateState {
                posted: 0,
                allowance: spec.highwater,
            }),
            to_waiter: Condvar::new(),
            to_posters: Condvar::new(),
        }
    }

    /// Posts one unit; first blocks while the poster is `highwater` ahead (filebench's blocking
    /// `sempost` is two semaphore operations, and a poster blocked in the first has not posted).
    pub fn post(&self, stopped: &dyn Fn() -> bool) {
        let mut s = lock(&self.state);
        while s.allowance == 0 {
            if stopped() {
                return;
            }
            s = self
                .to_posters
                .wait_timeout(s, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        s.allowance -= 1;
        s.posted += 1;
        if s.posted >= self.value {
            self.to_waiter.notify_one();
        }
    }

    /// Lets posters run `value` further ahead, then waits for `value` posts.
    pub fn wait(&self, stopped: &dyn Fn() -> bool) {
        let mut s = lock(&self.state);
        s.allowance += self.value;
        self.to_posters.notify_all();
        while s.posted < self.value {
            if stopped() {
                return;
            }
            s = self
                .to_waiter
                .wait_timeout(s, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        s.posted -= self.value;
    }
}

#[derive(Default)]
struct LogState {
    pending_bytes: u64,
    pending_commits: u64,
    submitted: u64,
    durable: u64,
}

/// A batch of commits the log writer takes in one go.
pub struct LogBatch {
    /// Redo bytes to write.
    pub bytes: u64,
    /// Commits in the batch.
    pub commits: u64,
    /// Sequence number that becomes durable when the batch is.
    pub upto: u64,
}

/// Group commit: committers queue redo and wait; the log writer takes everything queued.
#[derive(Default)]
pub struct LogQueue {
    state: Mutex<LogState>,
    work: Condvar,
    done: Condvar,
}

impl LogQueue {
    /// Queues `bytes` of redo and waits until the log writer made it durable; false if the run
    /// ended first (the commit did not complete).
    pub fn commit(&self, bytes: u64, stopped: &dyn Fn() -> bool) -> bool {
        let mut s = lock(&self.state);
        s.pending_bytes += bytes;
        s.pending_commits += 1;
        s.submitted += 1;
        let seq = s.submitted;
        self.work.notify_one();
        while s.durable < seq {
            if stopped() {
                return false;
            }
            s = self
                .done
                .wait_timeout(s, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Takes all queued commits; `None` once the run ended.
    pub fn next_batch(&self, stopped: &dyn Fn() -> bool) -> Option<LogBatch> {
        let mut s = lock(&self.state);
        while s.pending_commits == 0 {
            if stopped() {
                return None;
            }
            s = self
                .work
                .wait_timeout(s, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let batch = LogBatch {
            bytes: s.pending_bytes,
            commits: s.pending_commits,
            upto: s.submitted,
        };
        s.pending_bytes = 0;
        s.pending_commits = 0;
        Some(batch)
    }

    /// Marks commits up to `upto` durable and wakes their committers.
    pub fn complete(&self, upto: u64) {
        let mut s = lock(&self.state);
        s.durable = s.durable.max(upto);
        self.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    #[test]
    fn waiter_passes_once_per_value_posts() {
        let gate = Arc::new(Gate::new(bakeoff_core::plan::Gate {
            value: 10,
            highwater: 5,
        }));
        let passes = Arc::new(AtomicU64::new(0));
        let (g, p) = (gate.clone(), passes.clone());
        let never = || false;
        let waiter = std::thread::spawn(move || {
            for _ in 0..3 {
                g.wait(&|| false);
                p.fetch_add(1, Ordering::SeqCst);
            }
        });
        for _ in 0..30 {
            gate.post(&never);
        }
        waiter.join().unwrap();
        assert_eq!(passes.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn posters_block_at_highwater_until_stopped() {
        let gate = Gate::new(bakeoff_core::plan::Gate {
            value: 100,
            highwater: 2,
        });
        let never = || false;
        gate.post(&never);
        gate.post(&never);
        // A third post would block: with `stopped` true it returns instead, without posting.
        let t = std::time::Instant::now();
        gate.post(&|| t.elapsed() > Duration::from_millis(50));
        assert!(t.elapsed() >= Duration::from_millis(50));
        assert_eq!(lock(&gate.state).posted, 2, "a blocked post has not posted");
    }

    #[test]
    fn group_commit_batches_queued_commits() {
        let q = Arc::new(LogQueue::default());
        let mut committers = Vec::new();
        for _ in 0..4 {
            let q = q.clone();
            committers.push(std::thread::spawn(
                move || assert!(q.commit(512, &|| false)),
            ));
        }
        let mut served = 0;
        while served < 4 {
            let b = q.next_batch(&|| false).unwrap();
            assert_eq!(b.bytes, 512 * b.commits);
            served += b.commits;
            q.complete(b.upto);
        }
        for c in committers {
            c.join().unwrap();
        }
    }
}
