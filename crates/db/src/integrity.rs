//! What a database's own integrity check found in it, whichever database and tool: after a
//! crash state's recovery, the corruption half of the answer (the other half, commits the
//! client saw acknowledged and the database lost, is [`crate::tpcc::lost_commits`]).

use crate::backend::{Conn, DbError, Value};

/// What one integrity check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageCheck {
    /// The tool or statement: `pg_amcheck`, `pg_checksums`, `PRAGMA integrity_check`.
    pub tool: &'static str,
    /// Problems it reported (corrupt pages, index entries without their row, bad checksums).
    pub problems: u64,
    /// The first problem in its words.
    pub first: Option<String>,
}

impl PageCheck {
    /// True if it found nothing wrong.
    pub fn clean(&self) -> bool {
        self.problems == 0
    }
}

/// SQLite's `PRAGMA integrity_check` on `conn`: one row `ok`, or a row per problem (at most
/// 100). A database too damaged to be read at all is one problem, in SQLite's words.
pub fn sqlite_integrity_check(conn: &mut dyn Conn) -> PageCheck {
    let tool = "PRAGMA integrity_check";
    let rows = match conn.query("PRAGMA integrity_check", &[]) {
        Ok(rows) => rows,
        Err(DbError { message, .. }) => {
            return PageCheck {
                tool,
                problems: 1,
                first: Some(message),
            }
        }
    };
    // A row may hold several problems, one a line, under a `*** in database main ***` heading.
    let lines: Vec<String> = (rows.iter())
        .filter_map(|r| r.first().and_then(Value::text))
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "ok" && !l.starts_with("*** in database"))
        .map(str::to_string)
        .collect();
    PageCheck {
        tool,
        problems: lines.len() as u64,
        first: lines.into_iter().next(),
    }
}
