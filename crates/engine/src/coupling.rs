//! Couplings between roles: filebench-style semaphores (semblock/sempost; a role's `gate` in a
//! workload file), the group-commit queue between committers and the log writer, and the
//! dirty-block queue between sessions and db writers. Waits poll `stopped` so a run ends promptly.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How often a blocked thread re-checks whether the run has ended.
const POLL: Duration = Duration::from_millis(20);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A worker that panicked while holding the lock leaves plain counters behind: keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits on `cv` while `blocked` holds, re-checking `stopped` at least every [`POLL`]: the
/// guard once `blocked` is false, or `None` if the run ended first.
fn wait_while<'a, T>(
    cv: &Condvar,
    mut guard: MutexGuard<'a, T>,
    blocked: impl Fn(&T) -> bool,
    stopped: &dyn Fn() -> bool,
) -> Option<MutexGuard<'a, T>> {
    while blocked(&guard) {
        if stopped() {
            return None;
        }
        guard = cv
            .wait_timeout(guard, POLL)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    Some(guard)
}

/// One waiter's semaphore: it needs `value` posts per pass; posters may be `highwater` posts
/// ahead of what it has asked for. Mirrors filebench's pair of SysV semaphores (low and high
/// water).
///
/// The counters are atomics so that a post that needs no waiting takes no lock and makes no
/// system call (200 OLTP shadows post to 11 semaphores per read); the mutex and condition
/// variables are only for blocking, and every blocking wait re-checks at least every [`POLL`].
pub struct Semaphore {
    value: u64,
    /// Posts the posters may still make before blocking.
    allowance: AtomicI64,
    /// Posts not yet consumed by the waiter.
    posted: AtomicU64,
    lock: Mutex<()>,
    to_waiter: Condvar,
    to_posters: Condvar,
}

impl Semaphore {
    /// A semaphore from the plan's parameters.
    pub fn new(spec: bakeoff_core::plan::SemaphoreSpec) -> Semaphore {
        Semaphore {
            value: spec.value,
            allowance: AtomicI64::new(i64::try_from(spec.highwater).unwrap_or(i64::MAX)),
            posted: AtomicU64::new(0),
            lock: Mutex::new(()),
            to_waiter: Condvar::new(),
            to_posters: Condvar::new(),
        }
    }

    /// Takes one unit of allowance if there is one.
    fn take_allowance(&self) -> bool {
        let mut a = self.allowance.load(Ordering::Acquire);
        while a > 0 {
            match self.allowance.compare_exchange_weak(
                a,
                a - 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => a = now,
            }
        }
        false
    }

    /// Posts one unit; first blocks while the poster is `highwater` ahead (filebench's blocking
    /// `sempost` is two semaphore operations, and a poster blocked in the first has not posted).
    pub fn post(&self, stopped: &dyn Fn() -> bool) {
        while !self.take_allowance() {
            let guard = lock(&self.lock);
            if self.allowance.load(Ordering::Acquire) > 0 {
                continue;
            }
            if stopped() {
                return;
            }
            drop(self.to_posters.wait_timeout(guard, POLL));
        }
        if self.posted.fetch_add(1, Ordering::AcqRel) + 1 == self.value {
            // The waiter may be checking `posted` under the lock right now: notify under it.
            let _g = lock(&self.lock);
            self.to_waiter.notify_one();
        }
    }

    /// Lets posters run `value` further ahead, then waits for `value` posts.
    pub fn wait(&self, stopped: &dyn Fn() -> bool) {
        let value = i64::try_from(self.value).unwrap_or(i64::MAX);
        if self.allowance.fetch_add(value, Ordering::AcqRel) <= 0 {
            let _g = lock(&self.lock);
            self.to_posters.notify_all();
        }
        loop {
            let p = self.posted.load(Ordering::Acquire);
            if p >= self.value {
                let next = p - self.value;
                let swap =
                    self.posted
                        .compare_exchange_weak(p, next, Ordering::AcqRel, Ordering::Acquire);
                if swap.is_ok() {
                    return;
                }
                continue;
            }
            let guard = lock(&self.lock);
            if self.posted.load(Ordering::Acquire) >= self.value {
                continue;
            }
            if stopped() {
                return;
            }
            drop(self.to_waiter.wait_timeout(guard, POLL));
        }
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
        wait_while(&self.done, s, |s| s.durable < seq, stopped).is_some()
    }

