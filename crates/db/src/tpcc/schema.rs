//! The nine TPC-C tables (clause 1.3) written once for PostgreSQL and SQLite: integers are
//! `bigint`, money is integer cents, tax and discount rates are integer basis points
//! (1/10,000), dates are microseconds since the Unix epoch.

use crate::backend::Db;
use crate::dialect::dialect;

/// A TPC-C table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// WAREHOUSE: W rows.
    Warehouse,
    /// DISTRICT: 10 per warehouse.
    District,
    /// CUSTOMER: 3,000 per district.
    Customer,
    /// HISTORY: one per customer at load.
    History,
    /// NEW-ORDER: the last 900 orders of each district at load.
    NewOrder,
    /// ORDER (`orders`, as ORDER is a keyword): 3,000 per district at load.
    Orders,
    /// ORDER-LINE: 5 to 15 per order.
    OrderLine,
    /// ITEM: 100,000, shared by all warehouses.
    Item,
    /// STOCK: 100,000 per warehouse.
    Stock,
}

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    /// A 64-bit integer (numbers, cents, basis points, microseconds).
    Int,
    /// Text of at most this many characters.
    Text(u16),
}

use Type::{Int, Text};

type Columns = &'static [(&'static str, Type)];

const WAREHOUSE: Columns = &[
    ("w_id", Int),
    ("w_name", Text(10)),
    ("w_street_1", Text(20)),
    ("w_street_2", Text(20)),
    ("w_city", Text(20)),
    ("w_state", Text(2)),
    ("w_zip", Text(9)),
    ("w_tax", Int),
    ("w_ytd", Int),
];

const DISTRICT: Columns = &[
    ("d_id", Int),
    ("d_w_id", Int),
    ("d_name", Text(10)),
    ("d_street_1", Text(20)),
    ("d_street_2", Text(20)),
    ("d_city", Text(20)),
    ("d_state", Text(2)),
    ("d_zip", Text(9)),
    ("d_tax", Int),
    ("d_ytd", Int),
    ("d_next_o_id", Int),
];

const CUSTOMER: Columns = &[
    ("c_id", Int),
    ("c_d_id", Int),
    ("c_w_id", Int),
    ("c_first", Text(16)),
    ("c_middle", Text(2)),
    ("c_last", Text(16)),
    ("c_street_1", Text(20)),
    ("c_street_2", Text(20)),
    ("c_city", Text(20)),
    ("c_state", Text(2)),
    ("c_zip", Text(9)),
    ("c_phone", Text(16)),
    ("c_since", Int),
    ("c_credit", Text(2)),
    ("c_credit_lim", Int),
    ("c_discount", Int),
    ("c_balance", Int),
    ("c_ytd_payment", Int),
    ("c_payment_cnt", Int),
    ("c_delivery_cnt", Int),
    ("c_data", Text(500)),
];

const HISTORY: Columns = &[
    ("h_c_id", Int),
    ("h_c_d_id", Int),
    ("h_c_w_id", Int),
    ("h_d_id", Int),
    ("h_w_id", Int),
    ("h_date", Int),
    ("h_amount", Int),
    ("h_data", Text(24)),
];

const NEW_ORDER: Columns = &[("no_o_id", Int), ("no_d_id", Int), ("no_w_id", Int)];

const ORDERS: Columns = &[
    ("o_id", Int),
    ("o_d_id", Int),
    ("o_w_id", Int),
    ("o_c_id", Int),
    ("o_entry_d", Int),
    ("o_carrier_id", Int),
    ("o_ol_cnt", Int),
    ("o_all_local", Int),
];

const ORDER_LINE: Columns = &[
    ("ol_o_id", Int),
    ("ol_d_id", Int),
    ("ol_w_id", Int),
    ("ol_number", Int),
    ("ol_i_id", Int),
    ("ol_supply_w_id", Int),
    ("ol_delivery_d", Int),
    ("ol_quantity", Int),
    ("ol_amount", Int),
    ("ol_dist_info", Text(24)),
];

const ITEM: Columns = &[
    ("i_id", Int),
    ("i_im_id", Int),
    ("i_name", Text(24)),
    ("i_price", Int),
    ("i_data", Text(50)),
];

const STOCK: Columns = &[
    ("s_i_id", Int),
    ("s_w_id", Int),
    ("s_quantity", Int),
    ("s_dist_01", Text(24)),
    ("s_dist_02", Text(24)),
    ("s_dist_03", Text(24)),
    ("s_dist_04", Text(24)),
    ("s_dist_05", Text(24)),
    ("s_dist_06", Text(24)),
    ("s_dist_07", Text(24)),
    ("s_dist_08", Text(24)),
    ("s_dist_09", Text(24)),
    ("s_dist_10", Text(24)),
    ("s_ytd", Int),
    ("s_order_cnt", Int),
    ("s_remote_cnt", Int),
    ("s_data", Text(50)),
];

impl Table {
    /// Every table, in load order.
    pub const ALL: [Table; 9] = [
        Table::Item,
        Table::Warehouse,
        Table::District,
        Table::Customer,
        Table::History,
        Table::Orders,
        Table::NewOrder,
        Table::OrderLine,
        Table::Stock,
    ];

