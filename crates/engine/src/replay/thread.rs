//! One replay thread: its captured calls in order, each once the calls it depends on are done
//! (and, with timing=original, at its scheduled time), compared with the captured result,
//! counted and timed under its kind. Asynchronous calls go to the thread's helpers
//! ([`super::pool`]); the thread's published progress is the calls done without a gap.

use super::deps::Progress;
use super::io::{bytes, errno, kind, matches, shown, Issuer};
use super::pool::{pooled, Done, InFlight, Pool, MAX_HELPERS};
use super::state::Replay;
use crate::fdtable::PrivateTable;
use crate::harness::Body;
use crate::shared::{RunError, Shared};
use crate::stats::ThreadStats;
use bakeoff_core::plan::ReplayTiming;
use bakeoff_core::trace::program::Dep;
use bakeoff_core::trace::{OpCode, Record};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The body of replay thread `thread`; `ramp_ns` is the harness's warm-up (the schedule's
/// origin is that much before the window's start).
pub fn body(state: Arc<Replay>, thread: usize, seed: u64, ramp_ns: u64) -> Body {
    Box::new(move |shared, mut stats, mut ready| {
        let helpers = helpers_needed(&state, thread);
        // A thread with no asynchronous calls opens every descriptor it uses itself and hands
        // none over, so it works in its own descriptor table (crate::fdtable), and drops them
        // all before the table. One with helpers shares its descriptors with them.
        let table = if helpers == 0 {
            PrivateTable::enter()
        } else {
            None
        };
        let mut issuer = Issuer::new(&state, thread, seed);
        let pool = setup(&state, thread, shared, &mut issuer, (helpers, seed));
        ready.go();
        let go = shared
            .ramp_ns
            .load(Ordering::Relaxed)
            .saturating_sub(ramp_ns);
        let ops = state.loaded.trace.ops[thread].len();
        let mut run = Run {
            state: &state,
            shared,
            thread,
            issuer: &mut issuer,
            go,
            pool,
            finished: vec![false; ops],
            mark: 0,
        };
        if !shared.stopped() {
            run.all(&mut stats);
        }
        drop(run);
        // The last thread to finish ends the run: the replay lasts as long as the trace.
        if state.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            // With timing=original the trace's idle end (or the end mark) is part of it.
            if let Some(end) = state.original_end_ns() {
                shared.sleep_until(go + end);
            }
            let_window_be_seen(&state, shared);
            shared.stop_now();
        }
        drop(issuer);
        drop(table);
        stats
    })
}

/// Opens the files the thread found open and starts its helpers; a failure fails the run.
fn setup(
    state: &Replay,
    thread: usize,
    shared: &Arc<Shared>,
    issuer: &mut Issuer,
    (helpers, seed): (usize, u64),
) -> Option<Pool> {
    if let Err((file, message)) = issuer.fds.open_found(state, thread) {
        shared.fail(RunError::File {
            op: format!("opening (replay thread {thread})"),
            path: state.current_path(file).display().to_string(),
            source: std::io::Error::other(message),
        });
        return None;
    }
    if helpers == 0 {
        return None;
    }
    let ops = &state.loaded.trace.ops[thread];
    let largest = (ops.iter().filter(|r| pooled(r)))
        .map(|r| r.len)
        .max()
        .unwrap_or(0)
        .min(super::io::MAX_BUF);
    match Pool::start(helpers, largest, seed ^ thread as u64, shared) {
        Ok(pool) => Some(pool),
        Err(source) => {
            shared.fail(RunError::Setup {
                engine: "replay",
                role: format!("helpers of replay thread {thread}"),
                source,
            });
            None
        }
    }
}

/// Helpers thread `thread` needs: the most asynchronous calls the capture saw in flight at
/// once (at most [`MAX_HELPERS`]); 0 with none.
fn helpers_needed(state: &Replay, thread: usize) -> usize {
    let mut ends = BinaryHeap::new();
    let mut most = 0;
    for r in (state.loaded.trace.ops[thread].iter()).filter(|r| pooled(r)) {
        while ends.peek().is_some_and(|Reverse(e)| *e <= r.start_ns) {
            ends.pop();
        }
        ends.push(Reverse(r.end_ns()));
        most = most.max(ends.len());
    }
    most.min(MAX_HELPERS)
}

