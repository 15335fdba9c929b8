//! The TPC-C population generator without a database: row counts and the rules of clause
//! 4.3.3.1 for one and two warehouses, NURand's ranges, last names and constants.

use bakeoff_db::tpcc::populate::{CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER, ITEMS, ORDERS};
use bakeoff_db::tpcc::random::{last_name, nurand, valid_run_delta, NurandConstants, SYLLABLES};
use bakeoff_db::tpcc::{Population, Table};
use bakeoff_db::{Row, Value};
use std::collections::{BTreeMap, HashSet};

const NOW: i64 = 1_700_000_000_000_000;

fn int(row: &Row, i: usize) -> i64 {
    row[i]
        .int()
        .unwrap_or_else(|| panic!("column {i} of {row:?} is not an integer"))
}

fn text(row: &Row, i: usize) -> &str {
    row[i]
        .text()
        .unwrap_or_else(|| panic!("column {i} of {row:?} is not text"))
}

/// Counts rows per table over all warehouses, checking every row against `check`.
fn count_rows(
    p: &Population,
    warehouses: i64,
    mut check: impl FnMut(Table, &Row),
) -> BTreeMap<Table, i64> {
    let mut counts = BTreeMap::new();
    for table in Table::ALL {
        let ws: Vec<i64> = if table == Table::Item {
            vec![0]
        } else {
            (1..=warehouses).collect()
        };
        for w in ws {
            for row in p.rows(table, w) {
                assert_eq!(row.len(), table.columns().len(), "{table:?} row width");
                check(table, &row);
                *counts.entry(table).or_insert(0) += 1;
            }
        }
    }
    counts
}

fn fraction(hits: i64, of: i64) -> f64 {
    hits as f64 / of as f64
}

#[test]
fn one_and_two_warehouses_follow_the_population_rules() {
    let _turn = bakeoff_testkit::shared();
    for warehouses in [1, 2] {
        let p = Population::new(42, NOW);
        let mut bc = 0;
        let (mut item_original, mut stock_original) = (0, 0);
        let mut order_lines_announced = 0;
        let mut customers_per_district: BTreeMap<(i64, i64), HashSet<i64>> = BTreeMap::new();
        let mut new_orders: BTreeMap<(i64, i64), Vec<i64>> = BTreeMap::new();
        let counts = count_rows(&p, warehouses, |table, row| match table {
            Table::Item => {
                assert!(
                    (100..=10_000).contains(&int(row, 3)),
                    "price in cents {row:?}"
                );
                item_original += i64::from(text(row, 4).contains("ORIGINAL"));
            }
            Table::Warehouse => assert_eq!(int(row, 8), 30_000_000, "W_YTD 300,000.00"),
            Table::District => {
                assert_eq!(
                    (int(row, 9), int(row, 10)),
                    (3_000_000, 3001),
                    "D_YTD, D_NEXT_O_ID"
                );
                assert!((0..=2000).contains(&int(row, 8)), "D_TAX in basis points");
            }
            Table::Customer => {
                let (c, last) = (int(row, 0), text(row, 5));
                if c <= 1000 {
                    assert_eq!(last, last_name(c - 1), "customer {c} is named in order");
                }
                assert!(strip_syllables(last), "{last} is three syllables");
                bc += i64::from(text(row, 13) == "BC");
                assert_eq!(
                    (int(row, 16), int(row, 17)),
                    (-1000, 1000),
                    "balance, ytd payment"
                );
                assert!((300..=500).contains(&text(row, 20).len()));
            }
            Table::History => assert_eq!(int(row, 6), 1000, "H_AMOUNT 10.00"),
            Table::Orders => {
                let (o, d, w, c) = (int(row, 0), int(row, 1), int(row, 2), int(row, 3));
                assert!(
                    customers_per_district.entry((w, d)).or_default().insert(c),
                    "customer {c} ordered twice"
                );
                assert_eq!(
                    row[5] == Value::Null,
                    o >= FIRST_NEW_ORDER,
                    "carrier of order {o}"
                );
                let lines = int(row, 6);
                assert!((5..=15).contains(&lines));
                order_lines_announced += lines;
            }
            Table::NewOrder => new_orders
                .entry((int(row, 2), int(row, 1)))
                .or_default()
                .push(int(row, 0)),
            Table::OrderLine => {
                let undelivered = int(row, 0) >= FIRST_NEW_ORDER;
                assert_eq!(row[6] == Value::Null, undelivered, "delivery date {row:?}");
                assert_eq!(int(row, 8) == 0, !undelivered, "amount {row:?}");
                assert!((1..=ITEMS).contains(&int(row, 4)));
            }
            Table::Stock => {
                assert!((10..=100).contains(&int(row, 2)));
                stock_original += i64::from(text(row, 16).contains("ORIGINAL"));
            }
        });
        for table in Table::ALL {
            let expected =
                Population::expected_rows(table, warehouses).unwrap_or(order_lines_announced);
            assert_eq!(
                counts[&table], expected,
                "{table:?} with {warehouses} warehouses"
            );
        }
        assert_eq!(counts[&Table::Customer], 30_000 * warehouses);
        assert_eq!(counts[&Table::NewOrder], 9_000 * warehouses);
        assert_eq!(counts[&Table::Stock], 100_000 * warehouses);
        let orders = counts[&Table::Orders];
        assert!(
            counts[&Table::OrderLine] > 9 * orders && counts[&Table::OrderLine] < 11 * orders,
            "about 10 lines an order"
        );
        for (key, ids) in &customers_per_district {
            assert_eq!(
                ids.len() as i64,
                CUSTOMERS,
                "district {key:?}: a permutation of the customers"
            );
        }
        for (key, ids) in &new_orders {
            assert_eq!(
                ids,
                &(FIRST_NEW_ORDER..=ORDERS).collect::<Vec<_>>(),
                "new orders of {key:?}"
            );
        }
        assert_eq!(new_orders.len() as i64, DISTRICTS * warehouses);
        let near_tenth = |f: f64| (0.08..0.12).contains(&f);
        assert!(
            near_tenth(fraction(bc, counts[&Table::Customer])),
            "BC credit {bc}"
        );
        assert!(
            near_tenth(fraction(item_original, ITEMS)),
            "ORIGINAL items {item_original}"
        );
        assert!(
            near_tenth(fraction(stock_original, counts[&Table::Stock])),
            "ORIGINAL stock"
        );
    }
}

