//! The initial population (clause 4.3.3.1) as pure row generators: per table and warehouse an
//! iterator of rows, reproducible from the seed, so warehouses load in parallel and tests check
//! the rules without a database.

use super::random::{
    a_string, data_with_original, last_name, n_string, nurand, seeded, state, stream, zip,
    NurandConstants,
};
use super::schema::Table;
use crate::backend::{Row, Value};
use fastrand::Rng;

/// Items (shared by all warehouses).
pub const ITEMS: i64 = 100_000;
/// Districts per warehouse.
pub const DISTRICTS: i64 = 10;
/// Customers per district.
pub const CUSTOMERS: i64 = 3_000;
/// Orders per district at load.
pub const ORDERS: i64 = 3_000;
/// The first order of a district still undelivered at load (the last 900 are new orders).
pub const FIRST_NEW_ORDER: i64 = 2_101;
/// Customers whose last names are numbered in order (the rest draw NURand).
const NAMED_IN_ORDER: i64 = 1_000;

/// W_YTD at load: 300,000.00 in cents.
pub const WAREHOUSE_YTD: i64 = 30_000_000;
/// D_YTD at load: 30,000.00 in cents.
pub const DISTRICT_YTD: i64 = 3_000_000;

/// A row iterator a loader thread can own.
pub type Rows = Box<dyn Iterator<Item = Row> + Send>;

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn text(v: impl Into<String>) -> Value {
    Value::Text(v.into())
}

/// Street, street, city, state and zip: the address of a warehouse, district or customer.
fn address(rng: &mut Rng) -> [Value; 5] {
    [
        text(a_string(rng, 10, 20)),
        text(a_string(rng, 10, 20)),
        text(a_string(rng, 10, 20)),
        text(state(rng)),
        text(zip(rng)),
    ]
}

/// The population of one seed: every table's rows, with dates at `now_us`.
#[derive(Clone, Copy, Debug)]
pub struct Population {
    seed: u64,
    now_us: i64,
    constants: NurandConstants,
}

impl Population {
    /// The population of `seed`, dated `now_us` (µs since the epoch).
    pub fn new(seed: u64, now_us: i64) -> Population {
        Population {
            seed,
            now_us,
            constants: NurandConstants::for_load(seed),
        }
    }

    /// The NURand constants the population used (C_LAST's matters to the run's).
    pub fn constants(&self) -> NurandConstants {
        self.constants
    }

    /// The rows the specification prescribes for `table` with `warehouses` warehouses
    /// (ORDER-LINE's depend on each order's line count: `None`).
    pub fn expected_rows(table: Table, warehouses: i64) -> Option<i64> {
        let per_district = |n: i64| Some(n * DISTRICTS * warehouses);
        match table {
            Table::Item => Some(ITEMS),
            Table::Warehouse => Some(warehouses),
            Table::District => per_district(1),
            Table::Customer | Table::History => per_district(CUSTOMERS),
            Table::Orders => per_district(ORDERS),
            Table::NewOrder => per_district(ORDERS - FIRST_NEW_ORDER + 1),
            Table::OrderLine => None,
            Table::Stock => Some(ITEMS * warehouses),
        }
    }

    /// The rows of `table` for warehouse `w_id` (ITEM's, whatever `w_id`), in key order.
    pub fn rows(&self, table: Table, w_id: i64) -> Rows {
        let p = *self;
        let districts = move |f: fn(Population, i64, i64) -> Rows| -> Rows {
            Box::new((1..=DISTRICTS).flat_map(move |d| f(p, w_id, d)))
        };
        match table {
            Table::Item => p.items(),
            Table::Warehouse => p.warehouse(w_id),
            Table::District => Box::new((1..=DISTRICTS).map(move |d| p.district(w_id, d))),
            Table::Customer => districts(Population::customers),
            Table::History => districts(Population::history),
            Table::Orders => districts(Population::orders),
            Table::NewOrder => districts(Population::new_orders),
            Table::OrderLine => districts(Population::order_lines),
            Table::Stock => p.stock(w_id),
        }
    }

    fn items(self) -> Rows {
        let mut rng = seeded(self.seed, &[stream::ITEM]);
        Box::new((1..=ITEMS).map(move |i| {
            vec![
                int(i),
                int(rng.i64(1..=10_000)),
                text(a_string(&mut rng, 14, 24)),
                int(rng.i64(100..=10_000)),
                text(data_with_original(&mut rng)),
            ]
        }))
    }

    fn warehouse(self, w: i64) -> Rows {
        let mut rng = seeded(self.seed, &[stream::WAREHOUSE, w as u64]);
        let mut row = vec![int(w), text(a_string(&mut rng, 6, 10))];
        row.extend(address(&mut rng));
        row.extend([int(rng.i64(0..=2000)), int(WAREHOUSE_YTD)]);
        Box::new(std::iter::once(row))
    }

