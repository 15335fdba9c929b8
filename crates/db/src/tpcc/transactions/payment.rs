//! Payment (clause 2.5): the amount goes to the warehouse's and the district's year-to-date
//! totals and off the customer's balance; a bad-credit customer's data records it; a history
//! row is written.

use super::{customer_id, first, int, Outcome, Updating};
use crate::backend::{Conn, DbError, Value};
use crate::tpcc::inputs::Transaction;
use std::sync::LazyLock;

static WAREHOUSE_UPDATE: LazyLock<Updating> = LazyLock::new(|| {
    Updating::new(
        "warehouse",
        "w_ytd = w_ytd + $1",
        "w_id = $2",
        "w_name, w_street_1, w_street_2, w_city, w_state, w_zip",
    )
});

static DISTRICT_UPDATE: LazyLock<Updating> = LazyLock::new(|| {
    Updating::new(
        "district",
        "d_ytd = d_ytd + $1",
        "d_w_id = $2 AND d_id = $3",
        "d_name, d_street_1, d_street_2, d_city, d_state, d_zip",
    )
});

static CUSTOMER_UPDATE: LazyLock<Updating> = LazyLock::new(|| {
    Updating::new(
        "customer",
        "c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1, \
         c_payment_cnt = c_payment_cnt + 1",
        "c_w_id = $2 AND c_d_id = $3 AND c_id = $4",
        "c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, \
         c_since, c_credit, c_credit_lim, c_discount, c_balance",
    )
});

/// H_DATA's length.
const H_DATA_MAX: usize = 24;

pub(super) fn run(conn: &mut dyn Conn, tx: &Transaction, now_us: i64) -> Result<Outcome, DbError> {
    let Transaction::Payment {
        w_id,
        d_id,
        c_w_id,
        c_d_id,
        customer,
        amount,
    } = tx
    else {
        return Err(DbError::other("TPC-C Payment called with another input"));
    };
    let (w_id, d_id, c_w_id, c_d_id, amount) = (*w_id, *d_id, *c_w_id, *c_d_id, *amount);
    let warehouse = WAREHOUSE_UPDATE.run(conn, &[int(amount), int(w_id)])?;
    let warehouse = first(warehouse, || format!("warehouse {w_id}"))?;
    let district = DISTRICT_UPDATE.run(conn, &[int(amount), int(w_id), int(d_id)])?;
    let district = first(district, || format!("district {d_id} of warehouse {w_id}"))?;
    let c_id = customer_id(conn, c_w_id, c_d_id, customer)?;
    let paid = CUSTOMER_UPDATE.run(conn, &[int(amount), int(c_w_id), int(c_d_id), int(c_id)])?;
    let paid = first(paid, || {
        format!("customer {c_id} of warehouse {c_w_id} district {c_d_id}")
    })?;
    if paid.get(10).and_then(Value::text) == Some("BC") {
        // The payment goes in front of C_DATA, which keeps its first 500 characters.
        let note = format!("{c_id} {c_d_id} {c_w_id} {d_id} {w_id} {amount} | ");
        conn.execute(
            // concat(): MariaDB's || is OR.
            "UPDATE customer SET c_data = substr(concat(CAST($1 AS varchar(500)), c_data), 1, 500) \
             WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4",
            &[Value::Text(note), int(c_w_id), int(c_d_id), int(c_id)],
        )?;
    }
    let name = |row: &Vec<Value>| row.first().and_then(Value::text).unwrap_or("").to_string();
    let mut h_data = format!("{}    {}", name(&warehouse), name(&district));
    h_data.truncate(H_DATA_MAX);
    conn.execute(
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, \
         h_data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            int(c_id),
            int(c_d_id),
            int(c_w_id),
            int(d_id),
            int(w_id),
            int(now_us),
            int(amount),
            Value::Text(h_data),
        ],
    )?;
    Ok(Outcome::Committed)
}
