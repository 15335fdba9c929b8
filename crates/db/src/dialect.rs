//! The SQL that differs between databases, in one place. TPC-C's and TPC-H's statements are
//! written once and ask their database's [`Dialect`] for what it spells its own way; adding a
//! database is one more `impl Dialect` and its line in [`dialect`].

use crate::backend::Db;
use crate::tpcc::procedure_sql::{self, ProcedureSql};

/// A column type whose spelling differs between databases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// A 64-bit integer.
    BigInt,
    /// A decimal with two places (money).
    Decimal,
    /// A calendar date.
    Date,
}

/// What a database writes its own way.
pub trait Dialect: Sync {
    /// Whether TPC-C's primary keys are best made after the load (one sort per index) rather
    /// than with the tables.
    fn keys_after_load(&self) -> bool;
    /// What follows `CREATE TABLE (...)` for a table made with its primary key (SQLite's
    /// `WITHOUT ROWID`: stored in key order, no separate index).
    fn keyed_table_suffix(&self) -> &'static str;
    /// Adds a primary key named `name` on `columns` to a loaded `table`.
    fn add_primary_key(&self, table: &str, name: &str, columns: &str) -> String;
    /// Whether it adds foreign keys it validates itself; if not, each is checked by a query.
    fn has_foreign_keys(&self) -> bool;
    /// TPC-C's transactions as its stored procedures (`procedures=true`), if it has them.
    fn tpcc_procedures(&self) -> Option<&'static ProcedureSql>;
    /// Whether it runs stored procedures (TPC-C's `procedures=true`).
    fn has_procedures(&self) -> bool {
        self.tpcc_procedures().is_some()
    }
    /// Whether `UPDATE ... RETURNING` reads back the rows it changed; if not, TPC-C updates
    /// and then selects the same rows.
    fn update_returning(&self) -> bool;
    /// What follows a `SELECT` of rows the transaction goes on to delete, so that it reads
    /// their latest committed version, and waits for a transaction changing them, rather than
    /// an older snapshot (Delivery's oldest new order). Empty where each statement reads the
    /// latest anyway.
    fn latest_for_update(&self) -> &'static str;
    /// `expr` (a sum of integers, which some databases widen to a decimal) as a 64-bit integer.
    fn int_cast(&self, expr: &str) -> String;
    /// Gathers the optimizer's statistics of `tables`.
    fn analyze(&self, tables: &[&str]) -> String;
    /// How it spells `ty`.
    fn column_type(&self, ty: ColumnType) -> &'static str;
    /// What follows `DROP TABLE IF EXISTS t` so that tables referring to it do not stop it.
    fn drop_cascade(&self) -> &'static str;
    /// A date literal.
    fn date(&self, day: &str) -> String;
    /// `day` moved by `amount` `unit`s (day, month or year).
    fn date_shift(&self, day: &str, amount: i32, unit: &str) -> String;
    /// The year of a date column, as an integer.
    fn year(&self, column: &str) -> String;
}

/// PostgreSQL's SQL.
struct Postgres;

impl Dialect for Postgres {
    fn keys_after_load(&self) -> bool {
        true
    }
    fn keyed_table_suffix(&self) -> &'static str {
        ""
    }
    fn add_primary_key(&self, table: &str, name: &str, columns: &str) -> String {
        format!("ALTER TABLE {table} ADD CONSTRAINT {name} PRIMARY KEY ({columns})")
    }
    fn has_foreign_keys(&self) -> bool {
        true
    }
    fn tpcc_procedures(&self) -> Option<&'static ProcedureSql> {
        Some(&procedure_sql::POSTGRES)
    }
    fn update_returning(&self) -> bool {
        true
    }
    fn latest_for_update(&self) -> &'static str {
        // Read committed: each statement sees what was committed before it began.
        ""
    }
    fn int_cast(&self, expr: &str) -> String {
        format!("CAST({expr} AS bigint)")
    }
    fn analyze(&self, _tables: &[&str]) -> String {
        // Every table of the database.
        "ANALYZE".into()
    }
    fn column_type(&self, ty: ColumnType) -> &'static str {
        match ty {
            ColumnType::BigInt => "bigint",
            ColumnType::Decimal => "numeric(15,2)",
            ColumnType::Date => "date",
        }
    }
    fn drop_cascade(&self) -> &'static str {
        " CASCADE"
    }
    fn date(&self, day: &str) -> String {
        format!("date '{day}'")
    }
    fn date_shift(&self, day: &str, amount: i32, unit: &str) -> String {
        let sign = if amount < 0 { '-' } else { '+' };
        let n = amount.unsigned_abs();
        format!("date '{day}' {sign} interval '{n}' {unit}")
    }
    fn year(&self, column: &str) -> String {
        format!("extract(year FROM {column})")
    }
}

/// SQLite's SQL.
struct Sqlite;

