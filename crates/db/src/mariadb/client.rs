//! A connection to a managed MariaDB server over its private unix socket, as `root` (with no
//! password: only the socket's 0700 directory reaches it): bakeoff's `$n`-parameterised SQL
//! ([`crate::Conn`]) rewritten once per statement to MariaDB's `?` (a `$n` used twice is bound
//! twice), run as prepared statements the client caches by their text; text-protocol reads for
//! `SHOW` statements. Deadlocks (error 1213) and lock-wait timeouts (1205) are
//! [`ErrorKind::Retry`], TPC-C's deliberate New-Order rollback raised by its procedure
//! ([`ROLLBACK_SQLSTATE`]) is [`ErrorKind::Rollback`]; every other error is
//! [`ErrorKind::Other`] with the server's message and the statement.

use super::values::{from_mysql, to_mysql};
use crate::backend::{Conn, Database, Db, DbError, ErrorKind, Row, Value};
use crate::tpcc::procedure_sql::ROLLBACK_SQLSTATE;
use mysql::prelude::Queryable;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The MariaDB user bakeoff connects as (`mariadb-install-db --auth-root-authentication-method
/// =normal` makes it, with no password).
pub const USER: &str = "root";

/// Prepared statements a connection keeps (TPC-C has about thirty).
const STATEMENT_CACHE: usize = 256;

/// MariaDB's error numbers that mean "try the transaction again": a deadlock, a lock-wait
/// timeout, and a row changed since the snapshot of a repeatable-read transaction (only with
/// `innodb_snapshot_isolation=ON`, 10.11's option, off by default).
const RETRY_CODES: [u16; 3] = [1213, 1205, 1020];

/// A managed server's benchmark database, as the workloads connect to it.
#[derive(Clone, Debug)]
pub struct MyDatabase {
    socket: PathBuf,
    dbname: String,
}

impl MyDatabase {
    /// The database `dbname` of the server listening on `socket`.
    pub fn new(socket: &Path, dbname: &str) -> MyDatabase {
        MyDatabase {
            socket: socket.to_path_buf(),
            dbname: dbname.to_string(),
        }
    }

    /// A connection of the concrete type (for what [`Conn`] does not cover).
    pub fn connect_my(&self) -> Result<MyConn, DbError> {
        MyConn::connect(&self.socket, Some(&self.dbname))
    }
}

impl Database for MyDatabase {
    fn kind(&self) -> Db {
        Db::Mariadb
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        Ok(Box::new(self.connect_my()?))
    }
}

/// One connection, with bakeoff's SQL rewritten for MariaDB (kept by the original text).
pub struct MyConn {
    conn: mysql::Conn,
    socket: PathBuf,
    rewritten: HashMap<String, Rewritten>,
}

/// A statement with `?` for its `$n`, and which parameter each `?` takes (0-based).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rewritten {
    sql: String,
    order: Vec<usize>,
}

impl MyConn {
    /// Connects to the server listening on `socket`, to database `db` (none when `None`).
    pub fn connect(socket: &Path, db: Option<&str>) -> Result<MyConn, DbError> {
        let opts = mysql::OptsBuilder::new()
            .socket(Some(socket.to_string_lossy()))
            .user(Some(USER))
            .db_name(db)
            .prefer_socket(false)
            .stmt_cache_size(STATEMENT_CACHE);
        let conn = mysql::Conn::new(opts).map_err(|e| {
            DbError::other(format!(
                "connecting to MariaDB on the socket {} (database {}): {e}",
                socket.display(),
                db.unwrap_or("none")
            ))
        })?;
        Ok(MyConn {
            conn,
            socket: socket.to_path_buf(),
            rewritten: HashMap::new(),
        })
    }

    /// The socket it is connected through.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The underlying client, for what the [`Conn`] interface does not cover.
    pub fn client(&mut self) -> &mut mysql::Conn {
        &mut self.conn
    }

