//! TPC-C as the specification and HammerDB run it: the nine tables ([`schema`]), the initial
//! population as pure row generators ([`populate`]) loaded in parallel ([`load`]), the five
//! transactions, terminals under the engine's run harness ([`run()`]), and the consistency
//! conditions checked after a run ([`consistency`]). See `docs/tpcc.md` for what differs from
//! the specification.

pub mod acknowledged;
pub mod consistency;
pub mod inputs;
pub mod load;
pub mod populate;
pub mod procedure_sql;
pub mod procedures;
pub mod random;
mod run;
pub mod schema;
pub mod transactions;

pub use acknowledged::{lost_commits, Ack, LostCommits};
pub use consistency::{check_consistency, ConditionResult};
pub use load::{check_row_counts, load, load_until, load_with_keys, LoadReport};
pub use populate::Population;
pub use run::{run, run_warming, TpccRun};
pub use schema::Table;

use crate::backend::{Db, DbError};
use std::time::Duration;

/// What a TPC-C load or run is asked to do.
#[derive(Clone, Debug, PartialEq)]
pub struct TpccPlan {
    /// Warehouses (the scale: 100,000 stock rows and 30,000 customers each).
    pub warehouses: u32,
    /// Terminals: one thread and one connection each; terminal t's home warehouse is
    /// t % warehouses + 1.
    pub terminals: u32,
    /// The measured time.
    pub runtime: Duration,
    /// Warm-up before it.
    pub ramp: Duration,
    /// Transactions per second over all terminals (open loop); `None`: each terminal starts
    /// its next transaction as soon as the last ended (closed loop).
    pub rate_tps: Option<f64>,
    /// Seed of the population and of the terminals' choices; a run must use its load's seed
    /// (the run's NURand constant for last names is derived from the load's).
    pub seed: u64,
    /// Connections loading warehouses at the same time.
    pub load_threads: u32,
    /// PostgreSQL and MariaDB: each transaction is one call of a stored procedure (PL/pgSQL
    /// function, MariaDB procedure) created at load time ([`procedures`]), as HammerDB runs
    /// TPC-C; `false`: the client sends each statement ([`transactions`]).
    pub procedures: bool,
    /// Keep a journal of the New-Orders the terminals saw committed
    /// ([`TpccRun::acknowledged`]), for a durability check after a crash.
    pub journal: bool,
}

impl TpccPlan {
    /// Checks the plan makes sense.
    pub fn validate(&self) -> Result<(), TpccError> {
        let fail = |what: &str| Err(TpccError::Plan(what.to_string()));
        if self.warehouses == 0 {
            return fail("warehouses must be at least 1");
        }
        if self.terminals == 0 {
            return fail("terminals must be at least 1");
        }
        if self.load_threads == 0 {
            return fail("load_threads must be at least 1");
        }
        if let Some(rate) = self.rate_tps {
            if !(rate.is_finite() && rate > 0.0) {
                return fail("rate_tps must be a positive number of transactions per second");
            }
        }
        Ok(())
    }

    /// Checks the plan can run on a database of `kind`: SQLite has no stored procedures.
    pub fn validate_for(&self, kind: Db) -> Result<(), TpccError> {
        self.validate()?;
        if self.procedures && !crate::dialect::dialect(kind).has_procedures() {
            return Err(TpccError::Plan(
                "procedures=true needs PostgreSQL or MariaDB (SQLite has no stored \
                 procedures); set procedures=false"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// Why a TPC-C load or check failed.
#[derive(Debug, thiserror::Error)]
pub enum TpccError {
    /// A database call failed.
    #[error("TPC-C {what}: {source}")]
    Database {
        /// What was being done.
        what: String,
        /// The database's error.
        #[source]
        source: DbError,
    },
    /// A table does not hold the rows the specification prescribes.
    #[error(
        "TPC-C table {table} has {found} rows where {warehouses} warehouse(s) need {expected}: \
         the load did not complete or the database was changed; load it again"
    )]
    RowCount {
        /// The table.
        table: &'static str,
        /// What it should hold.
        expected: String,
        /// What it holds.
        found: i64,
        /// The warehouses checked for.
        warehouses: i64,
    },
    /// The plan cannot be run.
    #[error("TPC-C plan: {0}")]
    Plan(String),
    /// The load was stopped on request (Ctrl-C) before it finished.
    #[error("the TPC-C load was interrupted")]
    Interrupted,
}
