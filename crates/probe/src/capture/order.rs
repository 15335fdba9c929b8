//! Each thread's records in start order. A synchronous call ends before the thread's next one
//! starts, so those arrive in order; an asynchronous one (Linux AIO) is known only when it is
//! reaped, after later calls of its thread. Those later calls wait here until no submission
//! of their thread that started before them is still outstanding.

use bakeoff_core::trace::{Record, ThreadId};
use std::collections::{BTreeMap, HashMap};

/// Records held back per thread.
#[derive(Debug, Default)]
pub struct Order {
    held: HashMap<ThreadId, Vec<Record>>,
    outstanding: HashMap<ThreadId, BTreeMap<u64, u32>>,
}

impl Order {
    /// An asynchronous call of `thread` started at `start` and is not finished.
    pub fn submitted(&mut self, thread: ThreadId, start: u64) {
        *self
            .outstanding
            .entry(thread)
            .or_default()
            .entry(start)
            .or_default() += 1;
    }

    /// The asynchronous call of `thread` that started at `start` finished: `record`. Returns
    /// the records of `thread` that can go, in start order.
    pub fn reaped(&mut self, thread: ThreadId, record: Record) -> Vec<Record> {
        self.forget(thread, record.start_ns);
        self.push(thread, record)
    }

    /// The asynchronous call of `thread` that started at `start` is not in the trace after
    /// all. Returns the records of `thread` that can go, in start order.
    pub fn withdrawn(&mut self, thread: ThreadId, start: u64) -> Vec<Record> {
        self.forget(thread, start);
        self.release(thread)
    }

    fn forget(&mut self, thread: ThreadId, start: u64) {
        let starts = self.outstanding.entry(thread).or_default();
        if let Some(n) = starts.get_mut(&start) {
            *n -= 1;
            if *n == 0 {
                starts.remove(&start);
            }
        }
    }

    fn release(&mut self, thread: ThreadId) -> Vec<Record> {
        let limit = (self.outstanding.get(&thread))
            .and_then(|s| s.keys().next().copied())
            .unwrap_or(u64::MAX);
        let held = self.held.entry(thread).or_default();
        held.sort_by_key(|r| r.start_ns);
        let ready = held.partition_point(|r| r.start_ns < limit);
        held.drain(..ready).collect()
    }

    /// A finished call of `thread`. Returns the records of `thread` that can go, in start
    /// order.
    pub fn push(&mut self, thread: ThreadId, record: Record) -> Vec<Record> {
        let limit = (self.outstanding.get(&thread))
            .and_then(|s| s.keys().next().copied())
            .unwrap_or(u64::MAX);
        let held = self.held.entry(thread).or_default();
        if held.is_empty() && record.start_ns < limit {
            return vec![record];
        }
        held.push(record);
        held.sort_by_key(|r| r.start_ns);
        let ready = held.partition_point(|r| r.start_ns < limit);
        held.drain(..ready).collect()
    }

    /// Everything still held, by thread, in start order (the capture's end).
    pub fn drain(&mut self) -> Vec<(ThreadId, Vec<Record>)> {
        let mut all: Vec<(ThreadId, Vec<Record>)> = self.held.drain().collect();
        all.sort_by_key(|(t, _)| *t);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start_ns: u64) -> Record {
        Record {
            start_ns,
            ..Record::default()
        }
    }

    #[test]
    fn calls_after_an_outstanding_submission_wait_for_it() {
        let mut o = Order::default();
        assert_eq!(o.push(0, at(5)), vec![at(5)]);
        o.submitted(0, 10);
        assert_eq!(o.push(0, at(20)), vec![]);
        assert_eq!(
            o.push(1, at(21)),
            vec![at(21)],
            "another thread does not wait"
        );
        assert_eq!(o.push(0, at(30)), vec![]);
        let done = Record {
            dur_ns: 25,
            ..at(10)
        };
        assert_eq!(o.reaped(0, done), vec![done, at(20), at(30)]);
        assert_eq!(o.push(0, at(40)), vec![at(40)]);
    }

    #[test]
    fn a_withdrawn_submission_releases_what_waited() {
        let mut o = Order::default();
        o.submitted(0, 10);
        o.submitted(0, 15);
        assert_eq!(o.push(0, at(20)), vec![]);
        assert_eq!(o.withdrawn(0, 10), vec![]);
        assert_eq!(o.withdrawn(0, 15), vec![at(20)]);
    }

    #[test]
    fn what_is_never_reaped_is_drained_at_the_end() {
        let mut o = Order::default();
        o.submitted(3, 10);
        o.push(3, at(12));
        assert_eq!(o.drain(), vec![(3, vec![at(12)])]);
    }
}
