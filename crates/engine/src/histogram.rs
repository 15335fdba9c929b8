//! Latency recording on the hot path: HdrHistogram's bucket layout (3 significant digits: every
//! value is kept within 0.1 %, from 1 ns to one hour) as a plain array of counters, so that
//! recording is an index computation and an increment, without the bound and min/max checks of
//! `hdrhistogram::Histogram::record`. After the run the counts become a real `Histogram` (the
//! same buckets, so the same percentiles) for merging and reporting.

use hdrhistogram::Histogram;

/// Largest latency recorded; longer ones count as this (one hour).
pub const MAX_NS: u64 = 3_600_000_000_000;

/// log2 of half the sub-buckets of a bucket: 1024 half-buckets give 3 significant digits.
const HALF_MAGNITUDE: u32 = 10;

/// The counter index of `value` (1 ..= MAX_NS), as HdrHistogram lays them out with `2^H`
/// half-buckets (H = 10: 3 significant digits; 7: 2).
#[inline(always)]
pub(crate) fn index_in<const H: u32>(value: u64) -> usize {
    let half_count: u64 = 1 << H;
    // Values below this share bucket 0 (exact to the nanosecond).
    let sub_bucket_mask: u64 = (half_count << 1) - 1;
    // `64 - log2(sub-bucket count)`: the leading zeros of the largest value of bucket 0.
    let leading_zero_base: u32 = 64 - H - 1;
    let bucket = leading_zero_base - (value | sub_bucket_mask).leading_zeros();
    let sub_bucket = value >> bucket;
    (((u64::from(bucket) + 1) << H) + sub_bucket - half_count) as usize
}

/// The smallest value that lands at `index` (of the layout with `2^H` half-buckets).
pub(crate) fn value_at_in<const H: u32>(index: usize) -> u64 {
    let half_count: u64 = 1 << H;
    let index = index as u64;
    if index < half_count << 1 {
        return index;
    }
    let bucket = (index >> H) - 1;
    let sub_bucket = (index & (half_count - 1)) + half_count;
    sub_bucket << bucket
}

#[inline(always)]
fn index(value: u64) -> usize {
    index_in::<HALF_MAGNITUDE>(value)
}

fn value_at(index: usize) -> u64 {
    value_at_in::<HALF_MAGNITUDE>(index)
}

/// Counters for latencies of one kind in one thread. As JSON (a client process's results)
/// only the counters that are not zero are written, as `[index, count]` pairs: exact.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "Sparse", try_from = "Sparse")]
pub struct LatencyCounts {
    counts: Box<[u64]>,
}

/// The counters that are not zero, by index.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sparse(Vec<(u32, u64)>);

impl From<LatencyCounts> for Sparse {
    fn from(c: LatencyCounts) -> Sparse {
        let nonzero = c.counts.iter().enumerate().filter(|(_, n)| **n > 0);
        Sparse(nonzero.map(|(i, n)| (i as u32, *n)).collect())
    }
}

impl TryFrom<Sparse> for LatencyCounts {
    type Error = String;

    fn try_from(s: Sparse) -> Result<LatencyCounts, String> {
        let mut c = LatencyCounts::default();
        let len = c.counts.len();
        for (i, n) in s.0 {
            *c.counts
                .get_mut(i as usize)
                .ok_or_else(|| format!("latency counter {i} is beyond the last ({len})"))? += n;
        }
        Ok(c)
    }
}

impl Default for LatencyCounts {
    fn default() -> Self {
        LatencyCounts {
            counts: vec![0; index(MAX_NS) + 1].into_boxed_slice(),
        }
    }
}

impl LatencyCounts {
    /// Counts one latency; values outside 1 ..= [`MAX_NS`] count as the nearest bound.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let i = index(ns.clamp(1, MAX_NS));
        // `i` is at most `index(MAX_NS)`, the last counter: the bound check never fails.
        if let Some(c) = self.counts.get_mut(i) {
            *c += 1;
        }
    }

    /// Adds another thread's counts.
    pub fn add(&mut self, other: &LatencyCounts) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
    }

    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|c| *c == 0)
    }

    /// The counts as an HdrHistogram with the same buckets.
    pub fn to_histogram(&self) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, MAX_NS, 3).expect("static bounds are valid");
        for (i, &n) in self.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
            h.record_n(value_at(i), n)
                .expect("every counter's value is within the bounds");
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_buckets_and_percentiles_as_hdrhistogram() {
        let mut ours = LatencyCounts::default();
        let mut theirs = Histogram::<u64>::new_with_bounds(1, MAX_NS, 3).unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..200_000 {
            // Log-uniform from 1 ns to about 20 minutes.
            let v = (2f64.powf(rng.f64() * 40.0)) as u64;
            ours.record(v);
            theirs.record(v.clamp(1, MAX_NS)).unwrap();
        }
        for v in [1, 2047, 2048, 2049, 4095, 123_456, MAX_NS] {
            ours.record(v);
            theirs.record(v).unwrap();
        }
        let h = ours.to_histogram();
        assert_eq!(h.len(), theirs.len());
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(h.value_at_quantile(q), theirs.value_at_quantile(q), "q {q}");
        }
        assert_eq!((h.min(), h.max()), (theirs.min(), theirs.max()));
    }

    #[test]
    fn out_of_range_values_count_at_the_bounds_and_counts_add() {
        let mut a = LatencyCounts::default();
        a.record(0);
        a.record(u64::MAX);
        let mut b = LatencyCounts::default();
        assert!(b.is_empty());
        b.record(500);
        b.add(&a);
        let h = b.to_histogram();
        assert_eq!(h.len(), 3);
        assert_eq!(h.min(), 1);
        assert!(h.max() >= MAX_NS - MAX_NS / 1000);
    }
}
