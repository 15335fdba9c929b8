//! Tests of the `pareto` race, with a simulation on a real two-figure sweep of docs/studies.

use super::*;
use crate::verdict::simulation::{noise_sds, noise_sds_of, Kind, Rng};

/// innodb-doublewrite.md, the six cells' txn/s (higher is better) and data-device bytes
/// written per transaction (lower is better): ext4, xfs, zfs with the doublewrite buffer on
/// and off. The front: ext4 off (most txn/s) and xfs off (fewest bytes, by 0.03 %).
const INNODB: [(f64, f64); 6] = [
    (846.0, 110_628.0),
    (877.0, 55_957.0),
    (826.0, 111_393.0),
    (777.0, 55_938.0),
    (457.0, 114_106.0),
    (491.0, 59_429.0),
];

#[test]
fn race_pareto_keeps_the_front() {
    for (name, bytes_noise) in [
        ("every figure's noise", None),
        ("bytes' noise", Some(Kind::Bytes)),
    ] {
        pareto(name, &noise_sds_of(bytes_noise));
    }
}

/// Races INNODB on both figures, the txn/s noise from the whole table, the bytes' from `bytes`.
fn pareto(name: &str, bytes: &[f64]) {
    let (m, sds) = (RaceMethod::default(), noise_sds());
    let mut rng = Rng::new(21);
    let (trials, budget) = (400, 24);
    let (mut lost, mut exact, mut runs, mut survivors) = (0, 0, 0, 0);
    for _ in 0..trials {
        let sd: Vec<[f64; 2]> = INNODB
            .iter()
            .map(|_| [rng.pick(&sds), rng.pick(bytes)])
            .collect();
        let mut values = vec![[Vec::new(), Vec::new()]; INNODB.len()];
        let mut alive = [true; 6];
        for round in 1..=m.sequential.max_rounds {
            let n = alive.iter().filter(|a| **a).count();
            if runs_so_far(&values) + n > budget {
                break;
            }
            for i in (0..INNODB.len()).filter(|&i| alive[i]) {
                let (tps, bytes) = INNODB[i];
                values[i][0].extend(rng.lognormal(1, tps, sd[i][0]));
                values[i][1].extend(rng.lognormal(1, bytes, sd[i][1]));
            }
            let cells: Vec<ParetoCell> = (0..6)
                .map(|i| ParetoCell {
                    values: [&values[i][0], &values[i][1]],
                    alive: alive[i],
                    safe: true,
                })
                .collect();
            for d in pareto_round(&cells, [Better::Higher, Better::Lower], &m, round) {
                alive[d.cell] = false;
            }
        }
        let cells: Vec<ParetoCell> = (0..6)
            .map(|i| ParetoCell {
                values: [&values[i][0], &values[i][1]],
                alive: alive[i],
                safe: true,
            })
            .collect();
        let front = pareto_front(&cells);
        lost += usize::from(!front.contains(&1) || !front.contains(&3));
        exact += usize::from(front == [1, 3]);
        survivors += front.len();
        runs += runs_so_far(&values);
    }
    let pct = |k: usize| k as f64 * 100.0 / trials as f64;
    eprintln!(
        "innodb-doublewrite pareto (txn/s, dev bytes/txn; bytes with {name}) within {budget} runs: a front cell dropped {:.1}%, \
         front exact {:.1}%, mean survivors {:.2} of 6, mean runs {:.1}",
        pct(lost), pct(exact), survivors as f64 / trials as f64, runs as f64 / trials as f64
    );
    assert!(pct(lost) <= 2.0);
}

fn runs_so_far(values: &[[Vec<f64>; 2]]) -> usize {
    values.iter().map(|v| v[0].len()).sum()
}

#[test]
fn race_pareto_known_cases() {
    let m = RaceMethod::default();
    let fast = ([1000.0, 1010.0, 990.0], [50.0, 51.0, 49.0]);
    let slow_big = ([500.0, 505.0, 495.0], [100.0, 101.0, 99.0]);
    let slow_small = ([500.0, 505.0, 495.0], [25.0, 25.5, 24.5]);
    let cells = [fast, slow_big, slow_small].map(|(t, b)| (t, b));
    let cells: Vec<ParetoCell> = cells
        .iter()
        .map(|(t, b)| ParetoCell {
            values: [t, b],
            alive: true,
            safe: true,
        })
        .collect();
    let drops = pareto_round(&cells, [Better::Higher, Better::Lower], &m, 3);
    assert_eq!(
        drops
            .iter()
            .map(|d| (d.cell, d.against, d.bounds.len()))
            .collect::<Vec<_>>(),
        [(1, 0, 2)]
    );
    assert_eq!(pareto_front(&cells), [0, 1, 2]);
}
