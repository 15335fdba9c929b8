//! The eight TPC-H tables (clause 1.4) for PostgreSQL and SQLite, created without keys (the
//! statements that add indexes and keys later are in `keys.rs`).
//!
//! Types: identifiers are `integer` (the order keys `bigint`: they pass 2^31 beyond SF 350);
//! decimals are `numeric(15,2)` in PostgreSQL and `real` (a double) in SQLite, which has no
//! decimal type; dates are `date` in PostgreSQL and ISO-8601 `text` in SQLite (it compares
//! them as strings, in date order, and its date functions read them); fixed text is `char(n)`,
//! variable text `varchar(n)` (SQLite keeps the name and stores text either way).

use crate::backend::Db;
use crate::dialect::{dialect, ColumnType};

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

fn column_type(kind: Db, ty: Type) -> String {
    let spelled = |ty| dialect(kind).column_type(ty).to_string();
    match ty {
        Int => "integer".into(),
        BigInt => spelled(ColumnType::BigInt),
        Decimal => spelled(ColumnType::Decimal),
        Date => spelled(ColumnType::Date),
        Fixed(n) => format!("char({n})"),
        Variable(n) => format!("varchar({n})"),
    }
}

/// Drops the TPC-H tables if they exist (the referring ones first, for PostgreSQL's keys).
pub fn drop_tables(kind: Db) -> String {
    let cascade = dialect(kind).drop_cascade();
    Table::ALL
        .iter()
        .rev()
        .map(|t| format!("DROP TABLE IF EXISTS {}{cascade};\n", t.name()))
        .collect()
}

/// `CREATE TABLE` for every table, without keys.
pub fn create_tables(kind: Db) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_made_without_keys_in_each_dialect() {
        let pg = create_tables(Db::Postgres);
        assert_eq!(pg.matches("CREATE TABLE").count(), 8);
        assert!(!pg.contains("PRIMARY KEY") && !pg.contains("REFERENCES"));
        assert!(pg.contains("l_extendedprice numeric(15,2)"), "{pg}");
        assert!(pg.contains("o_orderdate date") && pg.contains("o_orderkey bigint"));
        let lite = create_tables(Db::Sqlite);
        assert!(lite.contains("l_extendedprice real") && lite.contains("l_shipdate text"));
        assert!(lite.contains("c_mktsegment char(10)"));
        assert_eq!(Table::LineItem.columns().len(), 16);
        assert_eq!(Table::Part.columns().len(), 9);
    }
}
