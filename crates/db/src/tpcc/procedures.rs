//! TPC-C's five transactions as stored procedures, as HammerDB runs them: PL/pgSQL functions
//! on PostgreSQL (`procedures.sql`), procedures on MariaDB (`procedures_mariadb.sql`), created
//! at load time; each transaction is one statement (`SELECT fn(...)`, `CALL proc(...)`) in
//! autocommit: one round trip, its own transaction, one number back. The client-side SQL of
//! [`super::transactions`] costs ~5 + 3 per line round trips for a New-Order, and on a small
//! machine the client's share of the CPU with it.
//!
//! The New-Order with an unused item number raises
//! [`ROLLBACK_SQLSTATE`](super::procedure_sql::ROLLBACK_SQLSTATE): the statement fails,
//! the database undoes its writes, and the client maps the error to [`Outcome::RolledBack`].
//! Serialization failures, deadlocks and lock-wait timeouts raised inside a procedure reach the
//! client as they would from a statement (`ErrorKind::Retry`) and are retried.

use super::inputs::{CustomerPick, LineInput, Transaction};
use super::populate::DISTRICTS;
use super::procedure_sql::ProcedureSql;
use super::transactions::Outcome;
use crate::backend::{Conn, Db, DbError, ErrorKind, Value};
use crate::dialect::dialect;
use std::fmt::Write;

/// The procedures' definitions for `kind`, run at load time (`None`: it has none).
pub fn create_functions(kind: Db) -> Option<&'static str> {
    dialect(kind).tpcc_procedures().map(|p| p.definitions)
}

/// Runs `tx` dated `now_us` as one call of its function, in its own transaction.
pub fn execute(conn: &mut dyn Conn, tx: &Transaction, now_us: i64) -> Result<Outcome, DbError> {
    let kind = conn.kind();
    let Some(sql) = dialect(kind).tpcc_procedures() else {
        return Err(DbError::other(format!(
            "TPC-C's stored procedures are not available on {kind:?}"
        )));
    };
    let (sql, params) = call(sql, tx, now_us);
    match conn.query(sql, &params) {
        Ok(rows) => match rows.first().and_then(|r| r.first()) {
            // `delivery` returns the districts it delivered an order of.
            Some(Value::Int(delivered)) if matches!(tx, Transaction::Delivery { .. }) => {
                let skipped = (DISTRICTS - delivered).clamp(0, DISTRICTS) as u32;
                Ok(Outcome::Delivered { skipped })
            }
            // `new_order` returns the order's number.
            Some(Value::Int(o_id)) if matches!(tx, Transaction::NewOrder { .. }) => {
                Ok(Outcome::Ordered { o_id: *o_id })
            }
            Some(Value::Int(_)) => Ok(Outcome::Committed),
            other => Err(DbError::other(format!(
                "TPC-C {sql}: expected a number, found {other:?}"
            ))),
        },
        Err(e) if e.kind == ErrorKind::Rollback && matches!(tx, Transaction::NewOrder { .. }) => {
            Ok(Outcome::RolledBack)
        }
        Err(e) => Err(e),
    }
}

/// The statement (of `sql`) and parameters that run `tx`.
fn call(sql: &ProcedureSql, tx: &Transaction, now_us: i64) -> (&'static str, Vec<Value>) {
    let int = Value::Int;
    match tx {
        Transaction::NewOrder {
            w_id,
            d_id,
            c_id,
            lines,
        } => {
            let column =
                |f: fn(&LineInput) -> i64| Value::Text(int_list(sql.list, lines.iter().map(f)));
            let params = vec![
                int(*w_id),
                int(*d_id),
                int(*c_id),
                column(|l| l.item),
                column(|l| l.supply_w_id),
                column(|l| l.quantity),
                int(now_us),
            ];
            (sql.new_order, params)
        }
        Transaction::Payment {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer,
            amount,
        } => {
            let (c_id, c_last) = pick(customer);
            let params = vec![
                int(*w_id),
                int(*d_id),
                int(*c_w_id),
                int(*c_d_id),
                c_id,
                c_last,
                int(*amount),
                int(now_us),
            ];
            (sql.payment, params)
        }
        Transaction::OrderStatus {
            w_id,
            d_id,
            customer,
        } => {
            let (c_id, c_last) = pick(customer);
            (sql.order_status, vec![int(*w_id), int(*d_id), c_id, c_last])
        }
        Transaction::Delivery { w_id, carrier_id } => (
            sql.delivery,
            vec![int(*w_id), int(*carrier_id), int(now_us)],
        ),
        Transaction::StockLevel {
            w_id,
            d_id,
            threshold,
        } => (
            sql.stock_level,
            vec![int(*w_id), int(*d_id), int(*threshold)],
        ),
    }
}

/// The customer as the functions take it: a number, or null and a last name.
fn pick(customer: &CustomerPick) -> (Value, Value) {
    match customer {
        CustomerPick::Id(c_id) => (Value::Int(*c_id), Value::Null),
        CustomerPick::LastName(last) => (Value::Null, Value::Text(last.clone())),
    }
}

/// Integers as one list literal between `open` and `close`: `{1,2,3}`, `[1,2,3]`.
fn int_list((open, close): (char, char), values: impl Iterator<Item = i64>) -> String {
    let mut text = String::with_capacity(8 * 16);
    text.push(open);
    for (n, v) in values.enumerate() {
        if n > 0 {
            text.push(',');
        }
        let _ = write!(text, "{v}");
    }
    text.push(close);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::procedure_sql::{MARIADB, POSTGRES};

    #[test]
    fn new_order_lines_travel_as_three_arrays_in_line_order() {
        let line = |item, supply_w_id, quantity| LineInput {
            item,
            supply_w_id,
            quantity,
        };
        let tx = Transaction::NewOrder {
            w_id: 2,
            d_id: 7,
            c_id: 1234,
            lines: vec![line(17, 2, 5), line(100_001, 1, 10)],
        };
        let (sql, params) = call(&POSTGRES, &tx, 99);
        assert!(sql.starts_with("SELECT neword("));
        assert_eq!(
            params,
            [
                Value::Int(2),
                Value::Int(7),
                Value::Int(1234),
                Value::from("{17,100001}"),
                Value::from("{2,1}"),
                Value::from("{5,10}"),
                Value::Int(99),
            ]
        );
        let (sql, params) = call(&MARIADB, &tx, 99);
        assert!(sql.starts_with("CALL neword("));
        assert_eq!(params[3], Value::from("[17,100001]"), "a JSON array");
    }

    #[test]
    fn a_customer_goes_by_number_or_by_last_name() {
        let by_name = Transaction::OrderStatus {
            w_id: 1,
            d_id: 3,
            customer: CustomerPick::LastName("BARBARABLE".into()),
        };
        let (_, params) = call(&MARIADB, &by_name, 0);
        assert_eq!(params[2..], [Value::Null, Value::from("BARBARABLE")]);
        let by_id = Transaction::Payment {
            w_id: 1,
            d_id: 3,
            c_w_id: 1,
            c_d_id: 4,
            customer: CustomerPick::Id(42),
            amount: 500,
        };
        let (sql, params) = call(&POSTGRES, &by_id, 7);
        assert!(sql.starts_with("SELECT payment("));
        assert_eq!(params[4..6], [Value::Int(42), Value::Null]);
        assert_eq!(int_list(POSTGRES.list, std::iter::empty()), "{}");
        let (sql, params) = call(&MARIADB, &by_id, 7);
        assert!(sql.starts_with("CALL payment("));
        assert_eq!(params[4..6], [Value::Int(42), Value::Null]);
    }
}