    fn district(self, w: i64, d: i64) -> Row {
        let mut rng = seeded(self.seed, &[stream::DISTRICT, w as u64, d as u64]);
        let mut row = vec![int(d), int(w), text(a_string(&mut rng, 6, 10))];
        row.extend(address(&mut rng));
        row.extend([int(rng.i64(0..=2000)), int(DISTRICT_YTD), int(ORDERS + 1)]);
        row
    }

    fn customers(self, w: i64, d: i64) -> Rows {
        let mut rng = seeded(self.seed, &[stream::CUSTOMER, w as u64, d as u64]);
        let (now, c_last) = (self.now_us, self.constants.c_last);
        Box::new((1..=CUSTOMERS).map(move |c| {
            let number = if c <= NAMED_IN_ORDER {
                c - 1
            } else {
                nurand(&mut rng, 255, 0, 999, c_last)
            };
            let first = a_string(&mut rng, 8, 16);
            let mut row = vec![int(c), int(d), int(w), text(first), text("OE")];
            row.push(text(last_name(number)));
            row.extend(address(&mut rng));
            row.extend([
                text(n_string(&mut rng, 16)),
                int(now),
                text(if rng.u8(0..10) == 0 { "BC" } else { "GC" }),
                int(5_000_000),
                int(rng.i64(0..=5000)),
                int(-1000),
                int(1000),
                int(1),
                int(0),
                text(a_string(&mut rng, 300, 500)),
            ]);
            row
        }))
    }

    fn history(self, w: i64, d: i64) -> Rows {
        let mut rng = seeded(self.seed, &[stream::HISTORY, w as u64, d as u64]);
        let now = self.now_us;
        Box::new((1..=CUSTOMERS).map(move |c| {
            vec![
                int(c),
                int(d),
                int(w),
                int(d),
                int(w),
                int(now),
                int(1000),
                text(a_string(&mut rng, 12, 24)),
            ]
        }))
    }

    /// An order's carrier (`None` once undelivered) and line count.
    fn order_shape(self, w: i64, d: i64, o: i64) -> (Option<i64>, i64) {
        let mut rng = seeded(self.seed, &[stream::ORDER, w as u64, d as u64, o as u64]);
        let carrier = rng.i64(1..=10);
        let lines = rng.i64(5..=15);
        ((o < FIRST_NEW_ORDER).then_some(carrier), lines)
    }

    fn orders(self, w: i64, d: i64) -> Rows {
        let mut customers: Vec<i64> = (1..=CUSTOMERS).collect();
        seeded(self.seed, &[stream::PERMUTATION, w as u64, d as u64]).shuffle(&mut customers);
        Box::new((1..=ORDERS).map(move |o| {
            let (carrier, lines) = self.order_shape(w, d, o);
            vec![
                int(o),
                int(d),
                int(w),
                int(customers[(o - 1) as usize]),
                int(self.now_us),
                carrier.map_or(Value::Null, int),
                int(lines),
                int(1),
            ]
        }))
    }

    fn new_orders(self, w: i64, d: i64) -> Rows {
        Box::new((FIRST_NEW_ORDER..=ORDERS).map(move |o| vec![int(o), int(d), int(w)]))
    }

    fn order_lines(self, w: i64, d: i64) -> Rows {
        Box::new((1..=ORDERS).flat_map(move |o| {
            let (carrier, lines) = self.order_shape(w, d, o);
            let delivered = carrier.is_some();
            let mut rng = seeded(
                self.seed,
                &[stream::ORDER_LINE, w as u64, d as u64, o as u64],
            );
            (1..=lines).map(move |n| {
                vec![
                    int(o),
                    int(d),
                    int(w),
                    int(n),
                    int(rng.i64(1..=ITEMS)),
                    int(w),
                    if delivered {
                        int(self.now_us)
                    } else {
                        Value::Null
                    },
                    int(5),
                    int(if delivered { 0 } else { rng.i64(1..=999_999) }),
                    text(a_string(&mut rng, 24, 24)),
                ]
            })
        }))
    }

    fn stock(self, w: i64) -> Rows {
        let mut rng = seeded(self.seed, &[stream::STOCK, w as u64]);
        Box::new((1..=ITEMS).map(move |i| {
            let mut row = vec![int(i), int(w), int(rng.i64(10..=100))];
            row.extend((0..DISTRICTS).map(|_| text(a_string(&mut rng, 24, 24))));
            row.extend([int(0), int(0), int(0), text(data_with_original(&mut rng))]);
            row
        }))
    }
}
