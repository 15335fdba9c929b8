//! The New-Orders a client saw committed, and after a crash, which of them the database lost.
//!
//! A terminal that keeps a journal (`TpccPlan::journal`) notes each New-Order's natural key
//! (warehouse, district, order number) and the moment its commit returned, on the monotonic
//! clock every thread of the process reads ([`monotonic_ns`]), so a crash point taken from
//! another record of the same run (a device write log) says which commits were acknowledged
//! before it. A commit acknowledged before the crash must be in the recovered database: the
//! database said it was durable.

use crate::backend::{Conn, DbError, Value};
use std::collections::BTreeMap;

/// One acknowledged New-Order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    /// The order's warehouse.
    pub w_id: i64,
    /// Its district.
    pub d_id: i64,
    /// Its number in the district.
    pub o_id: i64,
    /// When its commit returned to the client, in [`monotonic_ns`].
    pub at_ns: u64,
}

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every thread of the process, so a time
/// noted by a terminal compares with one noted by another part of the run.
pub use bakeoff_probe::monotonic_ns;

/// What a check of acknowledged New-Orders found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LostCommits {
    /// Acknowledged New-Orders looked for (those acknowledged before the crash point).
    pub checked: u64,
    /// Of them, not in the database.
    pub lost: u64,
    /// The earliest acknowledged of the lost ones.
    pub first_lost: Option<Ack>,
}

/// Looks for every New-Order of `acks` acknowledged at or before `before_ns` in the `orders`
/// table `conn` sees: one query per district.
pub fn lost_commits(
    conn: &mut dyn Conn,
    acks: &[Ack],
    before_ns: u64,
) -> Result<LostCommits, DbError> {
    let mut by_district: BTreeMap<(i64, i64), Vec<Ack>> = BTreeMap::new();
    for ack in acks.iter().filter(|a| a.at_ns <= before_ns) {
        by_district
            .entry((ack.w_id, ack.d_id))
            .or_default()
            .push(*ack);
    }
    let mut found = LostCommits::default();
    for ((w_id, d_id), acked) in by_district {
        let lowest = acked.iter().map(|a| a.o_id).min().unwrap_or(0);
        let rows = conn.query(
            "SELECT o_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id >= $3",
            &[Value::Int(w_id), Value::Int(d_id), Value::Int(lowest)],
        )?;
        let present: std::collections::BTreeSet<i64> = rows
            .iter()
            .filter_map(|r| r.first().and_then(Value::int))
            .collect();
        found.checked += acked.len() as u64;
        for ack in acked.iter().filter(|a| !present.contains(&a.o_id)) {
            found.lost += 1;
            if found.first_lost.is_none_or(|f| ack.at_ns < f.at_ns) {
                found.first_lost = Some(*ack);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_monotonic_clock_moves_forward() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(a > 0 && b >= a);
    }
}
