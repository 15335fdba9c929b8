//! What the simulations of the sequential verdicts and the race draw from: run-to-run noise as
//! this project measured it, and a seeded generator.
//!
//! Two sources of noise:
//!
//! * **Shared machine** ([`noise_sds`]): each entry of [`RANGES`] is one cell's `[min–max]` over
//!   its repetitions in a table of docs/studies, turned into the standard deviation of
//!   `ln(value)` by the expected range of normal samples: `ln(max / min) / d(n)`,
//!   `d(2) = 1.128`, `d(3) = 1.693`. Most of those studies ran beside other work.
//! * **Quiet machine** ([`quiet_noise_sds`]): the run records committed under
//!   docs/studies/records whose runs the disturbed-run rule let through, read at test time:
//!   what `compare` keeps as results since runs disturbed by other work are redone.
//!
//! A synthetic cell draws its noise from one of them, uniformly.

use super::SplitMix64;
use std::path::{Path, PathBuf};

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

/// The figures whose run-to-run noise [`quiet_noise_sds`] takes from a record's `summary`:
/// rates, CPU per operation or transaction, device bytes per operation or transaction (the
/// kinds of [`RANGES`]).
const QUIET_FIGURES: [&str; 8] = [
    "read_iops",
    "write_iops",
    "tps",
    "cpu_us_per_op",
    "cpu_us_per_txn",
    "device_write_bytes_per_op",
    "device_write_bytes_per_txn",
    "device_read_bytes_per_txn",
];

/// Fewest results of a cell for its spread to count.
const QUIET_MIN_RUNS: usize = 3;

/// The standard deviations of `ln(value)` over the results of every cell of every study under
/// docs/studies/records (`<study>/runs/<cell>/rep-N.json.gz`) with at least
/// [`QUIET_MIN_RUNS`] results: one per cell and figure of [`QUIET_FIGURES`] the records have,
/// each the sample standard deviation divided by `c4(n)`, so that it estimates the standard
/// deviation without the small-sample bias (`c4(3) = 0.886`). A run `compare` redid because it
/// was disturbed (`rep-N.disturbed-K`, or a record whose `disturbed` is set) is not a result.
pub(crate) fn quiet_noise_sds() -> Vec<f64> {
    let records = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/studies/records");
    let mut sds = Vec::new();
    for cell in cell_dirs(&records) {
        let runs: Vec<serde_json::Value> = std::fs::read_dir(&cell)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                name.starts_with("rep-")
                    && name.ends_with(".json.gz")
                    && !name.contains("disturbed")
            })
            .map(|p| read_gz_json(&p))
            .filter(|r| r["disturbed"].is_null())
            .collect();
        if runs.len() < QUIET_MIN_RUNS {
            continue;
        }
        for figure in QUIET_FIGURES {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|r| r["summary"][figure].as_f64())
                .collect();
            if values.len() == runs.len() {
                let stats = super::sequential::LogStats::of(&values);
                sds.push(stats.var.sqrt() / c4(stats.n));
            }
        }
    }
    assert!(
        sds.len() >= 20,
        "too few quiet cells in {}: {}",
        records.display(),
        sds.len()
    );
    sds
}

/// The cell directories `<records>/<study>/runs/<cell>`, sorted.
fn cell_dirs(records: &Path) -> Vec<PathBuf> {
    let dirs = |p: &Path| -> Vec<PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        v
    };
    dirs(records)
        .iter()
        .flat_map(|study| dirs(&study.join("runs")))
        .collect()
}

fn read_gz_json(path: &Path) -> serde_json::Value {
    let file = std::fs::File::open(path).unwrap();
    serde_json::from_reader(flate2::read::GzDecoder::new(file))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `E[s] / sigma` for `n` normal values: `sqrt(2 / (n - 1)) Γ(n / 2) / Γ((n - 1) / 2)`.
fn c4(n: usize) -> f64 {
    // Γ(n/2) / Γ((n-1)/2) by the recurrence from Γ(1) = 1 and Γ(1/2) = sqrt(pi).
    let (mut num, mut den) = if n % 2 == 0 {
        (1.0, std::f64::consts::PI.sqrt())
    } else {
        (std::f64::consts::PI.sqrt(), 1.0)
    };
    let (mut a, mut b) = if n % 2 == 0 { (1.0, 0.5) } else { (0.5, 1.0) };
    while a < n as f64 / 2.0 - 0.25 {
        num *= a;
        a += 1.0;
    }
    while b < (n as f64 - 1.0) / 2.0 - 0.25 {
        den *= b;
        b += 1.0;
    }
    (2.0 / (n as f64 - 1.0)).sqrt() * num / den
}

/// A class of true ratios: `(name, share, smallest ratio, largest)`; a ratio is drawn with
/// `|ln ratio|` uniform between the two, either sign.
pub(crate) type Class = (&'static str, f64, f64, f64);

/// The ratios docs/studies reported (the 343 "×r" marks in their tables, every figure), by
/// size: 21 within 0.5 % (taken as exactly 1: A/A), 63 from 0.5 % to 10 %, 32 from 10 to
/// 20 %, 114 from 20 % to 2x, 111 beyond 2x (taken up to 20x).
pub(crate) const STUDIES_MIX: [Class; 5] = [
    ("same", 21.0, 1.0, 1.0),
    ("near", 63.0, 1.005, 1.10),
    ("medium", 32.0, 1.10, 1.20),
    ("large", 114.0, 1.20, 2.0),
    ("huge", 111.0, 2.0, 20.0),
];

/// A third each: A/A, around the 5 % min effect, large.
pub(crate) const THIRDS_MIX: [Class; 3] = [
    ("same", 1.0, 1.0, 1.0),
    ("near", 1.0, 1.02, 1.10),
    ("large", 1.0, 1.2, 3.0),
];

/// A class of `mix` drawn by share, and a log ratio of it: `(class index, ln ratio)`.
pub(crate) fn draw(rng: &mut Rng, mix: &[Class]) -> (usize, f64) {
    let mut u = rng.uniform() * mix.iter().map(|c| c.1).sum::<f64>();
    let i = mix
        .iter()
        .position(|c| {
            u -= c.1;
            u < 0.0
        })
        .unwrap_or(mix.len() - 1);
    let (lo, hi) = (mix[i].2.ln(), mix[i].3.ln());
    let size = lo + (hi - lo) * rng.uniform();
    (i, if rng.uniform() < 0.5 { size } else { -size })
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

#[test]
fn simulation_c4_and_quiet_noise() {
    let close = |a: f64, b: f64| (a - b).abs() < 1e-4;
    assert!(close(c4(2), 0.7979) && close(c4(3), 0.8862) && close(c4(8), 0.9650));
    let sds = quiet_noise_sds();
    let mut sorted = sds.clone();
    sorted.sort_by(f64::total_cmp);
    eprintln!(
        "quiet noise: {} cell figures, median sd {:.3}, largest {:.3}",
        sds.len(),
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1]
    );
    assert!(sds.iter().all(|s| s.is_finite() && *s >= 0.0));
}
