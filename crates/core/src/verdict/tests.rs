//! Tests of the verdicts, including simulated false-alarm and power rates.

use super::*;
use proptest::prelude::*;
use Verdict::{Better as B, NoSignificantDifference as Nsd, TooFewSamples as Few, Worse as W};

fn method(resamples: usize) -> Method {
    Method {
        resamples,
        ..Method::default()
    }
}

/// Normal sample (Box-Muller) with mean `mu` and coefficient of variation `cv`.
fn normal_sample(rng: &mut SplitMix64, n: usize, mu: f64, cv: f64) -> Vec<f64> {
    let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut z = || (-2.0 * (1.0 - unit()).ln()).sqrt() * (std::f64::consts::TAU * unit()).cos();
    (0..n).map(|_| mu * (1.0 + cv * z())).collect()
}

/// Over `trials` pairs of samples, baseline mean 1 and cell mean `1 + effect %`, both with a
/// coefficient of variation of `cv %`: (% Better for a Higher-is-better figure, % any verdict).
fn simulate(n: usize, cv: u32, effect: u32, trials: usize, m: &Method) -> (f64, f64) {
    let mut rng = SplitMix64(n as u64 * 1_000_003 + u64::from(cv * 100 + effect * 10_000));
    let (cv, effect) = (f64::from(cv) / 100.0, f64::from(effect) / 100.0);
    let (mut right, mut any) = (0, 0);
    for _ in 0..trials {
        let base = normal_sample(&mut rng, n, 1.0, cv);
        let cell = normal_sample(&mut rng, n, 1.0 + effect, cv);
        let v = compare(&cell, &base, Better::Higher, m).verdict;
        right += usize::from(v == B);
        any += usize::from(matches!(v, B | W));
    }
    let pct = |k: usize| k as f64 * 100.0 / trials as f64;
    (pct(right), pct(any))
}

#[test]
fn verdict_median_and_spread() {
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[f64::NAN, 5.0, f64::INFINITY]), Some(5.0));
    assert_eq!(median(&[f64::MAX, f64::MAX]), Some(f64::MAX));
    assert_eq!(spread(&[2.0, f64::NAN, -1.0, 7.0]), Some((-1.0, 7.0)));
    assert_eq!(spread(&[f64::NAN]), None);
}

#[test]
fn verdict_mann_whitney_known_values() {
    let p = |a: &[f64], b: &[f64]| mann_whitney_p(a, b).unwrap();
    let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
    // m = n = 3: 20 arrangements, the most extreme two-sided p is 2/20; U = 1 gives 4/20.
    assert!(close(p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 0.1));
    assert!(close(p(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]), 0.2));
    let five = [1.0, 2.0, 3.0, 4.0, 5.0];
    assert!(close(p(&five, &five.map(|x| x + 5.0)), 2.0 / 252.0));
    // Ties: enumeration of the 20 splits of the mid-ranks gives 6/20.
    assert!(close(p(&[1.0, 2.0, 2.0], &[2.0, 3.0, 4.0]), 0.3));
    assert_eq!(p(&[1.0, 1.0, 1.0], &[1.0, 1.0]), 1.0);
    assert_eq!(mann_whitney_p(&[], &[1.0]), None);
    assert_eq!(mann_whitney_p(&[f64::NAN], &[1.0]), None);
    // Exact values by enumerating all C(24, 12) splits; the normal approximation is close.
    let a: Vec<f64> = (0..12).map(|i| f64::from(i) * 2.0).collect();
    let b: Vec<f64> = a.iter().map(|x| x + 7.0).collect();
    let quarter = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| (x / 4.0).floor()).collect() };
    let (at, bt) = (quarter(&a), quarter(&b));
    let cases = [
        (&a, &b, 0.038_721_138_869_207_25),
        (&at, &bt, 0.074_940_203_153_960_05),
    ];
    for (a, b, want) in cases {
        let (exact, approx) = (p(a, b), rank_sum_p(a, b, 0).unwrap());
        assert!(
            close(exact, want) && (exact - approx).abs() < 0.01,
            "{exact} {approx}"
        );
    }
    assert!(p(&[1.0; 30], &[2.0; 30]) < 1e-10);
}

