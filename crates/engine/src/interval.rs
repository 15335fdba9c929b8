//! Latency per interval (fio's `log_hist`) without locks or allocation on the I/O path: each
//! thread counts every finished operation into its own buckets (HdrHistogram's layout at 2
//! significant digits: values within 1 %), which only it writes, as relaxed atomics. At each
//! tick the harness adds every thread's buckets and takes the difference from the previous
//! tick and from the measured window's start: the interval's percentiles, and the window's so
//! far.

use crate::histogram::{index_in, value_at_in, MAX_NS};
use crate::kinds::KINDS;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};

/// log2 of half the sub-buckets: 128 give HdrHistogram's layout for 2 significant digits.
const HALF_MAGNITUDE: u32 = 7;
const SIGNIFICANT_DIGITS: u8 = 2;

fn buckets() -> usize {
    index_in::<HALF_MAGNITUDE>(MAX_NS) + 1
}

/// One thread's running latency counts of one kind; written only by that thread.
pub struct LiveCounts {
    counts: Box<[AtomicU64]>,
}

impl Default for LiveCounts {
    fn default() -> Self {
        LiveCounts {
            counts: (0..buckets()).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl LiveCounts {
    /// Counts one latency (by the owning thread only); values outside 1 ..= [`MAX_NS`] count
    /// as the nearest bound.
    #[inline(always)]
    pub fn record(&self, ns: u64) {
        if let Some(c) = self
            .counts
            .get(index_in::<HALF_MAGNITUDE>(ns.clamp(1, MAX_NS)))
        {
            // A single writer: a load and a store, no locked read-modify-write.
            c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }

    fn add_to(&self, sum: &mut [u64]) {
        for (s, c) in sum.iter_mut().zip(self.counts.iter()) {
            *s += c.load(Ordering::Relaxed);
        }
    }
}

/// One kind's latency over a stretch of time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindLatency {
    /// Operations that finished in it.
    pub count: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// Per operation kind (by [`bakeoff_core::plan::OpKind::index`]): the latencies since the
/// previous tick, and since the measured window started (none before it starts).
#[derive(Clone, Copy, Debug, Default)]
pub struct TickLatency {
    /// Since the previous tick.
    pub interval: [Option<KindLatency>; KINDS],
    /// Since the window's start.
    pub window: [Option<KindLatency>; KINDS],
}

/// What the previous tick and the window's start saw, added over every thread, per kind.
#[derive(Default)]
pub struct LiveReader {
    last: Vec<Vec<u64>>,
    window_start: Option<Vec<Vec<u64>>>,
}

impl LiveReader {
    /// Reads every thread's counts now; `window_starts` marks this tick as the window's start.
    pub fn read<'a>(
        &mut self,
        threads: impl Iterator<Item = &'a [Option<LiveCounts>; KINDS]>,
        window_starts: bool,
    ) -> TickLatency {
        let mut now: Vec<Vec<u64>> = vec![Vec::new(); KINDS];
        for thread in threads {
            for (sum, counts) in now.iter_mut().zip(thread) {
                if let Some(c) = counts {
                    if sum.is_empty() {
                        *sum = vec![0; buckets()];
                    }
                    c.add_to(sum);
                }
            }
        }
        if window_starts {
            self.window_start = Some(now.clone());
        }
        let mut out = TickLatency::default();
        for (k, counts) in now.iter().enumerate() {
            out.interval[k] = summarize(counts, self.last.get(k));
            let start = self.window_start.as_ref();
            out.window[k] = start.and_then(|w| summarize(counts, w.get(k)));
        }
        self.last = now;
        out
    }
}

/// The latency of what `now` counted beyond `before`; `None` if nothing.
fn summarize(now: &[u64], before: Option<&Vec<u64>>) -> Option<KindLatency> {
    let mut h = Histogram::<u64>::new_with_bounds(1, MAX_NS, SIGNIFICANT_DIGITS).ok()?;
    for (i, &n) in now.iter().enumerate() {
        let earlier = before.and_then(|b| b.get(i)).copied().unwrap_or(0);
        let d = n.saturating_sub(earlier);
        if d > 0 {
            h.record_n(value_at_in::<HALF_MAGNITUDE>(i), d).ok()?;
        }
    }
    (!h.is_empty()).then(|| KindLatency {
        count: h.len(),
        p50_ns: h.value_at_quantile(0.5),
        p99_ns: h.value_at_quantile(0.99),
        max_ns: h.max(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(values: &[u64]) -> [Option<LiveCounts>; KINDS] {
        let mut t: [Option<LiveCounts>; KINDS] = Default::default();
        let c = LiveCounts::default();
        values.iter().for_each(|&v| c.record(v));
        t[0] = Some(c);
        t
    }

    #[test]
    fn intervals_are_the_differences_between_ticks_and_match_hdrhistogram() {
        let a = thread(&[]);
        let b = thread(&[]);
        let mut reader = LiveReader::default();
        let first = reader.read([&a, &b].into_iter(), true);
        assert_eq!(first.interval[0], None, "nothing yet");
        let mut theirs = Histogram::<u64>::new_with_bounds(1, MAX_NS, 2).unwrap();
        for v in 1..=1000u64 {
            a[0].as_ref().unwrap().record(v * 1000);
            b[0].as_ref().unwrap().record(v * 7);
            theirs.record(v * 1000).unwrap();
            theirs.record(v * 7).unwrap();
        }
        let second = reader.read([&a, &b].into_iter(), false);
        let i = second.interval[0].unwrap();
        assert_eq!(i.count, 2000);
        assert_eq!(i.p99_ns, theirs.value_at_quantile(0.99));
        assert_eq!(i.max_ns, theirs.max());
        a[0].as_ref().unwrap().record(5_000_000);
        let third = reader.read([&a, &b].into_iter(), false);
        let i = third.interval[0].unwrap();
        assert_eq!(i.count, 1, "only the new one");
        assert!(
            i.p50_ns.abs_diff(5_000_000) < 50_000,
            "within 1 %: {}",
            i.p50_ns
        );
        assert_eq!(third.window[0].unwrap().count, 2001, "the window so far");
        assert_eq!(third.interval[1], None, "a kind no thread counts");
    }
}
