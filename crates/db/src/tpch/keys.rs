//! The statements of the phases after the load: the usual secondary indexes, and the primary
//! and foreign keys of clause 1.4.2 (in SQLite, which cannot add a constraint to a table it
//! has, unique indexes and the query that validates a foreign key).

use super::schema::Table;
use crate::backend::Db;
use crate::dialect::dialect;

/// A foreign key: its name, the referencing columns, the referenced table and its key.
pub struct ForeignKey {
    /// The constraint's name.
    pub name: &'static str,
    /// The table that refers.
    pub table: Table,
    /// Its columns.
    pub columns: &'static [&'static str],
    /// The table referred to (by its primary key).
    pub references: Table,
}

const fn fk(
    name: &'static str,
    table: Table,
    columns: &'static [&'static str],
    references: Table,
) -> ForeignKey {
    ForeignKey {
        name,
        table,
        columns,
        references,
    }
}

/// The foreign keys of clause 1.4.2, in an order where each table referred to has its primary
/// key already.
pub const FOREIGN_KEYS: [ForeignKey; 10] = [
    fk(
        "nation_region_fk",
        Table::Nation,
        &["n_regionkey"],
        Table::Region,
    ),
    fk(
        "supplier_nation_fk",
        Table::Supplier,
        &["s_nationkey"],
        Table::Nation,
    ),
    fk(
        "customer_nation_fk",
        Table::Customer,
        &["c_nationkey"],
        Table::Nation,
    ),
    fk(
        "partsupp_part_fk",
        Table::PartSupp,
        &["ps_partkey"],
        Table::Part,
    ),
    fk(
        "partsupp_supplier_fk",
        Table::PartSupp,
        &["ps_suppkey"],
        Table::Supplier,
    ),
    fk(
        "orders_customer_fk",
        Table::Orders,
        &["o_custkey"],
        Table::Customer,
    ),
    fk(
        "lineitem_orders_fk",
        Table::LineItem,
        &["l_orderkey"],
        Table::Orders,
    ),
    fk(
        "lineitem_part_fk",
        Table::LineItem,
        &["l_partkey"],
        Table::Part,
    ),
    fk(
        "lineitem_supplier_fk",
        Table::LineItem,
        &["l_suppkey"],
        Table::Supplier,
    ),
    fk(
        "lineitem_partsupp_fk",
        Table::LineItem,
        &["l_partkey", "l_suppkey"],
        Table::PartSupp,
    ),
];

/// The secondary indexes the phase `tpch.indexes` builds: each foreign key's columns (the
/// order and partsupp keys too, so the queries find them before or without `tpch.keys`) and
/// the dates the queries range over, as the usual PostgreSQL TPC-H kits build them.
pub const INDEXES: [(&str, Table, &str); 10] = [
    ("nation_regionkey", Table::Nation, "n_regionkey"),
    ("supplier_nationkey", Table::Supplier, "s_nationkey"),
    ("customer_nationkey", Table::Customer, "c_nationkey"),
    ("partsupp_partkey", Table::PartSupp, "ps_partkey"),
    ("partsupp_suppkey", Table::PartSupp, "ps_suppkey"),
    ("orders_custkey", Table::Orders, "o_custkey"),
    ("orders_orderdate", Table::Orders, "o_orderdate"),
    ("lineitem_orderkey", Table::LineItem, "l_orderkey"),
    (
        "lineitem_part_supp",
        Table::LineItem,
        "l_partkey, l_suppkey",
    ),
    ("lineitem_shipdate", Table::LineItem, "l_shipdate"),
];

/// `CREATE INDEX` for each of [`INDEXES`]: its name and statement.
pub fn create_indexes() -> Vec<(&'static str, String)> {
    INDEXES
        .iter()
        .map(|(name, table, columns)| {
            let sql = format!("CREATE INDEX {name} ON {} ({columns})", table.name());
            (*name, sql)
        })
        .collect()
}

/// Each table's primary key: its name and statement. SQLite cannot add a constraint to a table
/// it has: a unique index on the key's columns does the same work (one sort, one B-tree).
pub fn create_primary_keys(kind: Db) -> Vec<(String, String)> {
    Table::ALL
        .iter()
        .map(|t| {
            let (table, name, columns) = (t.name(), t.primary_key_name(), t.primary_key());
            let columns = columns.join(", ");
            let sql = dialect(kind).add_primary_key(table, &name, &columns);
            (name, sql)
        })
        .collect()
}

/// PostgreSQL's `ALTER TABLE ... ADD FOREIGN KEY` of `key` (the server checks every row).
pub fn add_foreign_key(key: &ForeignKey) -> String {
    format!(
        "ALTER TABLE {} ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
        key.table.name(),
        key.name,
        key.columns.join(", "),
        key.references.name(),
        key.references.primary_key().join(", ")
    )
}

/// A query counting the rows of `key`'s table that refer to no row: what a database does to
/// validate a new foreign key, for SQLite, which cannot add one to a table it has.
pub fn count_orphans(key: &ForeignKey) -> String {
    let matches: Vec<String> = key
        .columns
        .iter()
        .zip(key.references.primary_key())
        .map(|(column, referenced)| format!("r.{referenced} = t.{column}"))
        .collect();
    format!(
        "SELECT count(*) FROM {} t WHERE NOT EXISTS (SELECT 1 FROM {} r WHERE {})",
        key.table.name(),
        key.references.name(),
        matches.join(" AND ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_refers_to_a_primary_key_of_the_same_width() {
        for key in &FOREIGN_KEYS {
            assert_eq!(key.columns.len(), key.references.primary_key().len());
            for column in key.columns {
                assert!(key.table.columns().contains(column), "{}", key.name);
            }
            let position = |t: Table| Table::ALL.iter().position(|&x| x == t);
            assert!(position(key.references) < position(key.table));
        }
        let sql = add_foreign_key(&FOREIGN_KEYS[9]);
        assert!(
            sql.ends_with(
                "FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp (ps_partkey, ps_suppkey)"
            ),
            "{sql}"
        );
        let orphans = count_orphans(&FOREIGN_KEYS[9]);
        assert!(orphans.contains("r.ps_partkey = t.l_partkey AND r.ps_suppkey = t.l_suppkey"));
        for (_, table, columns) in INDEXES {
            for column in columns.split(", ") {
                assert!(table.columns().contains(&column), "{column}");
            }
        }
        let keys = create_primary_keys(Db::Sqlite);
        assert_eq!(
            keys[7].1,
            "CREATE UNIQUE INDEX lineitem_pkey ON lineitem (l_orderkey, l_linenumber)"
        );
    }
}