fn strip_syllables(name: &str) -> bool {
    let mut rest = name;
    for _ in 0..3 {
        match SYLLABLES.iter().find(|s| rest.starts_with(*s)) {
            Some(s) => rest = &rest[s.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[test]
fn the_population_is_reproducible_per_seed_and_warehouse() {
    let _turn = bakeoff_testkit::shared();
    let a = Population::new(7, NOW);
    let b = Population::new(7, NOW);
    let c = Population::new(8, NOW);
    for table in [
        Table::Customer,
        Table::Orders,
        Table::OrderLine,
        Table::Stock,
    ] {
        let first = |p: &Population, w| p.rows(table, w).take(500).collect::<Vec<_>>();
        assert_eq!(first(&a, 2), first(&b, 2), "{table:?}");
        assert_ne!(first(&a, 2), first(&c, 2), "{table:?} of another seed");
        assert_ne!(first(&a, 1), first(&a, 2), "{table:?} of another warehouse");
    }
}

#[test]
fn nurand_stays_in_range_and_favours_some_values() {
    let mut rng = fastrand::Rng::with_seed(3);
    for (a, x, y, c) in [
        (255, 0, 999, 123),
        (1023, 1, 3000, 259),
        (8191, 1, 100_000, 7911),
    ] {
        let mut seen = BTreeMap::new();
        for _ in 0..200_000 {
            let v = nurand(&mut rng, a, x, y, c);
            assert!((x..=y).contains(&v), "NURand({a},{x},{y}) gave {v}");
            *seen.entry(v).or_insert(0u32) += 1;
        }
        let uniform = 200_000.0 / (y - x + 1) as f64;
        let most = *seen.values().max().unwrap() as f64;
        assert!(
            most > 3.0 * uniform,
            "NURand({a},{x},{y}) is not skewed: {most} vs {uniform}"
        );
    }
}

#[test]
fn last_names_are_syllables_of_the_digits() {
    assert_eq!(last_name(0), "BARBARBAR");
    assert_eq!(last_name(371), "PRICALLYOUGHT");
    assert_eq!(last_name(999), "EINGEINGEING");
    assert_eq!(last_name(40), "BARPRESBAR");
}

#[test]
fn the_runs_last_name_constant_differs_from_the_loads_as_required() {
    for seed in 0..500 {
        let (load, run) = (
            NurandConstants::for_load(seed),
            NurandConstants::for_run(seed),
        );
        assert!(
            valid_run_delta(load.c_last, run.c_last),
            "seed {seed}: {load:?} {run:?}"
        );
        assert!((0..=255).contains(&run.c_last));
        assert_eq!((load.c_id, load.ol_i_id), (run.c_id, run.ol_i_id));
    }
    assert!(!valid_run_delta(10, 106), "96 apart is excluded");
    assert!(!valid_run_delta(122, 10), "112 apart is excluded");
    assert!(!valid_run_delta(0, 64) && valid_run_delta(0, 65) && valid_run_delta(200, 81));
}
