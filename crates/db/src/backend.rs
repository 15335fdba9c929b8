//! What every database bakeoff drives offers: connections that run parameterised SQL, with
//! explicit transactions and a bulk-load path. SQL is written once for PostgreSQL, SQLite and
//! MariaDB (what each spells its own way is its dialect's, in `dialect.rs`): parameters are
//! `$1`, `$2`, ... (each backend binds them in its own way), integers are 64-bit (`bigint`),
//! money is integer cents, times are microseconds since the Unix epoch.

use std::fmt;

/// One value bound to a parameter or read from a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A 64-bit integer (`bigint`).
    Int(i64),
    /// A double (`double precision` / `REAL`).
    Float(f64),
    /// Text.
    Text(String),
}

impl Value {
    /// The integer, if this is one.
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The text, if this is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

/// A row of a result.
pub type Row = Vec<Value>;

/// Why a database call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// A conflict the transaction may be retried after: serialization failure, deadlock, a
    /// busy SQLite database.
    Retry,
    /// The transaction was rolled back on purpose (TPC-C's 1 % of New-Orders with an unused
    /// item number).
    Rollback,
    /// Anything else: the run fails.
    Other,
}

/// A database error: what kind, and the database's own message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DbError {
    /// What the caller can do about it.
    pub kind: ErrorKind,
    /// The database's message, with the statement when known.
    pub message: String,
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl DbError {
    /// An error the run cannot go on after.
    pub fn other(message: impl Into<String>) -> DbError {
        DbError {
            kind: ErrorKind::Other,
            message: message.into(),
        }
    }
}

/// One connection (a TPC-C terminal owns one). Statements are prepared on first use and kept.
pub trait Conn: Send {
    /// Which database it is connected to: the SQL that differs is its dialect's (`dialect.rs`).
    fn kind(&self) -> Db;
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs a query; returns its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Runs one or more statements without parameters (DDL, `ANALYZE`).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Starts a transaction.
    fn begin(&mut self) -> Result<(), DbError>;
    /// Commits it.
    fn commit(&mut self) -> Result<(), DbError>;
    /// Rolls it back.
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Loads `rows` into `table` (`columns` in order) by the database's bulk path: `COPY ...
    /// FROM STDIN` for PostgreSQL, batched prepared inserts in transactions for SQLite.
    /// Returns the rows loaded.
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn Iterator<Item = Row>,
    ) -> Result<u64, DbError>;
}

/// Which database: core's one enum of them, the plan's and the backend's alike.
pub use bakeoff_core::dbplan::Db;

/// A database that hands out connections.
pub trait Database: Send + Sync {
    /// Which database this is.
    fn kind(&self) -> Db;
    /// A new connection.
    fn connect(&self) -> Result<Box<dyn Conn>, DbError>;
}