    /// Runs `sql` (no parameters) by the text protocol; its rows as text (NULL as `None`).
    pub fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let rows: Vec<mysql::Row> = self.conn.query(sql).map_err(|e| classify(&e, sql))?;
        Ok(rows
            .into_iter()
            .map(|row| {
                row.unwrap()
                    .into_iter()
                    .map(|v| match from_mysql(v) {
                        Value::Null => None,
                        Value::Text(t) => Some(t),
                        Value::Int(i) => Some(i.to_string()),
                        Value::Float(f) => Some(f.to_string()),
                    })
                    .collect()
            })
            .collect())
    }

    /// A two-column `SHOW` (`SHOW GLOBAL STATUS`, `SHOW GLOBAL VARIABLES`) as a map.
    pub fn show(&mut self, sql: &str) -> Result<BTreeMap<String, String>, DbError> {
        Ok(self
            .text_rows(sql)?
            .into_iter()
            .filter_map(|r| {
                let mut r = r.into_iter();
                Some((r.next()??, r.next().flatten().unwrap_or_default()))
            })
            .collect())
    }

    fn rewritten(&mut self, sql: &str) -> Rewritten {
        if let Some(r) = self.rewritten.get(sql) {
            return r.clone();
        }
        let r = rewrite(sql);
        self.rewritten.insert(sql.to_string(), r.clone());
        r
    }

    /// Runs `sql`, one or more statements, by the text protocol. Every result is read: the
    /// client's `query_drop` would drop an error of a statement after the first unseen.
    fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        let mut result = self.conn.query_iter(sql).map_err(|e| classify(&e, sql))?;
        drain(&mut result, sql)
    }

    /// `sql` run as a prepared statement with `params` bound by its `$n`.
    fn run(&mut self, sql: &str, params: &[Value]) -> Result<(u64, Vec<Row>), DbError> {
        let r = self.rewritten(sql);
        let bound = r
            .order
            .iter()
            .map(|&i| {
                params.get(i).map(to_mysql).ok_or_else(|| {
                    DbError::other(format!(
                        "${} has no value ({} given), in: {sql}",
                        i + 1,
                        params.len()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let params = match bound.is_empty() {
            true => mysql::Params::Empty,
            false => mysql::Params::Positional(bound),
        };
        let mut result = self
            .conn
            .exec_iter(r.sql.as_str(), params)
            .map_err(|e| classify(&e, sql))?;
        // Read before the rows: the count goes with the result set the rows end.
        let changed = result.affected_rows();
        let mut rows = Vec::new();
        for row in result.by_ref() {
            let row = row.map_err(|e| classify(&e, sql))?;
            rows.push(row.unwrap().into_iter().map(from_mysql).collect());
        }
        // A CALL's results end with the procedure's status, which may be an error raised
        // after the rows were sent.
        drain(&mut result, sql)?;
        Ok((changed, rows))
    }
}

/// Reads the rest of `result` (of `sql`): an error a later statement raised is returned, where
/// dropping the result unread would hide it.
fn drain<P: mysql::prelude::Protocol>(
    result: &mut mysql::QueryResult<'_, '_, '_, P>,
    sql: &str,
) -> Result<(), DbError> {
    while let Some(set) = result.iter() {
        for row in set {
            row.map_err(|e| classify(&e, sql))?;
        }
    }
    Ok(())
}

/// `$n` placeholders outside quotes and identifiers become `?`; `order` says which parameter
/// each takes.
fn rewrite(sql: &str) -> Rewritten {
    let mut out = String::with_capacity(sql.len());
    let mut order = Vec::new();
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                out.push(c);
                out.extend(chars.next());
                continue;
            }
            (Some(q), _) if c == q => quote = None,
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '$') if chars.peek().is_some_and(char::is_ascii_digit) => {
                let mut n = 0usize;
                while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    n = n.saturating_mul(10).saturating_add(d as usize);
                    chars.next();
                }
                out.push('?');
                order.push(n.saturating_sub(1));
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    Rewritten { sql: out, order }
}

/// A client error of `sql`, classified.
pub fn classify(e: &mysql::Error, sql: &str) -> DbError {
    match e {
        mysql::Error::MySqlError(m) => DbError {
            kind: if RETRY_CODES.contains(&m.code) {
                ErrorKind::Retry
            } else if m.state == ROLLBACK_SQLSTATE {
                ErrorKind::Rollback
            } else {
                ErrorKind::Other
            },
            message: format!("ERROR {} ({}): {}, in: {sql}", m.code, m.state, m.message),
        },
        other => DbError::other(format!("{other}, in: {sql}")),
    }
}

impl Conn for MyConn {
    fn kind(&self) -> Db {
        Db::Mariadb
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        self.run(sql, params).map(|(changed, _)| changed)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        self.run(sql, params).map(|(_, rows)| rows)
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
        super::bulk::load(self, table, columns, rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_question_marks_outside_quotes() {
        let r = rewrite("SELECT $2, '$1', \"a\\\"$1\", `$3` FROM t WHERE a = $1 AND b = $2");
        assert_eq!(
            r.sql,
            "SELECT ?, '$1', \"a\\\"$1\", `$3` FROM t WHERE a = ? AND b = ?"
        );
        assert_eq!(r.order, vec![1, 0, 1], "a $n used twice is bound twice");
        assert_eq!(rewrite("SELECT 'it''s $1' , $10").order, vec![9]);
        assert_eq!(rewrite("SELECT $ + $a").sql, "SELECT $ + $a");
    }

    #[test]
    fn deadlocks_and_lock_waits_are_retryable() {
        let err = |code| {
            mysql::Error::MySqlError(mysql::MySqlError {
                state: "40001".into(),
                message: "Deadlock found".into(),
                code,
            })
        };
        assert_eq!(classify(&err(1213), "UPDATE t").kind, ErrorKind::Retry);
        assert_eq!(classify(&err(1205), "UPDATE t").kind, ErrorKind::Retry);
        assert_eq!(classify(&err(1020), "UPDATE t").kind, ErrorKind::Retry);
        let signalled = mysql::Error::MySqlError(mysql::MySqlError {
            state: ROLLBACK_SQLSTATE.into(),
            message: "New-Order: an item does not exist".into(),
            code: 1644,
        });
        assert_eq!(
            classify(&signalled, "CALL neword()").kind,
            ErrorKind::Rollback
        );
        let other = classify(&err(1062), "INSERT INTO t");
        assert_eq!(other.kind, ErrorKind::Other);
        assert!(
            other.message.contains("ERROR 1062 (40001)"),
            "{}",
            other.message
        );
        assert!(
            other.message.ends_with("in: INSERT INTO t"),
            "{}",
            other.message
        );
    }
}
