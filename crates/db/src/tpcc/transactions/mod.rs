//! The five transactions (clauses 2.4 to 2.8) in SQL every database runs: row locks come from
//! the `UPDATE`s that read back what they changed (`Updating`: PostgreSQL and InnoDB lock
//! the rows they update; SQLite holds the write lock from `BEGIN`), so no `SELECT ... FOR
//! UPDATE` is needed, but for Delivery's oldest new order on MariaDB (its repeatable read:
//! `Dialect::latest_for_update`).

mod new_order;
mod payment;
mod reads;

use super::inputs::{CustomerPick, Transaction};
use crate::backend::{Conn, DbError, Row, Value};
use crate::dialect::dialect;

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Committed.
    Committed,
    /// A New-Order committed with this order number (in its warehouse and district): the
    /// natural key a durability check looks for after a crash.
    Ordered {
        /// The order's `o_id`.
        o_id: i64,
    },
    /// Rolled back on purpose (a New-Order with an unused item number).
    RolledBack,
    /// A Delivery committed; `skipped` of the warehouse's 10 districts had no order to
    /// deliver (none undelivered, or another terminal took the oldest first): TPC-C (clause
    /// 2.7.4.2) asks for these to be reported.
    Delivered {
        /// Districts skipped.
        skipped: u32,
    },
}

impl Outcome {
    /// Districts a Delivery skipped (0 for every other transaction).
    pub fn skipped_districts(self) -> u32 {
        match self {
            Outcome::Delivered { skipped } => skipped,
            _ => 0,
        }
    }
}

/// Runs `tx` as one database transaction dated `now_us`. On an error the transaction is
/// rolled back (as far as the database lets) before the error returns.
pub fn execute(conn: &mut dyn Conn, tx: &Transaction, now_us: i64) -> Result<Outcome, DbError> {
    conn.begin()?;
    let done = match tx {
        Transaction::NewOrder { .. } => new_order::run(conn, tx, now_us),
        Transaction::Payment { .. } => payment::run(conn, tx, now_us),
        Transaction::OrderStatus {
            w_id,
            d_id,
            customer,
        } => reads::order_status(conn, *w_id, *d_id, customer),
        Transaction::Delivery { w_id, carrier_id } => {
            reads::delivery(conn, *w_id, *carrier_id, now_us)
        }
        Transaction::StockLevel {
            w_id,
            d_id,
            threshold,
        } => reads::stock_level(conn, *w_id, *d_id, *threshold),
    };
    let finished = done.and_then(|outcome| {
        match outcome {
            Outcome::Committed | Outcome::Ordered { .. } | Outcome::Delivered { .. } => {
                conn.commit()?
            }
            Outcome::RolledBack => conn.rollback()?,
        }
        Ok(outcome)
    });
    if finished.is_err() {
        // The error that ended the transaction is the one to report.
        let _ = conn.rollback();
    }
    finished
}

/// An `UPDATE` whose changed rows the transaction reads back: one statement `... RETURNING`
/// where the database has it, else the `UPDATE` and then a `SELECT` of the same rows (MariaDB).
/// The second reads what the first wrote: the update locked the rows, and a transaction sees
/// its own changes (under InnoDB's repeatable read too), so both return the same values.
struct Updating {
    returning: String,
    update: String,
    select: String,
}

impl Updating {
    /// `UPDATE table SET set WHERE filter`, reading back `columns`. The `SELECT` is given the
    /// same parameters and uses those of `filter` (bound by number: unused ones are not sent).
    fn new(table: &str, set: &str, filter: &str, columns: &str) -> Updating {
        let update = format!("UPDATE {table} SET {set} WHERE {filter}");
        Updating {
            returning: format!("{update} RETURNING {columns}"),
            select: format!("SELECT {columns} FROM {table} WHERE {filter}"),
            update,
        }
    }

    /// Runs it on `conn`; the rows changed, with `columns`' new values.
    fn run(&self, conn: &mut dyn Conn, params: &[Value]) -> Result<Vec<Row>, DbError> {
        if dialect(conn.kind()).update_returning() {
            return conn.query(&self.returning, params);
        }
        conn.execute(&self.update, params)?;
        conn.query(&self.select, params)
    }
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

/// The first row of `rows`, or an error saying what was missing.
fn first(rows: Vec<Row>, missing: impl FnOnce() -> String) -> Result<Row, DbError> {
    rows.into_iter().next().ok_or_else(|| {
        DbError::other(format!(
            "{}: the TPC-C database does not hold it (loaded with fewer warehouses, or changed?); load it again",
            missing()
        ))
    })
}

/// Column `i` of `row` as an integer.
fn get_int(row: &Row, i: usize, what: &str) -> Result<i64, DbError> {
    row.get(i).and_then(Value::int).ok_or_else(|| {
        DbError::other(format!(
            "TPC-C {what}: expected an integer in column {}, found {:?}",
            i + 1,
            row.get(i)
        ))
    })
}

/// The customer `pick` names in warehouse `w_id`, district `d_id`: by last name, the one at
/// position n/2 rounded up of those so named in order of first name (clause 2.5.2.2).
fn customer_id(
    conn: &mut dyn Conn,
    w_id: i64,
    d_id: i64,
    pick: &CustomerPick,
) -> Result<i64, DbError> {
    match pick {
        CustomerPick::Id(c_id) => Ok(*c_id),
        CustomerPick::LastName(last) => {
            let rows = conn.query(
                "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 \
                 ORDER BY c_first",
                &[int(w_id), int(d_id), Value::Text(last.clone())],
            )?;
            let middle = rows.len().saturating_sub(1) / 2;
            let row = first(rows.into_iter().skip(middle).collect(), || {
                format!("customer named {last} in warehouse {w_id} district {d_id}")
            })?;
            get_int(&row, 0, "customer by last name")
        }
    }
}

/// A customer's row as `sql` reads it (parameters: warehouse, district, customer); a
/// customer who is not there is an error.
fn customer_row(
    conn: &mut dyn Conn,
    sql: &str,
    w_id: i64,
    d_id: i64,
    c_id: i64,
) -> Result<Row, DbError> {
    let rows = conn.query(sql, &[int(w_id), int(d_id), int(c_id)])?;
    first(rows, || {
        format!("customer {c_id} of warehouse {w_id} district {d_id}")
    })
}
