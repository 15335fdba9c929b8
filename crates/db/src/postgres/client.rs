//! The [`Database`] of a managed server: one `postgres::Client` per connection over the
//! server's private unix socket, as the `postgres` role; statements prepared on first use and
//! kept by their SQL; `COPY ... FROM STDIN` as the bulk path. Serialization failures and
//! deadlocks (SQLSTATE 40001, 40P01) are [`ErrorKind::Retry`], TPC-C's deliberate New-Order
//! rollback raised by its function ([`ROLLBACK_SQLSTATE`]) is [`ErrorKind::Rollback`]; every
//! other error is [`ErrorKind::Other`] with the server's message and the statement.

use super::values::{copy_field, Param};
use crate::backend::{Conn, Database, Db, DbError, ErrorKind, Row, Value};
use crate::tpcc::procedure_sql::ROLLBACK_SQLSTATE;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, NoTls, Statement};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The role bakeoff connects as (initdb's superuser).
pub const ROLE: &str = "postgres";

/// A managed server's database, handing out connections.
#[derive(Clone, Debug)]
pub struct PgDatabase {
    config: postgres::Config,
    socket_dir: PathBuf,
    dbname: String,
}

impl PgDatabase {
    /// Database `dbname` of the server listening in `socket_dir` on `port`.
    pub fn new(socket_dir: &Path, port: u16, dbname: &str) -> PgDatabase {
        let mut config = postgres::Config::new();
        config
            .host_path(socket_dir)
            .port(port)
            .user(ROLE)
            .dbname(dbname)
            .application_name("bakeoff")
            .connect_timeout(Duration::from_secs(30));
        PgDatabase {
            config,
            socket_dir: socket_dir.to_path_buf(),
            dbname: dbname.to_string(),
        }
    }

    /// The same server's database `dbname`.
    pub fn with_dbname(&self, dbname: &str) -> PgDatabase {
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        PgDatabase::new(&self.socket_dir, port, dbname)
    }

    /// The database's name.
    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    /// A new connection, typed (for what only PostgreSQL has: [`PgConn::client`]).
    pub fn connect_pg(&self) -> Result<PgConn, DbError> {
        let client = self.config.connect(NoTls).map_err(|e| {
            DbError::other(format!(
                "connecting to database {} on the socket in {}: {e}",
                self.dbname,
                self.socket_dir.display()
            ))
        })?;
        Ok(PgConn {
            client,
            statements: HashMap::new(),
        })
    }
}

impl Database for PgDatabase {
    fn kind(&self) -> Db {
        Db::Postgres
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        Ok(Box::new(self.connect_pg()?))
    }
}

/// One connection with its prepared statements.
pub struct PgConn {
    client: Client,
    statements: HashMap<String, Statement>,
}

/// A database error of `sql`, classified.
pub fn classify(e: &postgres::Error, sql: &str) -> DbError {
    let retry = [
        SqlState::T_R_SERIALIZATION_FAILURE,
        SqlState::T_R_DEADLOCK_DETECTED,
    ];
    let kind = match e.code() {
        Some(code) if retry.contains(code) => ErrorKind::Retry,
        Some(code) if code.code() == ROLLBACK_SQLSTATE => ErrorKind::Rollback,
        _ => ErrorKind::Other,
    };
    let message = match e.as_db_error() {
        Some(db) => {
            let detail = db.detail().map(|d| format!(" ({d})")).unwrap_or_default();
            let (severity, code) = (db.severity(), db.code().code());
            format!("{severity} {code}: {}{detail}, in: {sql}", db.message())
        }
        None => format!("{e}, in: {sql}"),
    };
    DbError { kind, message }
}

impl PgConn {
    /// The underlying client, for what the [`Conn`] interface does not cover.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// The prepared statement of `sql`, prepared now if this connection has not yet.
    fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).map_err(|e| classify(&e, sql))?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.client
            .batch_execute(sql)
            .map_err(|e| classify(&e, sql))
    }
}

fn bound(params: &[Value]) -> Vec<Param<'_>> {
    params.iter().map(Param).collect()
}

fn refs<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Conn for PgConn {
    fn kind(&self) -> Db {
        Db::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let statement = self.statement(sql)?;
        let params = bound(params);
        self.client
            .execute(&statement, &refs(&params))
            .map_err(|e| classify(&e, sql))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let statement = self.statement(sql)?;
        let params = bound(params);
        let rows = self
            .client
            .query(&statement, &refs(&params))
            .map_err(|e| classify(&e, sql))?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get::<_, Value>(i).map_err(|e| classify(&e, sql)))
                    .collect()
            })
            .collect()
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.simple(sql)
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.simple("BEGIN")
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.simple("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.simple("ROLLBACK")
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn Iterator<Item = Row>,
    ) -> Result<u64, DbError> {
        for name in std::iter::once(&table).chain(columns) {
            if !is_identifier(name) {
                return Err(DbError::other(format!(
                    "bulk load into {table}: {name:?} is not a plain SQL name"
                )));
            }
        }
        let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(", "));
        let mut writer = self.client.copy_in(&sql).map_err(|e| classify(&e, &sql))?;
        let mut chunk = String::with_capacity(CHUNK + 4096);
        for (n, row) in rows.enumerate() {
            if row.len() != columns.len() {
                // Dropping the writer unfinished aborts the COPY: nothing of it stays.
                return Err(DbError::other(format!(
                    "bulk load into {table}: row {} has {} values for {} columns",
                    n + 1,
                    row.len(),
                    columns.len()
                )));
            }
            for (i, value) in row.iter().enumerate() {
                if i > 0 {
                    chunk.push('\t');
                }
                copy_field(value, &mut chunk);
            }
            chunk.push('\n');
            if chunk.len() >= CHUNK {
                writer.write_all(chunk.as_bytes()).map_err(|e| {
                    DbError::other(format!("bulk load into {table}: {e}, in: {sql}"))
                })?;
                chunk.clear();
            }
        }
        writer
            .write_all(chunk.as_bytes())
            .map_err(|e| DbError::other(format!("bulk load into {table}: {e}, in: {sql}")))?;
        writer.finish().map_err(|e| classify(&e, &sql))
    }
}

/// Bytes of COPY data sent at a time.
const CHUNK: usize = 64 << 10;

/// `name` or `schema.name`, letters, digits and underscores: safe to put in SQL unquoted.
pub(crate) fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').count() <= 2
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_go_into_copy_unquoted() {
        for ok in ["warehouse", "order_line", "public.stock", "_t1"] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in [
            "",
            "1abc",
            "a b",
            "t; drop table x",
            "a.b.c",
            "\"Quoted\"",
            "a.",
        ] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }
}
