//! The eight TPC-H tables (clause 1.4) for PostgreSQL and SQLite, created without keys, and the
//! statements of the later phases: the usual secondary indexes, the primary keys and foreign
//! keys of clause 1.4.2, and statistics.
//!
//! Types: identifiers are `integer` (the order keys `bigint`: they pass 2^31 beyond SF 350);
//! decimals are `numeric(15,2)` in PostgreSQL and `real` (a double) in SQLite, which has no
//! decimal type; dates are `date` in PostgreSQL and ISO-8601 `text` in SQLite (it compares
//! them as strings, in date order, and its date functions read them); fixed text is `char(n)`,
//! variable text `varchar(n)` (SQLite keeps the name and stores text either way).

use crate::backend::DbKind;

/// A TPC-H table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// REGION: 5 rows.
    Region,
    /// NATION: 25 rows.
    Nation,
    /// SUPPLIER: 10,000 × SF.
    Supplier,
    /// PART: 200,000 × SF.
    Part,
    /// PARTSUPP: 4 per part.
    PartSupp,
    /// CUSTOMER: 150,000 × SF.
    Customer,
    /// ORDERS: 1,500,000 × SF.
    Orders,
    /// LINEITEM: 1 to 7 per order, about 6,000,000 × SF.
    LineItem,
}

/// A column's type (clause 1.3.1's datatypes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    /// An identifier or integer.
    Int,
    /// An identifier that passes 2^31 at large scale factors.
    BigInt,
    /// A decimal with two digits after the point.
    Decimal,
    /// A date.
    Date,
    /// Fixed-length text of this many characters.
    Fixed(u16),
    /// Variable-length text of at most this many characters.
    Variable(u16),
}

use Type::{BigInt, Date, Decimal, Fixed, Int, Variable};

type Columns = &'static [(&'static str, Type)];

const REGION: Columns = &[
    ("r_regionkey", Int),
    ("r_name", Fixed(25)),
    ("r_comment", Variable(152)),
];

const NATION: Columns = &[
    ("n_nationkey", Int),
    ("n_name", Fixed(25)),
    ("n_regionkey", Int),
    ("n_comment", Variable(152)),
];

const SUPPLIER: Columns = &[
    ("s_suppkey", Int),
    ("s_name", Fixed(25)),
    ("s_address", Variable(40)),
    ("s_nationkey", Int),
    ("s_phone", Fixed(15)),
    ("s_acctbal", Decimal),
    ("s_comment", Variable(101)),
];

const PART: Columns = &[
    ("p_partkey", Int),
    ("p_name", Variable(55)),
    ("p_mfgr", Fixed(25)),
    ("p_brand", Fixed(10)),
    ("p_type", Variable(25)),
    ("p_size", Int),
    ("p_container", Fixed(10)),
    ("p_retailprice", Decimal),
    ("p_comment", Variable(23)),
];

const PARTSUPP: Columns = &[
    ("ps_partkey", Int),
    ("ps_suppkey", Int),
    ("ps_availqty", Int),
    ("ps_supplycost", Decimal),
    ("ps_comment", Variable(199)),
];

const CUSTOMER: Columns = &[
    ("c_custkey", Int),
    ("c_name", Variable(25)),
    ("c_address", Variable(40)),
    ("c_nationkey", Int),
    ("c_phone", Fixed(15)),
    ("c_acctbal", Decimal),
    ("c_mktsegment", Fixed(10)),
    ("c_comment", Variable(117)),
];

const ORDERS: Columns = &[
    ("o_orderkey", BigInt),
    ("o_custkey", Int),
    ("o_orderstatus", Fixed(1)),
    ("o_totalprice", Decimal),
    ("o_orderdate", Date),
    ("o_orderpriority", Fixed(15)),
    ("o_clerk", Fixed(15)),
    ("o_shippriority", Int),
    ("o_comment", Variable(79)),
];

const LINEITEM: Columns = &[
    ("l_orderkey", BigInt),
    ("l_partkey", Int),
    ("l_suppkey", Int),
    ("l_linenumber", Int),
    ("l_quantity", Decimal),
    ("l_extendedprice", Decimal),
    ("l_discount", Decimal),
    ("l_tax", Decimal),
    ("l_returnflag", Fixed(1)),
    ("l_linestatus", Fixed(1)),
    ("l_shipdate", Date),
    ("l_commitdate", Date),
    ("l_receiptdate", Date),
    ("l_shipinstruct", Fixed(25)),
    ("l_shipmode", Fixed(10)),
    ("l_comment", Variable(44)),
];

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

