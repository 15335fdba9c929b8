//! Tests of the sequential verdicts, with simulations on the noise docs/studies measured
//! (`cargo test -p bakeoff-core sequential -- --nocapture` prints the rates docs/verdicts.md
//! quotes).

use super::*;
use crate::verdict::simulation::{
    draw, noise_sds, quiet_noise_sds, Class, Rng, STUDIES_MIX, THIRDS_MIX,
};
use crate::verdict::{compare, Method, Verdict};
use proptest::prelude::*;
use Decision::{Better as B, Equivalent as Eq, Undecided as U, Worse as W};

/// One simulated cell: its class, the fixed design's verdict on all `max_rounds` values, the
/// sequential answer and the rounds it ran.
struct Outcome {
    class: usize,
    fixed: Verdict,
    decision: Decision,
    rounds: usize,
}

impl Outcome {
    /// Same answer: Better and Worse match; no significant difference matches equivalent and
    /// undecided (at the last round or futile).
    fn agrees(&self) -> bool {
        matches!(
            (self.fixed, self.decision),
            (Verdict::Better, B) | (Verdict::Worse, W) | (Verdict::NoSignificantDifference, Eq | U)
        )
    }
}

/// A study of a baseline and `cells` cells, every side's noise drawn from the table, values
/// drawn once (the fixed design judges all of them, the sequential one stops on a prefix):
/// the cells' outcomes and the runs used (the baseline runs while any cell does).
fn study(
    rng: &mut Rng,
    sds: &[f64],
    mix: &[Class],
    cells: usize,
    m: &SequentialMethod,
) -> (Vec<Outcome>, usize) {
    let n = m.max_rounds;
    let sd = rng.pick(sds);
    let base = rng.lognormal(n, 1000.0, sd);
    let mut outcomes = Vec::new();
    for _ in 0..cells {
        let (class, log_ratio) = draw(rng, mix);
        let sd = rng.pick(sds);
        let cell = rng.lognormal(n, 1000.0 * log_ratio.exp(), sd);
        let fixed = compare(&cell, &base, Better::Higher, &Method::default()).verdict;
        let mut rounds = m.min_rounds;
        let mut look = decide(&cell[..rounds], &base[..rounds], Better::Higher, m);
        while !look.finished() && rounds < n {
            rounds += 1;
            look = decide(&cell[..rounds], &base[..rounds], Better::Higher, m);
        }
        let decision = look.decision;
        outcomes.push(Outcome {
            class,
            fixed,
            decision,
            rounds,
        });
    }
    let runs = outcomes.iter().map(|o| o.rounds).max().unwrap_or(0)
        + outcomes.iter().map(|o| o.rounds).sum::<usize>();
    (outcomes, runs)
}

fn pct(k: usize, n: usize) -> f64 {
    k as f64 * 100.0 / n.max(1) as f64
}

/// Simulates `studies` studies, each side's noise drawn from `sds`: (% same answer as 10 fixed
/// runs, % of the fixed design's runs).
fn agreement(
    seed: u64,
    sds: &[f64],
    (mix, cells): (&[Class], usize),
    studies: usize,
    m: &SequentialMethod,
) -> (f64, f64) {
    let mut rng = Rng::new(seed);
    let (mut all, mut runs) = (Vec::new(), 0);
    for _ in 0..studies {
        let (o, r) = study(&mut rng, sds, mix, cells, m);
        all.extend(o);
        runs += r;
    }
    for (i, class) in mix.iter().enumerate() {
        let of: Vec<&Outcome> = all.iter().filter(|o| o.class == i).collect();
        let count =
            |f: &dyn Fn(&Outcome) -> bool| pct(of.iter().filter(|o| f(o)).count(), of.len());
        let rounds = of.iter().map(|o| o.rounds).sum::<usize>() as f64 / of.len().max(1) as f64;
        eprintln!(
            "  {:6}: {:4} cells, same answer {:5.1}%, fixed better/worse {:5.1}%, sequential {:5.1}%, \
             equivalent {:4.1}%, mean rounds {rounds:.1}",
            class.0,
            of.len(),
            count(&|o| o.agrees()),
            count(&|o| matches!(o.fixed, Verdict::Better | Verdict::Worse)),
            count(&|o| matches!(o.decision, B | W)),
            count(&|o| o.decision == Eq),
        );
    }
    let same = pct(all.iter().filter(|o| o.agrees()).count(), all.len());
    (same, pct(runs, studies * (cells + 1) * 10))
}

