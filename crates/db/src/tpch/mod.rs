//! TPC-H as seed 002 stood it up, phase by phase, on PostgreSQL and SQLite: the eight tables
//! made without keys ([`schema`]); the data streamed from the `tpchgen` generator ([`rows`])
//! into each database's bulk path on parallel connections, with no interim file, and its row
//! counts checked ([`load`]); the secondary indexes, the primary and foreign keys ([`keys`]);
//! statistics; then the 22 queries with the validation parameters ([`queries`]), each timed,
//! and their answers checked ([`answers`]) against those made before the run ([`expected`]).
//! [`Tpch`] runs each phase and says what it did ([`PhaseReport`]). See `docs/tpch.md`.

pub mod answers;
pub mod expected;
pub mod keys;
pub mod load;
mod phases;
pub mod queries;
pub mod rows;
pub mod schema;

pub use answers::{Answers, WrongAnswer};
pub use load::check_row_counts;
pub use phases::Tpch;
pub use queries::QueryReport;
pub use rows::init_generator;
pub use schema::Table;

use crate::backend::DbError;
use std::time::Duration;

/// The names of the phases as recipe actions (`tpch.schema`, ...), in the order they run.
pub mod action {
    /// Drops any TPC-H tables and creates them without keys.
    pub const SCHEMA: &str = "tpch.schema";
    /// Generates and loads the data, then checks each table's rows.
    pub const LOAD: &str = "tpch.load";
    /// Builds the secondary indexes.
    pub const INDEXES: &str = "tpch.indexes";
    /// Adds the primary and foreign keys.
    pub const KEYS: &str = "tpch.keys";
    /// Gathers the optimiser's statistics.
    pub const ANALYZE: &str = "tpch.analyze";
    /// Runs the 22 queries.
    pub const QUERIES: &str = "tpch.queries";
}

/// A phase of a TPC-H run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// [`action::SCHEMA`].
    Schema,
    /// [`action::LOAD`].
    Load,
    /// [`action::INDEXES`].
    Indexes,
    /// [`action::KEYS`].
    Keys,
    /// [`action::ANALYZE`].
    Analyze,
    /// [`action::QUERIES`].
    Queries,
}

impl Phase {
    /// Every phase, in the order a run takes them.
    pub const ALL: [Phase; 6] = [
        Phase::Schema,
        Phase::Load,
        Phase::Indexes,
        Phase::Keys,
        Phase::Analyze,
        Phase::Queries,
    ];

    /// Its name as a recipe action.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Schema => action::SCHEMA,
            Phase::Load => action::LOAD,
            Phase::Indexes => action::INDEXES,
            Phase::Keys => action::KEYS,
            Phase::Analyze => action::ANALYZE,
            Phase::Queries => action::QUERIES,
        }
    }

    /// The phase a recipe action names, if it names one.
    pub fn from_name(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What a TPC-H run is asked to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TpchPlan {
    /// The scale factor: 1 is about 1 GB of generated text (6 million line items).
    pub sf: f64,
    /// Connections loading parts of the tables at the same time.
    pub load_threads: u32,
}

/// The smallest scale factor: below it the tables are too small for the queries to mean much
/// (SUPPLIER would have fewer than 100 rows).
pub const MIN_SF: f64 = 0.01;
/// The largest scale factor TPC-H defines.
pub const MAX_SF: f64 = 100_000.0;

impl TpchPlan {
    /// Checks the plan makes sense.
    pub fn validate(&self) -> Result<(), TpchError> {
        if !(MIN_SF..=MAX_SF).contains(&self.sf) {
            return Err(TpchError::Plan(format!(
                "sf={} is out of range: the scale factor must be between {MIN_SF} and {MAX_SF} \
                 (1 is about 1 GB of data)",
                self.sf
            )));
        }
        if self.load_threads == 0 {
            return Err(TpchError::Plan("load_threads must be at least 1".into()));
        }
        Ok(())
    }
}

/// One step of a phase: a table loaded, an index or key built, a query run.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// What it was: the table, index, constraint, or `Q1` to `Q22`.
    pub name: String,
    /// Rows loaded or returned (0 for DDL).
    pub rows: u64,
    /// Its wall-clock time (for a table loaded in parts, from the first part's start to the
    /// last part's end).
    pub elapsed: Duration,
}