impl Dialect for Sqlite {
    fn keys_after_load(&self) -> bool {
        // Measured in docs/tpcc.md: keyed tables load faster than indexes built afterwards.
        false
    }
    fn keyed_table_suffix(&self) -> &'static str {
        " WITHOUT ROWID"
    }
    fn add_primary_key(&self, table: &str, name: &str, columns: &str) -> String {
        // SQLite cannot add a constraint to a table it has: a unique index does the same work.
        format!("CREATE UNIQUE INDEX {name} ON {table} ({columns})")
    }
    fn has_foreign_keys(&self) -> bool {
        false
    }
    fn tpcc_procedures(&self) -> Option<&'static ProcedureSql> {
        None
    }
    fn update_returning(&self) -> bool {
        // Since SQLite 3.35; rusqlite bundles a later one.
        true
    }
    fn latest_for_update(&self) -> &'static str {
        // One writer at a time, from BEGIN IMMEDIATE: nothing changes under it.
        ""
    }
    fn int_cast(&self, expr: &str) -> String {
        format!("CAST({expr} AS bigint)")
    }
    fn analyze(&self, _tables: &[&str]) -> String {
        "ANALYZE".into()
    }
    fn column_type(&self, ty: ColumnType) -> &'static str {
        match ty {
            ColumnType::BigInt => "integer",
            ColumnType::Decimal => "real",
            ColumnType::Date => "text",
        }
    }
    fn drop_cascade(&self) -> &'static str {
        ""
    }
    fn date(&self, day: &str) -> String {
        format!("'{day}'")
    }
    fn date_shift(&self, day: &str, amount: i32, unit: &str) -> String {
        format!("date('{day}', '{amount:+} {unit}')")
    }
    fn year(&self, column: &str) -> String {
        format!("CAST(strftime('%Y', {column}) AS INTEGER)")
    }
}

/// MariaDB's SQL (InnoDB tables).
struct Mariadb;

impl Dialect for Mariadb {
    fn keys_after_load(&self) -> bool {
        // InnoDB stores a table in its primary key's order: a key added later rebuilds the
        // whole table.
        false
    }
    fn keyed_table_suffix(&self) -> &'static str {
        " ENGINE=InnoDB"
    }
    fn add_primary_key(&self, table: &str, name: &str, columns: &str) -> String {
        format!("ALTER TABLE {table} ADD CONSTRAINT {name} PRIMARY KEY ({columns})")
    }
    fn has_foreign_keys(&self) -> bool {
        false
    }
    fn tpcc_procedures(&self) -> Option<&'static ProcedureSql> {
        Some(&procedure_sql::MARIADB)
    }
    fn update_returning(&self) -> bool {
        // MariaDB has INSERT and DELETE ... RETURNING (10.5), not UPDATE's.
        false
    }
    fn latest_for_update(&self) -> &'static str {
        // InnoDB's repeatable read: a plain SELECT reads the transaction's snapshot, taken at
        // its first read. A Delivery that waited for another to commit would find each
        // district's oldest order of its snapshot already taken and skip all ten; a locking
        // read sees the latest rows and waits for them.
        " FOR UPDATE"
    }
    fn int_cast(&self, expr: &str) -> String {
        // sum() of a bigint is a DECIMAL; CAST takes SIGNED, not BIGINT.
        format!("CAST({expr} AS SIGNED)")
    }
    fn analyze(&self, tables: &[&str]) -> String {
        // Its ANALYZE names the tables.
        format!("ANALYZE TABLE {}", tables.join(", "))
    }
    fn column_type(&self, ty: ColumnType) -> &'static str {
        match ty {
            ColumnType::BigInt => "bigint",
            ColumnType::Decimal => "decimal(15,2)",
            ColumnType::Date => "date",
        }
    }
    fn drop_cascade(&self) -> &'static str {
        // Accepted and ignored: no foreign keys are made.
        " CASCADE"
    }
    fn date(&self, day: &str) -> String {
        format!("DATE '{day}'")
    }
    fn date_shift(&self, day: &str, amount: i32, unit: &str) -> String {
        let sign = if amount < 0 { '-' } else { '+' };
        let n = amount.unsigned_abs();
        format!(
            "DATE '{day}' {sign} INTERVAL {n} {}",
            unit.to_ascii_uppercase()
        )
    }
    fn year(&self, column: &str) -> String {
        format!("EXTRACT(YEAR FROM {column})")
    }
}

/// The dialect of `db`.
pub fn dialect(db: Db) -> &'static dyn Dialect {
    match db {
        Db::Postgres => &Postgres,
        Db::Sqlite => &Sqlite,
        Db::Mariadb => &Mariadb,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_database_spells_dates_and_keys_its_own_way() {
        let (pg, lite) = (dialect(Db::Postgres), dialect(Db::Sqlite));
        assert_eq!(
            pg.date_shift("1998-12-01", -90, "day"),
            "date '1998-12-01' - interval '90' day"
        );
        assert_eq!(
            lite.date_shift("1993-07-01", 3, "month"),
            "date('1993-07-01', '+3 month')"
        );
        assert_eq!(
            lite.add_primary_key("stock", "stock_pkey", "s_w_id, s_i_id"),
            "CREATE UNIQUE INDEX stock_pkey ON stock (s_w_id, s_i_id)"
        );
        assert!(pg.keys_after_load() && !lite.keys_after_load());
        assert_eq!(pg.column_type(ColumnType::Decimal), "numeric(15,2)");
        let my = dialect(Db::Mariadb);
        assert_eq!(my.int_cast("sum(x)"), "CAST(sum(x) AS SIGNED)");
        assert_eq!(my.analyze(&["a", "b"]), "ANALYZE TABLE a, b");
        assert!(pg.has_procedures() && my.has_procedures() && !lite.has_procedures());
        assert!(pg.update_returning() && !my.update_returning());
    }
}