/// A simulated case: name, mix, cells a study, studies, seed, and what is asserted (least %
/// same answer, most % runs).
type Case = (
    &'static str,
    &'static [Class],
    usize,
    usize,
    u64,
    Option<(f64, f64)>,
);

/// Runs `cases` with noise from `sds` and asserts their bounds.
fn check_cases(noise: &str, sds: &[f64], cases: &[Case]) {
    for &(name, mix, cells, studies, seed, bound) in cases {
        eprintln!("until decided, {noise}, {name} + baseline, {studies} studies:");
        let m = SequentialMethod::default();
        let (same, runs) = agreement(seed, sds, (mix, cells), studies, &m);
        eprintln!(
            "  all: same answer as 10 fixed runs {same:.1}%, runs {runs:.1}% of the fixed design's"
        );
        if let Some((min_same, max_runs)) = bound {
            assert!(
                same >= min_same && runs <= max_runs,
                "{noise}, {name}: {same} {runs}"
            );
        }
    }
}

#[test]
fn sequential_agrees_with_ten_fixed_runs_in_half_the_runs() {
    // The targets: 95 % the same answer as 10 fixed runs with at most 50 % of their runs, on
    // the noise of runs the disturbed-run rule lets through (the committed quiet records). They
    // hold with a margin there (96.6-97.7 % and 42.7-48.3 % over four seeds).
    let quiet: [Case; 2] = [
        (
            "studies' ratios, 1 cell",
            &STUDIES_MIX,
            1,
            1500,
            11,
            Some((95.0, 50.0)),
        ),
        (
            "studies' ratios, 3 cells",
            &STUDIES_MIX,
            3,
            500,
            13,
            Some((95.0, 50.0)),
        ),
    ];
    check_cases("quiet machine", &quiet_noise_sds(), &quiet);
    // On the shared machine's noise (docs/studies' tables) the same answer is 95 % give or take
    // a point over seeds (94.3-95.7 % for 1 cell: `sequential_design_choices`), so 94 % is
    // asserted; with 3 cells the baseline runs as long as the slowest cell and the runs are
    // about 51 % (docs/verdicts.md says so).
    let shared: [Case; 3] = [
        (
            "studies' ratios, 1 cell",
            &STUDIES_MIX,
            1,
            1500,
            11,
            Some((94.0, 50.0)),
        ),
        (
            "studies' ratios, 3 cells",
            &STUDIES_MIX,
            3,
            500,
            13,
            Some((94.0, 53.0)),
        ),
        ("thirds, 1 cell", &THIRDS_MIX, 1, 400, 17, None),
    ];
    check_cases("shared machine", &noise_sds(), &shared);
}

#[test]
fn sequential_aa_false_verdicts_under_optional_stopping() {
    // Stop at the first decided look (no futility: every look is taken), identical setups.
    for (noise, sds) in [("shared", noise_sds()), ("quiet", quiet_noise_sds())] {
        for futility in [0.0, SequentialMethod::default().futility] {
            let m = SequentialMethod {
                futility,
                ..SequentialMethod::default()
            };
            let (wrong, equivalent) = aa_rates(&sds, &m, 2000);
            eprintln!(
                "A/A, {noise} machine, futility {futility}: false better/worse {wrong:.1}%, equivalent {equivalent:.1}%"
            );
            assert!(wrong <= 5.0, "{noise} {futility}: {wrong}");
        }
    }
}

/// Identical setups, each stopped at its first finished look: (% better or worse, % equivalent).
fn aa_rates(sds: &[f64], m: &SequentialMethod, trials: usize) -> (f64, f64) {
    let mut rng = Rng::new(99);
    let (mut wrong, mut equivalent) = (0, 0);
    for _ in 0..trials {
        let sd = rng.pick(sds);
        let (cell, base) = (rng.lognormal(10, 50.0, sd), rng.lognormal(10, 50.0, sd));
        let look = (m.min_rounds..=m.max_rounds)
            .map(|r| decide(&cell[..r], &base[..r], Better::Lower, m))
            .find(|c| c.finished())
            .unwrap_or_else(|| decide(&cell, &base, Better::Lower, m));
        wrong += usize::from(matches!(look.decision, B | W));
        equivalent += usize::from(look.decision == Eq);
    }
    (pct(wrong, trials), pct(equivalent, trials))
}