    /// Takes all queued commits; `None` once the run ended.
    pub fn next_batch(&self, stopped: &dyn Fn() -> bool) -> Option<LogBatch> {
        let mut s = wait_while(
            &self.work,
            lock(&self.state),
            |s| s.pending_commits == 0,
            stopped,
        )?;
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

/// A block a session dirtied: file index, offset and length.
pub type DirtyBlock = (u32, u64, u32);

/// Dirty blocks between sessions and a db writer role (Oracle's buffer cache's dirty list):
/// sessions queue the blocks they update, db writer threads take them in batches.
pub struct DirtyQueue {
    limit: usize,
    blocks: Mutex<VecDeque<DirtyBlock>>,
    to_writers: Condvar,
    to_sessions: Condvar,
}

impl DirtyQueue {
    /// A queue that holds at most `limit` blocks.
    pub fn new(limit: u64) -> DirtyQueue {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX).max(1);
        DirtyQueue {
            limit,
            blocks: Mutex::new(VecDeque::new()),
            to_writers: Condvar::new(),
            to_sessions: Condvar::new(),
        }
    }

    /// Queues a block, waiting while the queue is full ("free buffer waits"); false if the run
    /// ended first.
    pub fn push(&self, block: DirtyBlock, stopped: &dyn Fn() -> bool) -> bool {
        let full = |q: &VecDeque<DirtyBlock>| q.len() >= self.limit;
        let Some(mut q) = wait_while(&self.to_sessions, lock(&self.blocks), full, stopped) else {
            return false;
        };
        q.push_back(block);
        self.to_writers.notify_one();
        true
    }

    /// Moves up to `max` queued blocks into `out`, waiting for at least one; false once the run
    /// ended with nothing queued.
    pub fn take(&self, max: usize, out: &mut Vec<DirtyBlock>, stopped: &dyn Fn() -> bool) -> bool {
        let empty = |q: &VecDeque<DirtyBlock>| q.is_empty();
        let Some(mut q) = wait_while(&self.to_writers, lock(&self.blocks), empty, stopped) else {
            return false;
        };
        let n = q.len().min(max.max(1));
        out.extend(q.drain(..n));
        self.to_sessions.notify_all();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    #[test]
    fn waiter_passes_once_per_value_posts() {
        let semaphore = Arc::new(Semaphore::new(bakeoff_core::plan::SemaphoreSpec {
            value: 10,
            highwater: 5,
        }));
        let passes = Arc::new(AtomicU64::new(0));
        let (g, p) = (semaphore.clone(), passes.clone());
        let never = || false;
        let waiter = std::thread::spawn(move || {
            for _ in 0..3 {
                g.wait(&|| false);
                p.fetch_add(1, Ordering::SeqCst);
            }
        });
        for _ in 0..30 {
            semaphore.post(&never);
        }
        waiter.join().unwrap();
        assert_eq!(passes.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn posters_block_at_highwater_until_stopped() {
        let semaphore = Semaphore::new(bakeoff_core::plan::SemaphoreSpec {
            value: 100,
            highwater: 2,
        });
        let never = || false;
        semaphore.post(&never);
        semaphore.post(&never);
        // A third post would block: with `stopped` true it returns instead, without posting.
        let t = std::time::Instant::now();
        semaphore.post(&|| t.elapsed() > Duration::from_millis(50));
        assert!(t.elapsed() >= Duration::from_millis(50));
        assert_eq!(
            semaphore.posted.load(Ordering::SeqCst),
            2,
            "a blocked post has not posted"
        );
    }

    #[test]
    fn dirty_blocks_wait_for_room_and_leave_in_batches() {
        let q = Arc::new(DirtyQueue::new(4));
        for i in 0..4 {
            assert!(q.push((0, i * 8192, 8192), &|| false));
        }
        let t = std::time::Instant::now();
        assert!(!q.push((0, 0, 8192), &|| t.elapsed() > Duration::from_millis(30)));
        let mut out = Vec::new();
        assert!(q.take(3, &mut out, &|| false));
        assert_eq!(out.len(), 3, "a batch of at most max");
        assert!(q.push((1, 0, 8192), &|| false), "room again");
        out.clear();
        assert!(q.take(10, &mut out, &|| false));
        assert_eq!(out, vec![(0, 3 * 8192, 8192), (1, 0, 8192)]);
        assert!(!q.take(10, &mut out, &|| true), "stopped and empty");
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
