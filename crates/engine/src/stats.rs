//! Per-thread accounting on the hot path: cumulative counters the sampler reads every second,
//! and latency counts in HdrHistogram's layout ([`crate::histogram`]: 3 significant digits,
//! values within 0.1 %, up to one hour) that are merged after the run. Nothing here allocates
//! per operation.

use crate::histogram::LatencyCounts;
use crate::interval::LiveCounts;
use crate::kinds::KINDS;
use bakeoff_core::plan::OpKind;
use bakeoff_core::record::{Latency, Percentile};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};

/// Percentiles reported.
pub const PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Cumulative operation and byte counts, and latency counts per interval, of one thread;
/// written only by that thread.
#[repr(align(128))]
#[derive(Default)]
pub struct Counters {
    ops: [AtomicU64; KINDS],
    bytes: [AtomicU64; KINDS],
    /// Running latency counts of the kinds the thread records (every operation, ramp too).
    pub live: [Option<LiveCounts>; KINDS],
}

/// A copy of counters at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Totals {
    /// Operations per kind.
    pub ops: [u64; KINDS],
    /// Bytes per kind.
    pub bytes: [u64; KINDS],
}

impl Totals {
    /// Adds another thread's totals.
    pub fn add(&mut self, other: &Totals) {
        for i in 0..KINDS {
            self.ops[i] += other.ops[i];
            self.bytes[i] += other.bytes[i];
        }
    }

    /// `self - earlier`.
    pub fn since(&self, earlier: &Totals) -> Totals {
        let mut d = Totals::default();
        for i in 0..KINDS {
            d.ops[i] = self.ops[i].saturating_sub(earlier.ops[i]);
            d.bytes[i] = self.bytes[i].saturating_sub(earlier.bytes[i]);
        }
        d
    }
}

impl Counters {
    /// Counters of a thread that records the kinds in `kinds`.
    pub fn for_kinds(kinds: &[OpKind]) -> Counters {
        let mut c = Counters::default();
        for k in kinds {
            c.live[k.index()] = Some(LiveCounts::default());
        }
        c
    }

    /// Reads the counters (any thread).
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for i in 0..KINDS {
            t.ops[i] = self.ops[i].load(Ordering::Relaxed);
            t.bytes[i] = self.bytes[i].load(Ordering::Relaxed);
        }
        t
    }
}

/// Summarises a histogram; `None` when empty.
pub fn latency(h: &Histogram<u64>) -> Option<Latency> {
    if h.is_empty() {
        return None;
    }
    Some(Latency {
        mean_ns: h.mean(),
        min_ns: h.min(),
        max_ns: h.max(),
        percentiles: PERCENTILES
            .iter()
            .map(|&p| Percentile {
                p,
                lat_ns: h.value_at_quantile(p / 100.0),
            })
            .collect(),
        stdev_ns: Some(h.stdev()),
        histogram: encode(h),
    })
}

/// `h` in HdrHistogram's V2 compressed encoding, as base64 (what `HdrHistogram.decode` in
/// Python's hdrhistogram and `Histogram.fromString` in Java read); `None` if it fails to encode.
pub fn encode(h: &Histogram<u64>) -> Option<String> {
    use base64::Engine;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// One thread's statistics.
pub struct ThreadStats {
    counters: std::sync::Arc<Counters>,
    local: Totals,
    /// Operations and bytes that finished inside the window: the same operations as the
    /// latency counts, so a kind's count and its histogram's agree exactly (counters read by
    /// the harness at the window's edges would count the operations finished while it woke).
    pub window: Totals,
    /// Latency per kind (from scheduled start under a rate, else from submission).
    pub lat: [Option<LatencyCounts>; KINDS],
    /// Service time per kind, kept only under a rate.
    pub service: [Option<LatencyCounts>; KINDS],
    /// Commits served (log writers).
    pub commits: u64,
}

impl ThreadStats {
    /// Statistics for the kinds in `kinds`; service histograms only if `open_loop`.
    pub fn new(
        counters: std::sync::Arc<Counters>,
        kinds: &[OpKind],
        open_loop: bool,
    ) -> ThreadStats {
        let mut s = ThreadStats {
            counters,
            local: Totals::default(),
            window: Totals::default(),
            lat: Default::default(),
            service: Default::default(),
            commits: 0,
        };
        for k in kinds {
            s.lat[k.index()] = Some(LatencyCounts::default());
            if open_loop {
                s.service[k.index()] = Some(LatencyCounts::default());
            }
        }
        s
    }

    /// Counts one finished operation; records latencies if it finished inside the window.
    #[inline]
    pub fn record(
        &mut self,
        kind: OpKind,
        bytes: u64,
        lat_ns: u64,
        service_ns: u64,
        measured: bool,
    ) {
        let i = kind.index();
        self.local.ops[i] += 1;
        self.local.bytes[i] += bytes;
        self.counters.ops[i].store(self.local.ops[i], Ordering::Relaxed);
        self.counters.bytes[i].store(self.local.bytes[i], Ordering::Relaxed);
        if let Some(live) = &self.counters.live[i] {
            live.record(lat_ns);
        }
        if measured {
            self.window.ops[i] += 1;
            self.window.bytes[i] += bytes;
            if let Some(h) = &mut self.lat[i] {
                h.record(lat_ns);
            }
            if let Some(h) = &mut self.service[i] {
                h.record(service_ns);
            }
        }
    }
}