#[test]
fn sequential_known_cases() {
    let m = SequentialMethod::default();
    let d = |c: &[f64], b: &[f64], better| decide(c, b, better, &m);
    let base = [1000.0, 1010.0, 990.0];
    let fast = [1500.0, 1510.0, 1490.0];
    let c = d(&fast, &base, Better::Higher);
    assert_eq!((c.decision, c.n_cell, c.n_baseline), (B, 3, 3));
    assert!(c.low > 1.0 && c.low < c.ratio && c.ratio < c.high && (c.ratio - 1.5).abs() < 0.01);
    assert_eq!(d(&fast, &base, Better::Lower).decision, W);
    // Tight and equal: equivalent (the interval inside ±5 %) after four rounds; with three,
    // the noise floor's interval is still ±5 %.
    let tight = [1000.0, 1001.0, 999.0, 1000.5];
    assert_eq!(d(&tight[..3], &tight[..3], Better::Higher).decision, U);
    assert_eq!(
        d(&tight, &tight.map(|x| x * 1.01), Better::Higher).decision,
        Eq
    );
    // 3 % apart, tight, at the last look: inside the min effect, so equivalent, not better.
    let ten: Vec<f64> = (0..10).map(|i| 1000.0 + f64::from(i)).collect();
    let ten_up: Vec<f64> = ten.iter().map(|x| x * 1.03).collect();
    assert_eq!(d(&ten_up, &ten, Better::Higher).decision, Eq);
    assert_eq!(d(&ten_up[..4], &ten[..4], Better::Higher).decision, U);
    // Noisy and 10 % apart: undecided, and hopeless by round 10, so futile.
    let noisy = d(
        &[900.0, 1300.0, 1000.0],
        &[1000.0, 700.0, 1200.0],
        Better::Higher,
    );
    assert!(noisy.decision == U && noisy.futile && noisy.finished());
    let no_futility = SequentialMethod { futility: 0.0, ..m };
    assert!(
        !decide(
            &[900.0, 1300.0, 1000.0],
            &[1000.0, 700.0, 1200.0],
            Better::Higher,
            &no_futility
        )
        .futile
    );
    // Below min_rounds: undecided, interval shown; one value: no interval.
    let two = d(&fast[..2], &base[..2], Better::Higher);
    assert!(two.decision == U && !two.futile && two.low.is_finite());
    let one = d(&[2.0], &[1.0, f64::NAN, -1.0, 0.0], Better::Higher);
    assert_eq!((one.decision, one.ratio, one.n_baseline), (U, 2.0, 1));
    assert!(one.low.is_nan() && d(&[], &[], Better::Lower).ratio.is_nan());
    // The noise floor: identical values do not give a zero-width interval.
    let same = d(&[5.0; 4], &[5.0; 4], Better::Higher);
    assert!(same.decision == Eq && same.low < 1.0 && same.high > 1.0);
}

#[test]
fn sequential_alpha_is_spent_over_the_looks() {
    let m = SequentialMethod::default();
    assert_eq!(m.looks(), 8);
    let total: f64 = (m.min_rounds..=m.max_rounds).map(|r| m.alpha_at(r)).sum();
    assert!((total - m.alpha).abs() < 1e-12 && (m.alpha_at(10) - 0.025).abs() < 1e-12);
    let even = SequentialMethod {
        last_share: 0.0,
        ..m
    };
    assert!((even.alpha_at(3) - 0.05 / 8.0).abs() < 1e-12);
    let odd = SequentialMethod {
        alpha: 7.0,
        min_rounds: 0,
        max_rounds: 1,
        min_effect: f64::NAN,
        ..m
    };
    let s = odd.sanitized();
    assert_eq!(
        (s.alpha, s.min_rounds, s.max_rounds, s.min_effect),
        (0.05, 2, 2, 0.0)
    );
    assert_eq!(odd.alpha_at(2), 0.05);
}

