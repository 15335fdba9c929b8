//! MariaDB's bulk path for [`Conn::bulk_load`]: multi-row `INSERT`s of up to 1,000 rows
//! (fewer when the columns would pass MariaDB's 65,535 placeholders), prepared once per size and
//! run in one transaction, so a failed load leaves nothing. (`LOAD DATA LOCAL INFILE` would be
//! faster; it is for later.)

use crate::backend::{Conn, DbError, Row, Value};
use crate::postgres::client::is_identifier;

/// Rows in one statement, at most.
const ROWS: usize = 1000;

/// MariaDB's limit on the placeholders of one statement.
const PLACEHOLDERS: usize = 65_535;

/// Loads `rows` into `table`; the rows loaded.
pub(super) fn load(
    conn: &mut impl Conn,
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
    if columns.is_empty() {
        return Err(DbError::other(format!(
            "bulk load into {table}: no columns given"
        )));
    }
    let per = ROWS.min(PLACEHOLDERS / columns.len()).max(1);
    conn.begin()?;
    match insert_all(conn, table, columns, rows, per) {
        Ok(n) => conn.commit().map(|_| n),
        Err(e) => {
            // The load's own error says what went wrong; a failed rollback adds nothing.
            let _ = conn.rollback();
            Err(e)
        }
    }
}

fn insert_all(
    conn: &mut impl Conn,
    table: &str,
    columns: &[&str],
    rows: &mut dyn Iterator<Item = Row>,
    per: usize,
) -> Result<u64, DbError> {
    let mut loaded = 0u64;
    let mut chunk: Vec<Value> = Vec::with_capacity(per * columns.len());
    let mut in_chunk = 0usize;
    for (n, row) in rows.enumerate() {
        if row.len() != columns.len() {
            return Err(DbError::other(format!(
                "bulk load into {table}: row {} has {} values for {} columns",
                n + 1,
                row.len(),
                columns.len()
            )));
        }
        chunk.extend(row);
        in_chunk += 1;
        if in_chunk == per {
            loaded += conn.execute(&insert(table, columns, in_chunk), &chunk)?;
            chunk.clear();
            in_chunk = 0;
        }
    }
    if in_chunk > 0 {
        loaded += conn.execute(&insert(table, columns, in_chunk), &chunk)?;
    }
    Ok(loaded)
}

/// `INSERT INTO table (a, b) VALUES ($1, $2), ($3, $4), ...` for `rows` rows.
fn insert(table: &str, columns: &[&str], rows: usize) -> String {
    let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
    let mut n = 0;
    for r in 0..rows {
        if r > 0 {
            sql.push_str(", ");
        }
        let marks: Vec<String> = (0..columns.len())
            .map(|_| {
                n += 1;
                format!("${n}")
            })
            .collect();
        sql.push_str(&format!("({})", marks.join(", ")));
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::insert;

    #[test]
    fn one_statement_inserts_many_rows() {
        assert_eq!(
            insert("t", &["a", "b"], 2),
            "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)"
        );
    }
}