/// What a phase did.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseReport {
    /// Which phase.
    pub phase: Phase,
    /// Its wall-clock time, from its first statement to its last (the load's row-count check
    /// included).
    pub elapsed: Duration,
    /// Rows loaded (`tpch.load`) or returned by the queries (`tpch.queries`); 0 otherwise.
    pub rows: u64,
    /// Its steps, in order.
    pub steps: Vec<Step>,
}

/// Why a TPC-H phase failed.
#[derive(Debug, thiserror::Error)]
pub enum TpchError {
    /// A database call failed.
    #[error("TPC-H {what}: {source}")]
    Database {
        /// What was being done.
        what: String,
        /// The database's error.
        #[source]
        source: DbError,
    },
    /// A query failed.
    #[error("TPC-H Q{number} ({name}): {source}")]
    Query {
        /// 1 to 22.
        number: u8,
        /// Its title.
        name: &'static str,
        /// The database's error.
        #[source]
        source: DbError,
    },
    /// A table does not hold the rows the scale factor prescribes.
    #[error(
        "TPC-H table {table} has {found} rows where scale factor {sf} needs {expected}: the \
         load did not complete or the database was changed; run tpch.schema and tpch.load again"
    )]
    RowCount {
        /// The table.
        table: &'static str,
        /// What it should hold.
        expected: i64,
        /// What it holds.
        found: i64,
        /// The scale factor checked for.
        sf: f64,
    },
    /// Rows refer to rows that do not exist (SQLite's foreign key check).
    #[error(
        "TPC-H foreign key {key}: {orphans} rows of {table} refer to no row of {references}; \
         the data is not what tpch.load makes: run tpch.schema and tpch.load again"
    )]
    Orphans {
        /// The constraint.
        key: &'static str,
        /// The referring table.
        table: &'static str,
        /// The table referred to.
        references: &'static str,
        /// How many rows refer to nothing.
        orphans: i64,
    },
    /// The plan or the request cannot be run.
    #[error("TPC-H: {0}")]
    Plan(String),
    /// Queries answered other than they must on the data the scale factor generates.
    #[error(
        "TPC-H answers differ from {}: {}; the data on the stack is not what tpch.load \
         wrote, or the database planned a query wrongly",
        .against.describe(),
        .wrong.iter().map(|w| w.to_string()).collect::<Vec<_>>().join("; ")
    )]
    WrongAnswers {
        /// What the answers were checked against.
        against: answers::Source,
        /// The queries that differ, in order.
        wrong: Vec<WrongAnswer>,
    },
    /// The phase was stopped on request (Ctrl-C) before it finished.
    #[error("TPC-H {phase} was interrupted")]
    Interrupted {
        /// The phase's action name.
        phase: &'static str,
    },
}

/// A closure turning a [`DbError`] into [`TpchError::Database`] about `what`.
fn database_error(what: impl Into<String>) -> impl FnOnce(DbError) -> TpchError {
    let what = what.into();
    move |source| TpchError::Database { what, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_named_as_recipe_actions_and_found_by_name() {
        let names: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(
            names,
            [
                "tpch.schema",
                "tpch.load",
                "tpch.indexes",
                "tpch.keys",
                "tpch.analyze",
                "tpch.queries"
            ]
        );
        for phase in Phase::ALL {
            assert_eq!(Phase::from_name(phase.name()), Some(phase));
        }
        assert_eq!(Phase::from_name("tpch.query"), None);
    }

    #[test]
    fn a_plan_out_of_range_says_what_is_allowed() {
        let plan = |sf, load_threads| TpchPlan { sf, load_threads };
        assert!(plan(0.01, 1).validate().is_ok() && plan(100.0, 8).validate().is_ok());
        for bad in [0.0, 0.001, -1.0, f64::NAN, f64::INFINITY, 1e6] {
            let err = plan(bad, 2).validate().unwrap_err().to_string();
            assert!(err.contains("between 0.01 and 100000"), "{bad}: {err}");
        }
        let err = plan(1.0, 0).validate().unwrap_err().to_string();
        assert!(err.contains("load_threads"), "{err}");
    }
}
