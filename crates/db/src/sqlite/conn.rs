//! One SQLite connection as a [`Conn`]: `$n` parameters bound as `?n`, statements cached,
//! busy and locked databases reported as retryable, page-cache counters published to the
//! database's totals at every transaction end.

use super::status::{advance, raw_cache_counters, CacheCounters};
use super::CacheTotals;
use crate::backend::{Conn, Db, DbError, ErrorKind, Row, Value};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode, ToSql};
use std::sync::Arc;

/// Rows per transaction of a bulk load.
const BULK_BATCH_ROWS: usize = 1000;
/// Attempts at a batch that finds the database busy.
const BULK_TRIES: u32 = 10;

/// A connection and what it reports to its database.
pub(crate) struct SqliteConn {
    conn: Connection,
    /// The database file, for messages.
    path: String,
    totals: Arc<CacheTotals>,
    last: CacheCounters,
}

impl SqliteConn {
    pub(crate) fn new(conn: Connection, path: String, totals: Arc<CacheTotals>) -> SqliteConn {
        let last = raw_cache_counters(&conn);
        SqliteConn {
            conn,
            path,
            totals,
            last,
        }
    }

    /// Adds what this connection's page cache did since the last call to the database's totals.
    fn publish(&mut self) {
        let now = raw_cache_counters(&self.conn);
        self.totals.add(&advance(&mut self.last, now));
    }

    fn error(&self, e: rusqlite::Error, sql: &str) -> DbError {
        sqlite_error(e, &self.path, sql)
    }

    fn run_batch(&mut self, sql: &str) -> Result<(), DbError> {
        (self.totals.timed(|| self.conn.execute_batch(sql)))
            .map_err(|e| sqlite_error(e, &self.path, sql))
    }

    /// Inserts `rows` with the cached statement `sql` inside one transaction.
    fn insert_batch(&mut self, sql: &str, rows: &[Row]) -> Result<(), DbError> {
        let own_transaction = self.conn.is_autocommit();
        if own_transaction {
            self.begin()?;
        }
        let inserted = (|| {
            let mut stmt = self.conn.prepare_cached(sql)?;
            for row in rows {
                stmt.execute(rusqlite::params_from_iter(row.iter().map(Param)))?;
            }
            Ok(())
        })()
        .map_err(|e| self.error(e, sql));
        match inserted {
            Ok(()) if own_transaction => self.commit(),
            Ok(()) => Ok(()),
            Err(e) => {
                if own_transaction {
                    self.rollback()?;
                }
                Err(e)
            }
        }
    }
}

impl Drop for SqliteConn {
    fn drop(&mut self) {
        self.publish();
    }
}

/// A rusqlite error as a [`DbError`]: busy or locked is [`ErrorKind::Retry`].
fn sqlite_error(e: rusqlite::Error, path: &str, sql: &str) -> DbError {
    let retry = matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    );
    DbError {
        kind: if retry {
            ErrorKind::Retry
        } else {
            ErrorKind::Other
        },
        message: format!("SQLite database {path}: {e} (statement: {})", sql.trim()),
    }
}

/// `$n` placeholders as SQLite's `?n` (outside string literals and quoted names).
pub(crate) fn translate_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) => {
                out.push('?');
                continue;
            }
            None => {}
        }
        out.push(c);
    }
    out
}

/// A [`Value`] bound to a SQLite parameter without copying.
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Float(f) => ValueRef::Real(*f),
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
        }))
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Float(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::Text(String::from_utf8_lossy(t).into()),
    }
}

impl Conn for SqliteConn {
    fn kind(&self) -> Db {
        Db::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let run = || {
            let mut stmt = self.conn.prepare_cached(&translate_placeholders(sql))?;
            stmt.execute(rusqlite::params_from_iter(params.iter().map(Param)))
        };
        (self.totals.timed(run))
            .map(|n| n as u64)
            .map_err(|e| self.error(e, sql))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let run = || {
            let mut stmt = self.conn.prepare_cached(&translate_placeholders(sql))?;
            let columns = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(params.iter().map(Param)))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                out.push(
                    (0..columns)
                        .map(|i| row.get_ref(i).map(value))
                        .collect::<rusqlite::Result<Row>>()?,
                );
            }
            Ok(out)
        };
        (self.totals.timed(run)).map_err(|e| self.error(e, sql))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.run_batch(sql)
    }

    /// `BEGIN IMMEDIATE`: SQLite has one writer at a time, and a transaction that read first
    /// and then wants to write fails at once when another committed meanwhile; taking the
    /// write lock at the start makes the others wait (up to `busy_timeout`) instead.
    fn begin(&mut self) -> Result<(), DbError> {
        self.run_batch("BEGIN IMMEDIATE")
    }

    fn commit(&mut self) -> Result<(), DbError> {
        let done = self.run_batch("COMMIT");
        self.publish();
        done
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        // A BEGIN that failed as busy left no transaction to roll back.
        let done = if self.conn.is_autocommit() {
            Ok(())
        } else {
            self.run_batch("ROLLBACK")
        };
        self.publish();
        done
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn Iterator<Item = Row>,
    ) -> Result<u64, DbError> {
        let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            columns.join(", "),
            placeholders.join(", ")
        );
        let mut loaded = 0u64;
        let mut batch: Vec<Row> = Vec::with_capacity(BULK_BATCH_ROWS);
        loop {
            batch.clear();
            batch.extend((&mut *rows).take(BULK_BATCH_ROWS));
            if batch.is_empty() {
                return Ok(loaded);
            }
            if let Some(bad) = batch.iter().find(|r| r.len() != columns.len()) {
                return Err(DbError::other(format!(
                    "loading {table} into SQLite database {}: a row has {} values for {} columns",
                    self.path,
                    bad.len(),
                    columns.len()
                )));
            }
            // Parallel loaders take turns at SQLite's single write lock: a batch that found it
            // busy beyond busy_timeout is tried again whole, a few times.
            let mut tries = 0;
            loop {
                tries += 1;
                match self.insert_batch(&sql, &batch) {
                    Err(e) if e.kind == ErrorKind::Retry && tries < BULK_TRIES => continue,
                    done => break done?,
                }
            }
            loaded += batch.len() as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_numbered_question_marks_outside_quotes() {
        assert_eq!(
            translate_placeholders(
                "SELECT a FROM t WHERE b = $1 AND c = $12 AND d = '$2' || \"$3\""
            ),
            "SELECT a FROM t WHERE b = ?1 AND c = ?12 AND d = '$2' || \"$3\""
        );
        assert_eq!(translate_placeholders("SELECT '$' || $"), "SELECT '$' || $");
    }
}