    /// The table's name in SQL.
    pub fn name(self) -> &'static str {
        match self {
            Table::Warehouse => "warehouse",
            Table::District => "district",
            Table::Customer => "customer",
            Table::History => "history",
            Table::NewOrder => "new_order",
            Table::Orders => "orders",
            Table::OrderLine => "order_line",
            Table::Item => "item",
            Table::Stock => "stock",
        }
    }

    fn definition(self) -> Columns {
        match self {
            Table::Warehouse => WAREHOUSE,
            Table::District => DISTRICT,
            Table::Customer => CUSTOMER,
            Table::History => HISTORY,
            Table::NewOrder => NEW_ORDER,
            Table::Orders => ORDERS,
            Table::OrderLine => ORDER_LINE,
            Table::Item => ITEM,
            Table::Stock => STOCK,
        }
    }

    /// Column names in the order rows are generated and loaded.
    pub fn columns(self) -> Vec<&'static str> {
        self.definition().iter().map(|(name, _)| *name).collect()
    }

    /// The primary key's columns (HISTORY has none).
    pub fn primary_key(self) -> &'static [&'static str] {
        match self {
            Table::Warehouse => &["w_id"],
            Table::District => &["d_w_id", "d_id"],
            Table::Customer => &["c_w_id", "c_d_id", "c_id"],
            Table::History => &[],
            Table::NewOrder => &["no_w_id", "no_d_id", "no_o_id"],
            Table::Orders => &["o_w_id", "o_d_id", "o_id"],
            Table::OrderLine => &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
            Table::Item => &["i_id"],
            Table::Stock => &["s_w_id", "s_i_id"],
        }
    }
}

/// When the primary keys are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeysAt {
    /// In `CREATE TABLE`, before the load. SQLite: tables `WITHOUT ROWID`, stored in key
    /// order, so a lookup by key is one B-tree search and no separate index is built.
    Create,
    /// After the load: `ALTER TABLE ... ADD PRIMARY KEY` (PostgreSQL builds each index in
    /// one sort instead of maintaining it row by row).
    AfterLoad,
}

impl KeysAt {
    /// What bakeoff uses for `kind` (for SQLite measured in `docs/tpcc.md`).
    pub fn default_for(kind: Db) -> KeysAt {
        if dialect(kind).keys_after_load() {
            KeysAt::AfterLoad
        } else {
            KeysAt::Create
        }
    }
}

/// Drops the TPC-C tables if they exist.
pub fn drop_tables() -> String {
    Table::ALL
        .iter()
        .map(|t| format!("DROP TABLE IF EXISTS {};\n", t.name()))
        .collect()
}

/// `CREATE TABLE` for every table, with the primary keys if `keys` says so.
pub fn create_tables(kind: Db, keys: KeysAt) -> String {
    let mut sql = String::new();
    for t in Table::ALL {
        let mut cols: Vec<String> = t
            .definition()
            .iter()
            .map(|(name, ty)| match ty {
                Int => format!("{name} bigint"),
                Text(n) => format!("{name} varchar({n})"),
            })
            .collect();
        let key = t.primary_key();
        let inline = keys == KeysAt::Create && !key.is_empty();
        if inline {
            cols.push(format!("PRIMARY KEY ({})", key.join(", ")));
        }
        let rowid = if inline {
            dialect(kind).keyed_table_suffix()
        } else {
            ""
        };
        sql += &format!(
            "CREATE TABLE {} (\n    {}\n){rowid};\n",
            t.name(),
            cols.join(",\n    ")
        );
    }
    sql
}

/// The primary keys made after the load (nothing if they were made with the tables).
pub fn create_keys(kind: Db, keys: KeysAt) -> String {
    if keys == KeysAt::Create {
        return String::new();
    }
    let mut sql = String::new();
    for t in Table::ALL.iter().filter(|t| !t.primary_key().is_empty()) {
        let (name, cols) = (t.name(), t.primary_key().join(", "));
        let key = format!("{name}_pkey");
        sql += &(dialect(kind).add_primary_key(name, &key, &cols) + ";\n");
    }
    sql
}

/// The two secondary indexes the transactions need: customers by last name (Payment and
/// Order-Status) and a customer's latest order (Order-Status).
pub fn create_indexes() -> &'static str {
    "CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first);\n\
     CREATE UNIQUE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_names_every_table_and_its_keys() {
        let sqlite = create_tables(Db::Sqlite, KeysAt::Create);
        assert_eq!(sqlite.matches("CREATE TABLE").count(), 9);
        assert_eq!(
            sqlite.matches("WITHOUT ROWID").count(),
            8,
            "history has no key"
        );
        assert!(sqlite.contains("PRIMARY KEY (s_w_id, s_i_id)"));
        assert!(create_keys(Db::Sqlite, KeysAt::Create).is_empty());
        let pg = create_tables(Db::Postgres, KeysAt::AfterLoad);
        assert!(!pg.contains("PRIMARY KEY") && !pg.contains("ROWID"));
        assert!(pg.contains("c_data varchar(500)") && pg.contains("w_ytd bigint"));
        let keys = create_keys(Db::Postgres, KeysAt::AfterLoad);
        assert_eq!(keys.matches("ADD CONSTRAINT").count(), 8);
        assert_eq!(Table::Stock.columns().len(), 17);
        assert_eq!(Table::Customer.columns().len(), 21);
    }
}
