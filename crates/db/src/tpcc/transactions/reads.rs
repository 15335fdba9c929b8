//! Order-Status (clause 2.6), Delivery (2.7) and Stock-Level (2.8).

use super::{customer_id, customer_row, first, get_int, int, Outcome, Updating};
use crate::backend::{Conn, DbError, Value};
use crate::dialect::dialect;
use crate::tpcc::inputs::CustomerPick;
use crate::tpcc::populate::DISTRICTS;
use std::sync::LazyLock;

/// A district's oldest undelivered order (the dialect's locking suffix follows).
const OLDEST_NEW_ORDER: &str = "SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 \
                                ORDER BY no_o_id LIMIT 1";

/// An order given its carrier.
static ORDER_UPDATE: LazyLock<Updating> = LazyLock::new(|| {
    Updating::new(
        "orders",
        "o_carrier_id = $1",
        "o_w_id = $2 AND o_d_id = $3 AND o_id = $4",
        "o_c_id",
    )
});

/// An order's lines delivered.
static LINES_UPDATE: LazyLock<Updating> = LazyLock::new(|| {
    Updating::new(
        "order_line",
        "ol_delivery_d = $1",
        "ol_w_id = $2 AND ol_d_id = $3 AND ol_o_id = $4",
        "ol_amount",
    )
});

/// Orders Stock-Level looks back over.
const RECENT_ORDERS: i64 = 20;

/// A customer's balance, their latest order and its lines.
pub(super) fn order_status(
    conn: &mut dyn Conn,
    w_id: i64,
    d_id: i64,
    pick: &CustomerPick,
) -> Result<Outcome, DbError> {
    let c_id = customer_id(conn, w_id, d_id, pick)?;
    customer_row(
        conn,
        "SELECT c_balance, c_first, c_middle, c_last FROM customer \
         WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
        w_id,
        d_id,
        c_id,
    )?;
    let order = conn.query(
        "SELECT o_id, o_entry_d, o_carrier_id FROM orders \
         WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1",
        &[int(w_id), int(d_id), int(c_id)],
    )?;
    if let Some(order) = order.first() {
        let o_id = get_int(order, 0, "Order-Status's order number")?;
        conn.query(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
             FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
            &[int(w_id), int(d_id), int(o_id)],
        )?;
    }
    Ok(Outcome::Committed)
}

/// Delivers the oldest undelivered order of each district of the warehouse (a district
/// without one, or whose oldest another terminal deleted first, is skipped and counted), all
/// in one transaction.
pub(super) fn delivery(
    conn: &mut dyn Conn,
    w_id: i64,
    carrier_id: i64,
    now_us: i64,
) -> Result<Outcome, DbError> {
    let mut skipped = 0;
    let oldest = [OLDEST_NEW_ORDER, dialect(conn.kind()).latest_for_update()].concat();
    for d_id in 1..=DISTRICTS {
        let oldest = conn.query(&oldest, &[int(w_id), int(d_id)])?;
        let Some(oldest) = oldest.first() else {
            skipped += 1;
            continue;
        };
        let o_id = get_int(oldest, 0, "Delivery's order number")?;
        let deleted = conn.execute(
            "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3",
            &[int(w_id), int(d_id), int(o_id)],
        )?;
        if deleted == 0 {
            // Another terminal delivered it since the SELECT (PostgreSQL, read committed).
            skipped += 1;
            continue;
        }
        let order = ORDER_UPDATE.run(conn, &[int(carrier_id), int(w_id), int(d_id), int(o_id)])?;
        let order = first(order, || {
            format!("order {o_id} of warehouse {w_id} district {d_id}")
        })?;
        let c_id = get_int(&order, 0, "Delivery's customer")?;
        let lines = LINES_UPDATE.run(conn, &[int(now_us), int(w_id), int(d_id), int(o_id)])?;
        let mut total = 0;
        for line in &lines {
            total += get_int(line, 0, "Delivery's line amount")?;
        }
        conn.execute(
            "UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1 \
             WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4",
            &[int(total), int(w_id), int(d_id), int(c_id)],
        )?;
    }
    Ok(Outcome::Delivered { skipped })
}

/// Counts the distinct items of the district's last 20 orders whose stock is below
/// `threshold`.
pub(super) fn stock_level(
    conn: &mut dyn Conn,
    w_id: i64,
    d_id: i64,
    threshold: i64,
) -> Result<Outcome, DbError> {
    let district = conn.query(
        "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2",
        &[int(w_id), int(d_id)],
    )?;
    let district = first(district, || format!("district {d_id} of warehouse {w_id}"))?;
    let next = get_int(&district, 0, "Stock-Level's next order number")?;
    let low = conn.query(
        "SELECT count(DISTINCT s_i_id) FROM order_line, stock \
         WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id < $3 AND ol_o_id >= $4 \
         AND s_w_id = $1 AND s_i_id = ol_i_id AND s_quantity < $5",
        &[
            int(w_id),
            int(d_id),
            int(next),
            int(next - RECENT_ORDERS),
            int(threshold),
        ],
    )?;
    match low.first().and_then(|r| r.first()) {
        Some(Value::Int(_)) => Ok(Outcome::Committed),
        other => Err(DbError::other(format!(
            "TPC-C Stock-Level: expected a count, found {other:?}"
        ))),
    }
}
