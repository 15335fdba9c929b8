//! A connection to a managed MariaDB server over its private unix socket, as `root` (with no
//! password: only the socket's 0700 directory reaches it): bakeoff's `$n`-parameterised SQL
//! ([`crate::Conn`]) rewritten once per statement to MariaDB's `?` (a `$n` used twice is bound
//! twice), run as prepared statements the client caches by their text; text-protocol reads for
//! `SHOW` statements. Deadlocks (error 1213) and lock-wait timeouts (1205) are
//! [`ErrorKind::Retry`]; every other error is [`ErrorKind::Other`] with the server's message
//! and the statement.

use crate::backend::{Conn, Database, Db, DbError, ErrorKind, Row, Value};
use mysql::prelude::Queryable;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The MariaDB user bakeoff connects as (`mariadb-install-db --auth-root-authentication-method
/// =normal` makes it, with no password).
pub const USER: &str = "root";

/// Prepared statements a connection keeps (TPC-C has about thirty).
const STATEMENT_CACHE: usize = 256;

/// MariaDB's error numbers that mean "try the transaction again".
const RETRY_CODES: [u16; 2] = [1213, 1205];

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

    fn simple(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.query_drop(sql).map_err(|e| classify(&e, sql))
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
        Ok((changed, rows))
    }
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

fn to_mysql(v: &Value) -> mysql::Value {
    match v {
        Value::Null => mysql::Value::NULL,
        Value::Int(i) => mysql::Value::Int(*i),
        Value::Float(f) => mysql::Value::Double(*f),
        Value::Text(t) => mysql::Value::Bytes(t.clone().into_bytes()),
    }
}

/// A value read back: integers as integers (an unsigned one past `i64` as text), floating
/// point as `Float`, everything else as text (a `DECIMAL`'s digits, a `DATE` as `YYYY-MM-DD`).
fn from_mysql(v: mysql::Value) -> Value {
    use mysql::Value as M;
    match v {
        M::NULL => Value::Null,
        M::Int(i) => Value::Int(i),
        M::UInt(u) => i64::try_from(u).map_or_else(|_| Value::Text(u.to_string()), Value::Int),
        M::Float(f) => Value::Float(f64::from(f)),
        M::Double(f) => Value::Float(f),
        M::Bytes(b) => Value::Text(String::from_utf8_lossy(&b).into_owned()),
        M::Date(y, mo, d, 0, 0, 0, 0) => Value::Text(format!("{y:04}-{mo:02}-{d:02}")),
        M::Date(y, mo, d, h, mi, s, us) => Value::Text(format!(
            "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{}",
            fraction(us)
        )),
        M::Time(neg, days, h, mi, s, us) => Value::Text(format!(
            "{}{:02}:{mi:02}:{s:02}{}",
            if neg { "-" } else { "" },
            u64::from(days) * 24 + u64::from(h),
            fraction(us)
        )),
    }
}

fn fraction(us: u32) -> String {
    match us {
        0 => String::new(),
        us => format!(".{us:06}"),
    }
}

/// A client error of `sql`, classified.
pub fn classify(e: &mysql::Error, sql: &str) -> DbError {
    match e {
        mysql::Error::MySqlError(m) => DbError {
            kind: match RETRY_CODES.contains(&m.code) {
                true => ErrorKind::Retry,
                false => ErrorKind::Other,
            },
            message: format!("ERROR {} ({}): {}, in: {sql}", m.code, m.state, m.message),
        },
        other => DbError::other(format!("{other}, in: {sql}")),
    }
}

impl Conn for MyConn {
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
    fn values_read_back_as_bakeoffs() {
        use mysql::Value as M;
        assert_eq!(from_mysql(M::UInt(7)), Value::Int(7));
        assert_eq!(
            from_mysql(M::UInt(u64::MAX)),
            Value::Text(u64::MAX.to_string())
        );
        assert_eq!(
            from_mysql(M::Bytes(b"15.20".to_vec())),
            Value::Text("15.20".into())
        );
        assert_eq!(
            from_mysql(M::Date(2026, 11, 6, 0, 0, 0, 0)),
            Value::Text("2026-11-06".into())
        );
        assert_eq!(
            from_mysql(M::Date(2026, 11, 6, 9, 5, 1, 42)),
            Value::Text("2026-11-06 09:05:01.000042".into())
        );
        assert_eq!(
            from_mysql(M::Time(true, 1, 2, 3, 4, 0)),
            Value::Text("-26:03:04".into())
        );
        assert_eq!(to_mysql(&Value::Float(1.5)), M::Double(1.5));
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
