//! New-Order (clause 2.4): take the district's next order number, record the order and
//! its lines, and take each line's quantity from stock; an unused item number rolls it back.

use super::{customer_row, first, get_int, int, Outcome, Updating};
use crate::backend::{Conn, DbError, Value};
use crate::tpcc::inputs::{LineInput, Transaction};
use std::sync::LazyLock;

/// Stock's update per district: each reads back its own S_DIST_xx.
static STOCK_UPDATE: LazyLock<Vec<Updating>> = LazyLock::new(|| {
    (1..=10)
        .map(|d| {
            Updating::new(
                "stock",
                "s_quantity = CASE WHEN s_quantity >= $1 + 10 \
                 THEN s_quantity - $1 ELSE s_quantity - $1 + 91 END, \
                 s_ytd = s_ytd + $1, s_order_cnt = s_order_cnt + 1, \
                 s_remote_cnt = s_remote_cnt + $2",
                "s_w_id = $3 AND s_i_id = $4",
                &format!("s_quantity, s_dist_{d:02}, s_data"),
            )
        })
        .collect()
});

/// The district's next order number taken.
static DISTRICT_UPDATE: LazyLock<Updating> = LazyLock::new(|| {
    Updating::new(
        "district",
        "d_next_o_id = d_next_o_id + 1",
        "d_w_id = $1 AND d_id = $2",
        "d_tax, d_next_o_id",
    )
});

pub(super) fn run(conn: &mut dyn Conn, tx: &Transaction, now_us: i64) -> Result<Outcome, DbError> {
    let Transaction::NewOrder {
        w_id,
        d_id,
        c_id,
        lines,
    } = tx
    else {
        return Err(DbError::other("TPC-C New-Order called with another input"));
    };
    let (w_id, d_id, c_id) = (*w_id, *d_id, *c_id);
    let warehouse = conn.query("SELECT w_tax FROM warehouse WHERE w_id = $1", &[int(w_id)])?;
    first(warehouse, || format!("warehouse {w_id}"))?;
    let district = DISTRICT_UPDATE.run(conn, &[int(w_id), int(d_id)])?;
    let district = first(district, || format!("district {d_id} of warehouse {w_id}"))?;
    let o_id = get_int(&district, 1, "New-Order's next order number")? - 1;
    customer_row(
        conn,
        "SELECT c_discount, c_last, c_credit FROM customer \
         WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
        w_id,
        d_id,
        c_id,
    )?;
    let all_local = lines.iter().all(|l| l.supply_w_id == w_id);
    conn.execute(
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, \
         o_all_local) VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)",
        &[
            int(o_id),
            int(d_id),
            int(w_id),
            int(c_id),
            int(now_us),
            int(lines.len() as i64),
            int(i64::from(all_local)),
        ],
    )?;
    conn.execute(
        "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)",
        &[int(o_id), int(d_id), int(w_id)],
    )?;
    for (number, line) in (1..).zip(lines) {
        let order = Order { w_id, d_id, o_id };
        if !order_line(conn, order, number, line)? {
            return Ok(Outcome::RolledBack);
        }
    }
    Ok(Outcome::Ordered { o_id })
}

/// The order lines belong to.
#[derive(Clone, Copy)]
struct Order {
    w_id: i64,
    d_id: i64,
    o_id: i64,
}

/// One line: the item's price, the stock taken, the line recorded. `false` if the item does
/// not exist (the transaction is to roll back).
fn order_line(
    conn: &mut dyn Conn,
    order: Order,
    number: i64,
    line: &LineInput,
) -> Result<bool, DbError> {
    let item = conn.query(
        "SELECT i_price, i_name, i_data FROM item WHERE i_id = $1",
        &[int(line.item)],
    )?;
    let Some(item) = item.into_iter().next() else {
        return Ok(false);
    };
    let price = get_int(&item, 0, "New-Order's item price")?;
    let remote = i64::from(line.supply_w_id != order.w_id);
    let district = usize::try_from(order.d_id - 1).unwrap_or(0).min(9);
    let stock = STOCK_UPDATE[district].run(
        conn,
        &[
            int(line.quantity),
            int(remote),
            int(line.supply_w_id),
            int(line.item),
        ],
    )?;
    let stock = first(stock, || {
        format!(
            "stock of item {} in warehouse {}",
            line.item, line.supply_w_id
        )
    })?;
    let dist_info = stock.get(1).cloned().unwrap_or(Value::Null);
    conn.execute(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
         ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
         VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)",
        &[
            int(order.o_id),
            int(order.d_id),
            int(order.w_id),
            int(number),
            int(line.item),
            int(line.supply_w_id),
            int(line.quantity),
            int(line.quantity * price),
            dist_info,
        ],
    )?;
    Ok(true)
}
