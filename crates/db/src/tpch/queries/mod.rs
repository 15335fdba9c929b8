//! The 22 TPC-H queries (clause 2.4) with the validation parameters of each query's clause
//! 2.4.n.3 (what qgen writes with `-d`; FRACTION of Q11 is 0.0001 / SF as qgen scales it), in
//! each database's dialect. The texts are the specification's; only date literals, date
//! arithmetic and `extract(year ...)` are written per database
//! ([`crate::dialect::Dialect`]): SQLite has no date type, no `interval` and no `extract`, and
//! stores dates as ISO-8601 text, which its `date()` and `strftime()` read.

mod q01_q11;
mod q12_q22;

use crate::backend::{Conn, Db, DbError, Row};
use crate::dialect::dialect;
use std::time::{Duration, Instant};

/// The number of queries.
pub const QUERIES: u8 = 22;

/// The queries' names, as clause 2.4 titles them (query n is at n − 1).
pub const NAMES: [&str; QUERIES as usize] = [
    "Pricing Summary Report",
    "Minimum Cost Supplier",
    "Shipping Priority",
    "Order Priority Checking",
    "Local Supplier Volume",
    "Forecasting Revenue Change",
    "Volume Shipping",
    "National Market Share",
    "Product Type Profit Measure",
    "Returned Item Reporting",
    "Important Stock Identification",
    "Shipping Modes and Order Priority",
    "Customer Distribution",
    "Promotion Effect",
    "Top Supplier",
    "Parts/Supplier Relationship",
    "Small-Quantity-Order Revenue",
    "Large Volume Customer",
    "Discounted Revenue",
    "Potential Part Promotion",
    "Suppliers Who Kept Orders Waiting",
    "Global Sales Opportunity",
];

/// How a database writes what differs, and the scale factor (Q11's FRACTION depends on it).
pub(crate) struct Writer {
    kind: Db,
    sf: f64,
}

impl Writer {
    /// A date literal.
    fn date(&self, day: &str) -> String {
        dialect(self.kind).date(day)
    }

    /// `day` moved by `amount` `unit`s (day, month or year), as the specification writes it.
    fn shift(&self, day: &str, amount: i32, unit: &str) -> String {
        dialect(self.kind).date_shift(day, amount, unit)
    }

    /// The year of a date column, as an integer.
    fn year(&self, column: &str) -> String {
        dialect(self.kind).year(column)
    }
}

type Text = fn(&Writer) -> String;

const TEXTS: [Text; QUERIES as usize] = [
    q01_q11::q1,
    q01_q11::q2,
    q01_q11::q3,
    q01_q11::q4,
    q01_q11::q5,
    q01_q11::q6,
    q01_q11::q7,
    q01_q11::q8,
    q01_q11::q9,
    q01_q11::q10,
    q01_q11::q11,
    q12_q22::q12,
    q12_q22::q13,
    q12_q22::q14,
    q12_q22::q15,
    q12_q22::q16,
    q12_q22::q17,
    q12_q22::q18,
    q12_q22::q19,
    q12_q22::q20,
    q12_q22::q21,
    q12_q22::q22,
];

/// The text of query `number` (1 to 22) for a database of `kind` loaded at scale factor `sf`;
/// `None` for any other number.
pub fn sql(number: u8, kind: Db, sf: f64) -> Option<String> {
    let text = TEXTS.get(usize::from(number).checked_sub(1)?)?;
    Some(text(&Writer { kind, sf }))
}

/// What one query did.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryReport {
    /// 1 to 22.
    pub number: u8,
    /// Rows it returned.
    pub rows: u64,
    /// From sending it to having the last row.
    pub elapsed: Duration,
    /// The rows themselves (at most a few thousand: Q16's and Q11's grow with SF, the others
    /// are limited or grouped).
    pub answer: Vec<Row>,
}

/// Runs `sql` as query `number` on `conn` and times it.
pub(crate) fn run(conn: &mut dyn Conn, number: u8, sql: &str) -> Result<QueryReport, DbError> {
    let start = Instant::now();
    let answer = conn.query(sql, &[])?;
    Ok(QueryReport {
        number,
        rows: answer.len() as u64,
        elapsed: start.elapsed(),
        answer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_has_a_text_in_each_dialect_and_no_placeholder_left() {
        for kind in [Db::Postgres, Db::Sqlite] {
            for n in 1..=QUERIES {
                let text = sql(n, kind, 0.1).unwrap();
                let start = text.trim_start();
                assert!(
                    start.starts_with("SELECT") || start.starts_with("WITH"),
                    "Q{n}"
                );
                let placeholder = text.char_indices().any(|(i, c)| {
                    c == ':' && text[i + 1..].starts_with(|d: char| d.is_ascii_digit())
                });
                assert!(!placeholder, "Q{n}: {text}");
                if kind == Db::Sqlite {
                    for pg_only in ["interval", "extract", "date '"] {
                        assert!(!text.contains(pg_only), "Q{n}: {pg_only} in {text}");
                    }
                }
            }
        }
        assert!(sql(0, Db::Sqlite, 1.0).is_none() && sql(23, Db::Sqlite, 1.0).is_none());
    }

    #[test]
    fn dates_shift_and_years_are_written_per_database() {
        let pg = Writer {
            kind: Db::Postgres,
            sf: 1.0,
        };
        let lite = Writer {
            kind: Db::Sqlite,
            sf: 1.0,
        };
        assert_eq!(
            pg.shift("1998-12-01", -90, "day"),
            "date '1998-12-01' - interval '90' day"
        );
        assert_eq!(
            lite.shift("1998-12-01", -90, "day"),
            "date('1998-12-01', '-90 day')"
        );
        assert_eq!(
            lite.shift("1993-07-01", 3, "month"),
            "date('1993-07-01', '+3 month')"
        );
        assert_eq!(lite.date("1995-03-15"), "'1995-03-15'");
        assert_eq!(pg.year("o_orderdate"), "extract(year FROM o_orderdate)");
        assert!(sql(1, Db::Sqlite, 1.0).unwrap().contains("'-90 day'"));
        assert!(sql(11, Db::Postgres, 0.01)
            .unwrap()
            .contains("* 0.0100000000"));
        assert!(sql(11, Db::Postgres, 1.0)
            .unwrap()
            .contains("* 0.0001000000"));
    }
}