#[test]
fn verdict_known_cases() {
    let m = Method::default();
    let v = |c: &[f64], b: &[f64], better, m: &Method| compare(c, b, better, m).verdict;
    let base = [1000.0, 1040.0, 980.0, 1010.0, 995.0];
    let fast = [1500.0, 1480.0, 1530.0, 1510.0, 1490.0];
    let c = compare(&fast, &base, Better::Higher, &m);
    assert_eq!((c.verdict, c.n_cell, c.n_baseline), (B, 5, 5));
    assert!((c.ratio - 1.5).abs() < 1e-12 && c.p_value.unwrap() < 0.01);
    assert!(c.ci_low > 1.05 && c.ci_low <= c.ratio && c.ratio <= c.ci_high);
    assert_eq!(v(&fast, &base, Better::Lower, &m), W);
    assert_eq!(v(&base, &base, Better::Higher, &m), Nsd);
    // 3 % apart and clearly separated: inside the 5 % min effect, unless it is lowered.
    let tight = [1000.0, 1001.0, 1002.0, 1003.0, 1004.0];
    let near = tight.map(|x| x * 1.03);
    assert_eq!(v(&near, &tight, Better::Higher, &m), Nsd);
    let mut m1 = m;
    m1.min_effect = 0.01;
    assert_eq!(v(&near, &tight, Better::Higher, &m1), B);
    // 6 % apart: with 5 per side the interval need only exclude 1; with 3, clear 5 % too.
    let (lo5, hi5) = (
        [1.0, 1.005, 1.01, 1.015, 1.02],
        [1.06, 1.065, 1.07, 1.075, 1.08],
    );
    assert_eq!(v(&hi5, &lo5, Better::Higher, &m), B);
    assert_eq!(
        v(&[1.06, 1.07, 1.08], &[1.0, 1.01, 1.02], Better::Higher, &m),
        Nsd
    );
    // n = 3: the interval is [min/max, max/min]; a 0.5x cell is Worse for IOPS.
    let c = compare(&[48.0, 47.0, 50.0], &[97.0, 96.0, 99.0], Better::Higher, &m);
    assert_eq!((c.verdict, c.p_value), (W, Some(0.1)));
    assert!((c.ci_low - 47.0 / 99.0).abs() < 1e-12 && (c.ci_high - 50.0 / 96.0).abs() < 1e-12);
    // Two per side: interval reported, no verdict. One per side: no interval.
    let two = compare(&[2000.0, 2100.0], &[1000.0, 1100.0], Better::Higher, &m);
    assert!(two.verdict == Few && two.ci_low.is_finite() && two.ci_high.is_finite());
    let one = compare(&[2e3], &[1e3, f64::NAN, -3.0, 0.0], Better::Higher, &m);
    assert_eq!((one.verdict, one.ratio, one.n_baseline), (Few, 2.0, 1));
    assert!(one.ci_low.is_nan() && one.ci_high.is_nan());
    assert!(compare(&[], &[], Better::Lower, &m).ratio.is_nan());
}

#[test]
fn verdict_serde_round_trip() {
    let c = compare(&[1.0], &[], Better::Higher, &Method::default());
    let json = serde_json::to_string(&c).unwrap();
    assert!(
        json.contains(r#""verdict":"too_few_samples","ratio":null"#),
        "{json}"
    );
    let back: Comparison = serde_json::from_str(&json).unwrap();
    assert!(back.ratio.is_nan() && back.verdict == c.verdict && back.p_value.is_none());
    let ok = compare(
        &[2.0, 2.1, 2.2],
        &[1.0, 1.2],
        Better::Higher,
        &Method::default(),
    );
    let back: Comparison = serde_json::from_str(&serde_json::to_string(&ok).unwrap()).unwrap();
    assert_eq!(back, ok);
}

#[test]
fn verdict_simulated_false_positive_rate() {
    for (n, cv) in [(3, 5), (3, 15), (5, 5), (5, 15), (10, 5), (10, 15)] {
        let (_, pct) = simulate(n, cv, 0, 1000, &method(100));
        println!("A/A n={n:2} cv={cv:2}%: false verdicts {pct:4.1}%");
        assert!(pct <= 10.0, "n={n} cv={cv}: {pct}");
    }
}

#[test]
fn verdict_simulated_power() {
    // (n, CV %, effect %, floor %); the release-mode table in docs/verdicts.md has them all.
    for (n, cv, effect, floor) in [(3, 10, 50, 80.0), (3, 5, 20, 60.0), (5, 5, 20, 90.0)] {
        let (pct, _) = simulate(n, cv, effect, 500, &method(100));
        println!("power n={n:2} cv={cv:2}% effect={effect:2}%: right verdict {pct:4.1}%");
        assert!(pct >= floor, "n={n} cv={cv} effect={effect}: {pct}");
    }
}

/// The table in docs/verdicts.md, with the default method:
/// `cargo test --release -p bakeoff-core verdict_table -- --ignored --nocapture`.
#[test]
#[ignore = "slow; regenerates the table in docs/verdicts.md"]
fn verdict_table() {
    println!("| n | CV | A/A: any verdict | +10 % | +20 % | +50 % |\n|--|--|--|--|--|--|");
    for (n, cv) in [3, 4, 5, 10]
        .into_iter()
        .flat_map(|n| [(n, 5), (n, 10), (n, 15)])
    {
        let rate = |e| simulate(n, cv, e, 2000, &Method::default());
        let [a, b, c, d] = [rate(0).1, rate(10).0, rate(20).0, rate(50).0];
        println!("| {n} | {cv} % | {a:.1} % | {b:.1} % | {c:.1} % | {d:.1} % |");
    }
}

proptest! {
    #[test]
    fn verdict_compare_never_panics(
        cell in prop::collection::vec(any::<f64>(), 0..12),
        base in prop::collection::vec(any::<f64>(), 0..12),
        min_effect in any::<f64>(), confidence in any::<f64>(), resamples in 0usize..50,
    ) {
        let m = Method { min_effect, confidence, resamples, seed: 7 };
        let c = compare(&cell, &base, Better::Lower, &m);
        prop_assert!(c.n_cell <= cell.len() && c.n_baseline <= base.len());
        prop_assert!(c.p_value.is_none_or(|p| (0.0..=1.0).contains(&p)));
        let _ = (median(&cell), spread(&base), mann_whitney_p(&cell, &base));
    }

    #[test]
    fn verdict_is_symmetric(
        cell in prop::collection::vec(0.5f64..2.0, 0..9),
        base in prop::collection::vec(0.5f64..2.0, 0..9),
        better in prop_oneof![Just(Better::Higher), Just(Better::Lower)],
    ) {
        let m = method(200);
        let (ab, ba) = (compare(&cell, &base, better, &m), compare(&base, &cell, better, &m));
        let flipped = match ab.verdict { B => W, W => B, v => v };
        prop_assert_eq!(ba.verdict, flipped);
        prop_assert_eq!(ab.p_value, ba.p_value);
        prop_assert!(ab.ci_low.is_nan() || (ab.ci_low * ba.ci_high - 1.0).abs() < 1e-9);
    }
}
