//! What the simulations of the sequential verdicts and the race draw from: run-to-run noise as
//! this project measured it, and a seeded generator.
//!
//! Each entry of [`RANGES`] is one cell's `[min–max]` over its repetitions in a table of
//! docs/studies, turned into the standard deviation of `ln(value)` by the expected range of
//! normal samples: `ln(max / min) / d(n)`, `d(2) = 1.128`, `d(3) = 1.693`. A synthetic cell
//! draws its noise from these, uniformly.

use super::SplitMix64;

/// What a figure measures, to draw noise of its kind where a figure's kind matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Operations or transactions per second.
    Rate,
    /// Seconds a phase took.
    Time,
    /// CPU per operation.
    Cpu,
    /// Device bytes per transaction.
    Bytes,
}

use Kind::{Bytes, Cpu, Rate, Time};

/// `(min, max, repetitions, kind)` of one cell's figure; the comments name table and column.
#[rustfmt::skip]
pub(crate) const RANGES: [(f64, f64, u32, Kind); 52] = [
    // seed000.md, "The full comparison with findings" (shared machine): read IOPS, CPU µs/op
    // of raw, zfs, zfs tuned, ext4.
    (27_298.0, 30_110.0, 3, Rate), (2_936.0, 5_414.0, 3, Rate), (4_297.0, 11_345.0, 3, Rate),
    (11_541.0, 24_027.0, 3, Rate),
    (19.2, 25.5, 3, Cpu), (119.9, 136.8, 3, Cpu), (82.2, 105.0, 3, Cpu), (26.3, 30.2, 3, Cpu),
    // seed002.md, "The table" (PostgreSQL TPC-H, shared machine): total seconds of ext4, xfs,
    // zfs, zfs compression, zfs nochecksum, zfs recordsize=8k.
    (18.2, 24.8, 3, Time), (12.8, 21.3, 3, Time), (107.6, 131.0, 3, Time), (123.3, 164.2, 3, Time),
    (93.2, 113.2, 3, Time), (89.4, 116.4, 3, Time),
    // seed002.md, "SQLite's page size": total seconds at 4k, 8k, 16k, 64k pages.
    (22.7, 44.7, 3, Time), (26.8, 47.8, 3, Time), (36.0, 58.5, 3, Time), (59.5, 84.6, 3, Time),
    // seed003.md, the oltp table (shared machine): read IOPS, CPU µs/op of zfs, btrfs, ext4, xfs.
    (1_273.0, 1_606.0, 3, Rate), (1_606.0, 1_880.0, 3, Rate), (7_539.0, 11_066.0, 3, Rate),
    (8_606.0, 11_904.0, 3, Rate),
    (226.2, 301.5, 3, Cpu), (169.8, 202.6, 3, Cpu), (41.6, 63.8, 3, Cpu), (43.6, 60.4, 3, Cpu),
    // seed004-tpcc.md, "At each stack's maximum" (quiet machine): txn/s, CPU/txn (ms) of ZFS
    // base, ZFS tuned, ext4, xfs.
    (550.0, 694.0, 3, Rate), (686.0, 700.0, 3, Rate), (1_558.0, 1_950.0, 3, Rate),
    (1_407.0, 1_920.0, 3, Rate),
    (2.37, 2.91, 3, Cpu), (2.14, 2.43, 3, Cpu), (0.863, 1.01, 3, Cpu), (0.856, 1.08, 3, Cpu),
    // seed004-tpcc.md, "At one offered rate, 500 txn/s": CPU/txn (ms), dev B written/txn.
    (2.90, 3.23, 3, Cpu), (2.84, 2.96, 3, Cpu), (1.19, 1.41, 3, Cpu), (1.14, 1.54, 3, Cpu),
    (72_782.0, 81_699.0, 3, Bytes), (54_483.0, 54_842.0, 3, Bytes), (54_426.0, 55_698.0, 3, Bytes),
    (47_101.0, 53_317.0, 3, Bytes),
    // seed004-fileserving.md, the headline-point table: CPU µs/op of ZFS, ext4, xfs, btrfs.
    (135.7, 280.3, 3, Cpu), (53.1, 69.5, 3, Cpu), (42.4, 65.4, 3, Cpu), (61.4, 64.0, 3, Cpu),
    // innodb-doublewrite.md, the cost table (quiet machine, 2 runs): txn/s of the six cells.
    (811.0, 881.0, 2, Rate), (817.0, 938.0, 2, Rate), (753.0, 899.0, 2, Rate), (647.0, 906.0, 2, Rate),
    (410.0, 503.0, 2, Rate), (452.0, 530.0, 2, Rate),
];

/// The standard deviations of `ln(value)` of [`RANGES`] (of one kind, or all).
pub(crate) fn noise_sds_of(kind: Option<Kind>) -> Vec<f64> {
    RANGES
        .iter()
        .filter(|r| kind.is_none_or(|k| k == r.3))
        .map(|&(lo, hi, n, _)| (hi / lo).ln() / if n == 2 { 1.128 } else { 1.693 })
        .collect()
}

/// The standard deviations of `ln(value)` of all of [`RANGES`].
pub(crate) fn noise_sds() -> Vec<f64> {
    noise_sds_of(None)
}

/// A seeded source of uniform, normal and log-normal draws.
pub(crate) struct Rng(SplitMix64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(SplitMix64(seed))
    }

    /// Uniform in [0, 1).
    pub(crate) fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// One of `xs`, uniformly.
    pub(crate) fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.0.below(xs.len())]
    }

    /// `n` values with median `center` and log standard deviation `sd`.
    pub(crate) fn lognormal(&mut self, n: usize, center: f64, sd: f64) -> Vec<f64> {
        (0..n)
            .map(|_| center * (sd * self.normal()).exp())
            .collect()
    }
}
