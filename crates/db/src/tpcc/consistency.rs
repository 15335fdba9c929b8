//! The consistency conditions 1 to 4 of clause 3.3.2, checked after a run (or a load) in one
//! transaction: each with its name, whether it holds, and the first warehouse or district
//! where it does not.

use crate::backend::{Conn, DbError, Row, Value};
use crate::dialect::{dialect, Dialect};

/// One condition's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionResult {
    /// 1 to 4, as clause 3.3.2 numbers them.
    pub number: u8,
    /// What it requires.
    pub name: &'static str,
    /// It holds everywhere.
    pub passed: bool,
    /// The first place it does not hold and what was found there
    /// (`warehouse 1: W_YTD 30000100, sum(D_YTD) 30000000`).
    pub offender: Option<String>,
}

/// A condition: its number, name, query, and the test of each row the query returns
/// (`Some(what was found)` where it fails).
struct Condition {
    number: u8,
    name: &'static str,
    /// Its rows start with warehouse and district (else with the warehouse alone).
    per_district: bool,
    /// Its query in a database's SQL.
    sql: fn(&dyn Dialect) -> String,
    check: fn(&Row) -> Option<String>,
}

fn int(row: &Row, i: usize) -> Option<i64> {
    row.get(i).and_then(Value::int)
}

fn place(row: &Row, per_district: bool) -> String {
    let (w, d) = (
        row.first().unwrap_or(&Value::Null),
        row.get(1).unwrap_or(&Value::Null),
    );
    match (w, d) {
        (Value::Int(w), Value::Int(d)) if per_district => format!("warehouse {w} district {d}"),
        (Value::Int(w), _) => format!("warehouse {w}"),
        _ => format!("{row:?}"),
    }
}

const CONDITIONS: [Condition; 4] = [
    Condition {
        number: 1,
        name: "W_YTD = sum(D_YTD) of the warehouse's districts",
        per_district: false,
        sql: |d| {
            format!(
                "SELECT w_id, w_ytd, (SELECT {} FROM district WHERE d_w_id = w_id) \
                 FROM warehouse ORDER BY w_id",
                d.int_cast("sum(d_ytd)")
            )
        },
        check: |r| {
            (int(r, 1) != int(r, 2))
                .then(|| format!("W_YTD {:?}, sum(D_YTD) {:?}", int(r, 1), int(r, 2)))
        },
    },
    Condition {
        number: 2,
        per_district: true,
        name: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) of the district",
        sql: |_| {
            "SELECT d_w_id, d_id, d_next_o_id - 1, \
             (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id), \
             (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) \
             FROM district ORDER BY d_w_id, d_id"
                .into()
        },
        check: |r| {
            // A district whose new orders were all delivered has no max(NO_O_ID) to compare.
            let new_order_ok = int(r, 4).is_none() || int(r, 4) == int(r, 2);
            (int(r, 2) != int(r, 3) || !new_order_ok).then(|| {
                format!(
                    "D_NEXT_O_ID - 1 {:?}, max(O_ID) {:?}, max(NO_O_ID) {:?}",
                    int(r, 2),
                    int(r, 3),
                    int(r, 4)
                )
            })
        },
    },
    Condition {
        number: 3,
        per_district: true,
        name: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER of the district",
        sql: |_| {
            "SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*) \
             FROM new_order GROUP BY no_w_id, no_d_id ORDER BY no_w_id, no_d_id"
                .into()
        },
        check: |r| {
            (int(r, 2) != int(r, 3))
                .then(|| format!("max - min + 1 = {:?}, rows {:?}", int(r, 2), int(r, 3)))
        },
    },
    Condition {
        number: 4,
        per_district: true,
        name: "sum(O_OL_CNT) = rows in ORDER-LINE of the district",
        sql: |d| {
            format!(
                "SELECT d_w_id, d_id, \
                 (SELECT {} FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id), \
                 (SELECT count(*) FROM order_line WHERE ol_w_id = d_w_id AND ol_d_id = d_id) \
                 FROM district ORDER BY d_w_id, d_id",
                d.int_cast("sum(o_ol_cnt)")
            )
        },
        check: |r| {
            (int(r, 2).unwrap_or(0) != int(r, 3).unwrap_or(0))
                .then(|| format!("sum(O_OL_CNT) {:?}, order lines {:?}", int(r, 2), int(r, 3)))
        },
    },
];

/// Checks conditions 1 to 4 in one transaction; the caller fails a run where one does not
/// hold.
pub fn check_consistency(conn: &mut dyn Conn) -> Result<Vec<ConditionResult>, DbError> {
    let spelling = dialect(conn.kind());
    conn.begin()?;
    let results = CONDITIONS
        .iter()
        .map(|c| {
            let rows = conn.query(&(c.sql)(spelling), &[])?;
            let offender = rows.iter().find_map(|r| {
                (c.check)(r).map(|found| format!("{}: {found}", place(r, c.per_district)))
            });
            Ok(ConditionResult {
                number: c.number,
                name: c.name,
                passed: offender.is_none(),
                offender,
            })
        })
        .collect::<Result<Vec<_>, DbError>>();
    match results {
        Ok(r) => {
            conn.commit()?;
            Ok(r)
        }
        Err(e) => {
            let _ = conn.rollback();
            Err(e)
        }
    }
}