impl Table {
    /// Every table, smallest first (the order keys are made in).
    pub const ALL: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Supplier,
        Table::Part,
        Table::PartSupp,
        Table::Customer,
        Table::Orders,
        Table::LineItem,
    ];

    /// The table's name in SQL.
    pub fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Supplier => "supplier",
            Table::Part => "part",
            Table::PartSupp => "partsupp",
            Table::Customer => "customer",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    fn definition(self) -> Columns {
        match self {
            Table::Region => REGION,
            Table::Nation => NATION,
            Table::Supplier => SUPPLIER,
            Table::Part => PART,
            Table::PartSupp => PARTSUPP,
            Table::Customer => CUSTOMER,
            Table::Orders => ORDERS,
            Table::LineItem => LINEITEM,
        }
    }

    /// Column names in the order rows are generated and loaded.
    pub fn columns(self) -> Vec<&'static str> {
        self.definition().iter().map(|(name, _)| *name).collect()
    }

    /// The primary key's columns (clause 1.4.2.2).
    pub fn primary_key(self) -> &'static [&'static str] {
        match self {
            Table::Region => &["r_regionkey"],
            Table::Nation => &["n_nationkey"],
            Table::Supplier => &["s_suppkey"],
            Table::Part => &["p_partkey"],
            Table::PartSupp => &["ps_partkey", "ps_suppkey"],
            Table::Customer => &["c_custkey"],
            Table::Orders => &["o_orderkey"],
            Table::LineItem => &["l_orderkey", "l_linenumber"],
        }
    }

    /// The name of its primary key constraint (or, in SQLite, unique index).
    pub fn primary_key_name(self) -> String {
        format!("{}_pkey", self.name())
    }
}

fn column_type(kind: DbKind, ty: Type) -> String {
    match (kind, ty) {
        (_, Int) => "integer".into(),
        (DbKind::Postgres, BigInt) => "bigint".into(),
        (DbKind::Sqlite, BigInt) => "integer".into(),
        (DbKind::Postgres, Decimal) => "numeric(15,2)".into(),
        (DbKind::Sqlite, Decimal) => "real".into(),
        (DbKind::Postgres, Date) => "date".into(),
        (DbKind::Sqlite, Date) => "text".into(),
        (_, Fixed(n)) => format!("char({n})"),
        (_, Variable(n)) => format!("varchar({n})"),
    }
}

/// Drops the TPC-H tables if they exist (the referring ones first, for PostgreSQL's keys).
pub fn drop_tables(kind: DbKind) -> String {
    let cascade = match kind {
        DbKind::Postgres => " CASCADE",
        DbKind::Sqlite => "",
    };
    Table::ALL
        .iter()
        .rev()
        .map(|t| format!("DROP TABLE IF EXISTS {}{cascade};\n", t.name()))
        .collect()
}

/// `CREATE TABLE` for every table, without keys.
pub fn create_tables(kind: DbKind) -> String {
    let mut sql = String::new();
    for t in Table::ALL {
        let columns: Vec<String> = t
            .definition()
            .iter()
            .map(|(name, ty)| format!("{name} {} NOT NULL", column_type(kind, *ty)))
            .collect();
        sql += &format!(
            "CREATE TABLE {} (\n    {}\n);\n",
            t.name(),
            columns.join(",\n    ")
        );
    }
    sql
}

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
pub fn create_primary_keys(kind: DbKind) -> Vec<(String, String)> {
    Table::ALL
        .iter()
        .map(|t| {
            let (table, name, columns) = (t.name(), t.primary_key_name(), t.primary_key());
            let columns = columns.join(", ");
            let sql = match kind {
                DbKind::Postgres => {
                    format!("ALTER TABLE {table} ADD CONSTRAINT {name} PRIMARY KEY ({columns})")
                }
                DbKind::Sqlite => format!("CREATE UNIQUE INDEX {name} ON {table} ({columns})"),
            };
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
    fn tables_are_made_without_keys_in_each_dialect() {
        let pg = create_tables(DbKind::Postgres);
        assert_eq!(pg.matches("CREATE TABLE").count(), 8);
        assert!(!pg.contains("PRIMARY KEY") && !pg.contains("REFERENCES"));
        assert!(pg.contains("l_extendedprice numeric(15,2)"), "{pg}");
        assert!(pg.contains("o_orderdate date") && pg.contains("o_orderkey bigint"));
        let lite = create_tables(DbKind::Sqlite);
        assert!(lite.contains("l_extendedprice real") && lite.contains("l_shipdate text"));
        assert!(lite.contains("c_mktsegment char(10)"));
        assert_eq!(Table::LineItem.columns().len(), 16);
        assert_eq!(Table::Part.columns().len(), 9);
    }

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
        let keys = create_primary_keys(DbKind::Sqlite);
        assert_eq!(
            keys[7].1,
            "CREATE UNIQUE INDEX lineitem_pkey ON lineitem (l_orderkey, l_linenumber)"
        );
    }
}
