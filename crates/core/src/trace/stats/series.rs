//! Histograms of sizes and offsets, and the per-second series.

use super::done;
use crate::trace::model::{OpCode, Record, Trace};
use serde::Serialize;
use std::collections::BTreeMap;

/// The longest per-second series kept (a week): a trace whose times run beyond it is bogus.
const MAX_SECONDS: u64 = 7 * 24 * 3600;

/// A histogram of one op kind in log2 buckets.
#[derive(Clone, Debug, Serialize)]
pub struct Histogram {
    /// `read` or `write`.
    pub op: String,
    /// The non-empty buckets, smallest first.
    pub buckets: Vec<Bucket>,
}

/// Values in `[from, 2 × from)` (`from` = 0: the value 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// Its lower bound, a power of two or 0.
    pub from: u64,
    /// Values in it.
    pub count: u64,
}

/// One second of the capture.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Second {
    /// Seconds since the capture started.
    pub t: u64,
    /// Calls that started in it.
    pub ops: u64,
    /// Bytes those reads and writes moved.
    pub bytes: u64,
    /// Mean number of threads inside a synchronous call (the concurrency the database had).
    pub in_call: f64,
    /// Mean number of asynchronous I/Os in flight.
    pub in_flight: f64,
}

/// The lower bound of `v`'s log2 bucket.
pub fn bucket_of(v: u64) -> u64 {
    match v {
        0 => 0,
        v => 1 << (63 - v.leading_zeros()),
    }
}

/// Histograms of `value` of reads and of writes.
pub(super) fn histograms(trace: &Trace, value: impl Fn(&Record) -> u64) -> Vec<Histogram> {
    [OpCode::Read, OpCode::Write]
        .into_iter()
        .map(|op| {
            let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
            for r in trace.ops.iter().flatten().filter(|r| r.op == Some(op)) {
                *counts.entry(bucket_of(value(r))).or_default() += 1;
            }
            Histogram {
                op: op.name().to_string(),
                buckets: (counts.into_iter())
                    .map(|(from, count)| Bucket { from, count })
                    .collect(),
            }
        })
        .collect()
}

/// One [`Second`] per second of `duration_ns` (and of any call that ran past it).
pub(super) fn seconds(trace: &Trace, duration_ns: u64) -> Vec<Second> {
    let last_end = trace.ops.iter().flatten().map(|r| r.end_ns()).max();
    let span = duration_ns.max(last_end.unwrap_or(0));
    let n = span.div_ceil(1_000_000_000).min(MAX_SECONDS) as usize;
    let mut out: Vec<Second> = (0..n as u64)
        .map(|t| Second {
            t,
            ..Second::default()
        })
        .collect();
    for r in trace.ops.iter().flatten() {
        let Some(op) = r.op else { continue };
        let Some(s) = out.get_mut((r.start_ns / 1_000_000_000) as usize) else {
            continue;
        };
        s.ops += 1;
        if matches!(op, OpCode::Read | OpCode::Write) {
            s.bytes += done(r.result);
        }
        spread(&mut out, r);
    }
    out
}

/// Adds the share of each second `r` was in progress to that second's `in_call` (or
/// `in_flight` for an asynchronous call).
fn spread(out: &mut [Second], r: &Record) {
    let (start, end) = (r.start_ns, r.end_ns());
    let mut t = start;
    while t < end {
        let sec = t / 1_000_000_000;
        let Some(s) = out.get_mut(sec as usize) else {
            return;
        };
        let until = end.min((sec + 1) * 1_000_000_000);
        let share = (until - t) as f64 / 1e9;
        if r.is_async {
            s.in_flight += share;
        } else {
            s.in_call += share;
        }
        t = until;
    }
}