/// With timing=fast and a marked window, the last thread to reach the start mark opens the
/// window, and the harness notices within 10 ms: the run lasts until it has (a window shorter
/// than that is measured from when the harness saw it open).
fn let_window_be_seen(state: &Replay, shared: &Shared) {
    let opened = state.window_opened_ns.load(Ordering::Relaxed);
    if opened != u64::MAX {
        shared.sleep_until(opened + WINDOW_SEEN_NS);
    }
}

/// How often a thread with asynchronous calls in flight looks for their completions while it
/// waits for another thread.
const POLL_NS: u64 = 1_000_000;

/// How long the harness may take to notice a window a thread opened (it looks every 10 ms).
const WINDOW_SEEN_NS: u64 = 20_000_000;

struct Run<'a> {
    state: &'a Replay,
    shared: &'a Shared,
    thread: usize,
    issuer: &'a mut Issuer,
    /// The schedule's origin (timing=original).
    go: u64,
    /// The helpers of its asynchronous calls.
    pool: Option<Pool>,
    /// Which calls are done.
    finished: Vec<bool>,
    /// Calls `..mark` are all done (what the thread publishes).
    mark: usize,
}

impl Run<'_> {
    fn all(&mut self, stats: &mut ThreadStats) {
        let state = self.state;
        let prog = &state.loaded.program.threads[self.thread];
        let end = state.end_of(self.thread);
        let at_start_mark = match state.timing {
            ReplayTiming::Fast => state.window_start_of(self.thread),
            ReplayTiming::Original => None,
        };
        let original = state.timing == ReplayTiming::Original;
        for i in 0..end {
            if self.shared.stopped() {
                return;
            }
            if at_start_mark == Some(i) && !self.open_window(stats) {
                return;
            }
            if !self.wait_deps(stats, prog.deps_of(i)) {
                return;
            }
            let r = &state.loaded.trace.ops[self.thread][i];
            // The CPU the database used before the call is part of the time until it (with
            // timing=original a burn that overruns makes the call late, as it made it then).
            if let Some(per_ns) = state.hog_per_ns {
                crate::worker::burn_cpu(r.cpu_ns, per_ns);
            }
            let sched = if original {
                let at = self.go + (r.start_ns as f64 / state.speed) as u64;
                if !self.idle_until(stats, at) {
                    return;
                }
                at
            } else {
                0
            };
            if self.shared.stopped() || !self.settle(stats, r.start_ns) {
                return;
            }
            let submit = self.shared.now_ns();
            let sched = if original { sched.min(submit) } else { submit };
            let went_on = if self.pool.is_some() && pooled(r) {
                self.submit_async(stats, i, r, (sched, submit))
            } else {
                let got = state.issue(self.issuer, r, prog.files[i]);
                let done = self.shared.now_ns();
                self.complete(stats, i, got, (sched, submit, done))
            };
            if !went_on {
                return;
            }
        }
        if at_start_mark == Some(end) && !self.open_window(stats) {
            return;
        }
        while let Some((flight, done)) = self.pool.as_mut().and_then(Pool::reap) {
            if !self.completed(stats, flight, done) {
                return;
            }
        }
    }

    /// With timing=fast and a marked window: the thread has made its calls before the start
    /// mark and waits until every thread has; the last one opens the window. So the window
    /// holds exactly the calls between the marks, as the capture's did, and none of a slower
    /// thread's warm-up (no call before the mark waits for one after it: no thread waits here
    /// for a thread that waits for it). False if the run stopped meanwhile.
    fn open_window(&mut self, stats: &mut ThreadStats) -> bool {
        let state = self.state;
        let all = state.progress.len() as u32;
        if state.at_start_mark.add_one() >= all {
            let now = self.shared.now_ns();
            self.shared.ramp_ns.fetch_min(now, Ordering::Relaxed);
            state.window_opened_ns.fetch_min(now, Ordering::Relaxed);
            return self.until_measured(stats);
        }
        // Its own asynchronous calls still complete meanwhile: a thread before the mark may
        // wait for one of them.
        match self.wait_on(stats, &state.at_start_mark, all) {
            Some(true) => self.until_measured(stats),
            _ => false,
        }
    }

    /// Waits until `progress` reaches `count`, taking the thread's own asynchronous
    /// completions as they come (another thread may be waiting for them): `Some(true)` once
    /// reached, `Some(false)` if the run stopped first, `None` if a completion failed the run.
    fn wait_on(
        &mut self,
        stats: &mut ThreadStats,
        progress: &Progress,
        count: u32,
    ) -> Option<bool> {
        loop {
            if !self.take_reported(stats) {
                return None;
            }
            let in_flight = self.pool.as_ref().is_some_and(|p| !p.in_flight.is_empty());
            let limit = in_flight.then_some(POLL_NS);
            if progress.wait_for(count, self.shared, limit) {
                return Some(true);
            }
            if self.shared.stopped() {
                return Some(false);
            }
        }
    }

    /// Waits until the harness has taken the window's starting counts (it looks within
    /// 10 ms), so that the window's totals hold its first calls too; false if the run stopped.
    fn until_measured(&mut self, stats: &mut ThreadStats) -> bool {
        while !self.shared.measuring.load(Ordering::Acquire) {
            if self.shared.stopped() || !self.take_reported(stats) {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        true
    }

    /// Takes the completions already reported, and waits for those the capture saw before
    /// `t_ns` (where the next call started); false if one of them failed the run.
    fn settle(&mut self, stats: &mut ThreadStats, t_ns: u64) -> bool {
        if !self.take_reported(stats) {
            return false;
        }
        while self.pool.as_ref().is_some_and(|p| p.due(t_ns)) {
            let Some((flight, done)) = self.pool.as_mut().and_then(Pool::reap) else {
                break;
            };
            if !self.completed(stats, flight, done) {
                return false;
            }
        }
        true
    }

    /// Hands call `i` to a helper (once one is free); false if the run failed meanwhile.
    fn submit_async(
        &mut self,
        stats: &mut ThreadStats,
        i: usize,
        r: &Record,
        t: (u64, u64),
    ) -> bool {
        let (sched, submit) = t;
        let handle = r.handle.unwrap_or(u32::MAX);
        let fd = match self.issuer.fds.get(self.state, handle) {
            Ok(fd) => fd.clone(),
            Err(e) => return self.complete(stats, i, errno(e), (sched, submit, submit)),
        };
        let flight = InFlight {
            seq: i as u32,
            captured_end_ns: r.end_ns(),
            sched_ns: sched,
            submit_ns: submit,
        };
        loop {
            let Some(pool) = self.pool.as_mut() else {
                return false;
            };
            if pool.submit(i as u32, r, fd.clone(), flight) {
                return true;
            }
            let Some((flight, done)) = pool.reap() else {
                return false;
            };
            if !self.completed(stats, flight, done) {
                return false;
            }
        }
    }

    fn completed(&mut self, stats: &mut ThreadStats, flight: InFlight, done: Done) -> bool {
        let times = (flight.sched_ns, flight.submit_ns, done.done_ns);
        self.complete(stats, flight.seq as usize, done.result, times)
    }

    /// Call `i` returned `got`: checks it, counts it, and publishes the calls done without a
    /// gap; false (the run failed) if the result differs from the captured one.
    fn complete(
        &mut self,
        stats: &mut ThreadStats,
        i: usize,
        got: i64,
        times: (u64, u64, u64),
    ) -> bool {
        let r = &self.state.loaded.trace.ops[self.thread][i];
        if super::io::absent_probe_found(r, got) {
            self.state
                .counts
                .probes_found
                .fetch_add(1, Ordering::Relaxed);
        } else if !matches(r, got) {
            self.shared.fail(self.mismatch(i, r, got));
            return false;
        }
        self.count(stats, r, got, times);
        self.state.finished(r, self.thread, i);
        self.finished[i] = true;
        let before = self.mark;
        while self.mark < self.finished.len() && self.finished[self.mark] {
            self.mark += 1;
        }
        if self.mark != before {
            self.state.progress[self.thread].publish(self.mark as u32);
        }
        true
    }

    /// Waits for every call `deps` names, counting the waits; false if the run failed
    /// meanwhile. Completions of the thread's own asynchronous calls are taken as they come
    /// (another thread may be waiting for them).
    fn wait_deps(&mut self, stats: &mut ThreadStats, deps: &[Dep]) -> bool {
        for d in deps {
            let Some(p) = self.state.progress.get(d.thread as usize) else {
                continue;
            };
            if p.done() >= d.count {
                continue;
            }
            let t0 = self.shared.now_ns();
            if self.wait_on(stats, p, d.count).is_none() {
                return false;
            }
            let counts = &self.state.counts;
            counts.dependency_waits.fetch_add(1, Ordering::Relaxed);
            let waited = self.shared.now_ns().saturating_sub(t0);
            counts.wait_ns.fetch_add(waited, Ordering::Relaxed);
        }
        true
    }

    /// Sleeps until `at_ns` (timing=original), taking the completions of the thread's own
    /// asynchronous calls as they come; false if one of them failed the run.
    fn idle_until(&mut self, stats: &mut ThreadStats, at_ns: u64) -> bool {
        loop {
            let now = self.shared.now_ns();
            if now >= at_ns || self.shared.stopped() {
                return true;
            }
            let left = (at_ns - now).min(POLL_NS * 20);
            match self.pool.as_mut().and_then(|p| p.reap_within(left)) {
                Some((flight, done)) => {
                    if !self.completed(stats, flight, done) {
                        return false;
                    }
                }
                None if self.pool.as_ref().is_some_and(|p| !p.in_flight.is_empty()) => {}
                None => {
                    self.shared.sleep_until(at_ns);
                    return true;
                }
            }
        }
    }

    /// Takes the completions already reported; false if one of them failed the run.
    fn take_reported(&mut self, stats: &mut ThreadStats) -> bool {
        while let Some((flight, done)) = self.pool.as_mut().and_then(Pool::try_reap) {
            if !self.completed(stats, flight, done) {
                return false;
            }
        }
        true
    }

    /// Counts call `r` and, if it has a kind, times it: latency from its scheduled time
    /// (timing=original; the submission otherwise), service time from its submission.
    fn count(&self, stats: &mut ThreadStats, r: &Record, got: i64, times: (u64, u64, u64)) {
        let (sched, submit, done) = times;
        let counts = &self.state.counts;
        counts.calls.fetch_add(1, Ordering::Relaxed);
        if r.is_async {
            counts.async_calls.fetch_add(1, Ordering::Relaxed);
        }
        match kind(self.state, r) {
            Some(k) => stats.record(
                k,
                bytes(r, got),
                done.saturating_sub(sched),
                done.saturating_sub(submit),
                self.shared.in_window(done),
            ),
            None => {
                counts.untimed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn mismatch(&self, i: usize, r: &Record, got: i64) -> RunError {
        let state = self.state;
        let op = r.op.unwrap_or(OpCode::Open);
        let path = match self.state.loaded.program.threads[self.thread].files[i] {
            _ if !op.takes_handle() => state.path(super::io::path_id(r.arg)),
            Some(file) => state.current_path(file),
            None => state.path(super::io::path_id(r.arg)),
        };
        let what = match op {
            OpCode::Read | OpCode::Write => {
                format!("{} of {} bytes at offset {}", op.name(), r.len, r.offset)
            }
            _ => op.name().to_string(),
        };
        RunError::File {
            op: format!("replayed {what} (thread {}, call {i})", self.thread),
            path: path.display().to_string(),
            source: std::io::Error::other(format!(
                "the result differs from the captured one: captured {}, replayed {}",
                shown(op, r.result),
                shown(op, got)
            )),
        }
    }
}