#[test]
fn sequential_serde_round_trip() {
    let c = decide(
        &[2.0, 2.1, 2.2],
        &[1.0],
        Better::Higher,
        &SequentialMethod::default(),
    );
    let json = serde_json::to_string(&c).unwrap();
    assert!(
        json.contains(r#""decision":"undecided","ratio":"#) && json.contains(r#""low":null"#),
        "{json}"
    );
    let back: SequentialComparison = serde_json::from_str(&json).unwrap();
    assert!(back.low.is_nan() && back.decision == U && back.n_cell == 3);
    assert_eq!(serde_json::to_string(&Eq).unwrap(), r#""equivalent""#);
    let m = SequentialMethod::default();
    assert_eq!(
        serde_json::from_str::<SequentialMethod>(&serde_json::to_string(&m).unwrap()).unwrap(),
        m
    );
}

proptest! {
    #[test]
    fn sequential_decide_never_panics(
        cell in prop::collection::vec(any::<f64>(), 0..12),
        base in prop::collection::vec(any::<f64>(), 0..12),
        min_effect in any::<f64>(), alpha in any::<f64>(), floor in any::<f64>(),
        rounds in (0usize..6, 0usize..12), futility in any::<f64>(),
    ) {
        let m = SequentialMethod { min_effect, alpha, min_rounds: rounds.0, max_rounds: rounds.1,
            noise_floor: floor, futility, last_share: 0.5 };
        let c = decide(&cell, &base, Better::Lower, &m);
        prop_assert!(c.n_cell <= cell.len() && c.n_baseline <= base.len());
        prop_assert!(c.alpha_look > 0.0 && c.alpha_look < 1.0);
    }

    #[test]
    fn sequential_decide_is_symmetric(
        cell in prop::collection::vec(0.5f64..2.0, 0..9),
        base in prop::collection::vec(0.5f64..2.0, 0..9),
        better in prop_oneof![Just(Better::Higher), Just(Better::Lower)],
    ) {
        let m = SequentialMethod::default();
        let (ab, ba) = (decide(&cell, &base, better, &m), decide(&base, &cell, better, &m));
        let flipped = match ab.decision { B => W, W => B, d => d };
        prop_assert_eq!(ba.decision, flipped);
        prop_assert_eq!(ab.futile, ba.futile);
        prop_assert!(ab.low.is_nan() || (ab.low * ba.high - 1.0).abs() < 1e-9);
    }
}

/// Why a method for optional stopping: the fixed rule ([`compare`]) re-run after every round
/// from 3 to 10, stopping at its first better or worse, on identical setups.
/// `cargo test --release -p bakeoff-core sequential_repeated_fixed -- --ignored --nocapture`
#[test]
#[ignore = "slow; the 'why not re-run compare' line of docs/verdicts.md"]
fn sequential_repeated_fixed_test_is_not_valid() {
    let (sds, mut rng, trials) = (noise_sds(), Rng::new(99), 2000);
    let (mut at_ten, mut any_look) = (0, 0);
    for _ in 0..trials {
        let sd = rng.pick(&sds);
        let (cell, base) = (rng.lognormal(10, 50.0, sd), rng.lognormal(10, 50.0, sd));
        let says = |r: usize| {
            let v = compare(&cell[..r], &base[..r], Better::Lower, &Method::default()).verdict;
            matches!(v, Verdict::Better | Verdict::Worse)
        };
        at_ten += usize::from(says(10));
        any_look += usize::from((3..=10).any(says));
    }
    eprintln!(
        "A/A, fixed rule: false better/worse at 10 runs {:.1}%, at the first of rounds 3..=10 that says so {:.1}%",
        pct(at_ten, trials),
        pct(any_look, trials)
    );
}

/// The design choices of docs/verdicts.md: alpha spread evenly or half at the last look,
/// with and without futility, on the studies' ratios (1 cell and a baseline, 3 seeds).
/// `cargo test --release -p bakeoff-core sequential_design -- --ignored --nocapture`
#[test]
#[ignore = "slow; the design table of docs/verdicts.md"]
fn sequential_design_choices() {
    for (last_share, futility) in [(0.0, 0.0), (0.5, 0.0), (0.0, 0.1), (0.5, 0.1), (0.5, 0.2)] {
        let m = SequentialMethod {
            last_share,
            futility,
            ..SequentialMethod::default()
        };
        for seed in [100, 200, 300] {
            let (same, runs) = agreement(seed, &noise_sds(), (&STUDIES_MIX, 1), 1500, &m);
            eprintln!("last share {last_share}, futility {futility}, seed {seed}: same answer {same:.1}%, runs {runs:.1}%");
        }
    }
}
