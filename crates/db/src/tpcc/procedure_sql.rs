//! TPC-C's stored procedures as each database spells them: their definitions
//! (`procedures.sql` for PostgreSQL, `procedures_mariadb.sql` for MariaDB), the statement that
//! calls each, and the SQLSTATE the New-Order raises to roll back. Data only: a database's
//! dialect names its own (`Dialect::tpcc_procedures`), and `procedures` calls them.

/// The SQLSTATE `neword` raises for an item that does not exist (TPC-C's 1 % of New-Orders
/// that roll back); the clients classify it as
/// [`ErrorKind::Rollback`](crate::backend::ErrorKind::Rollback).
pub const ROLLBACK_SQLSTATE: &str = "TPC01";

/// How one database runs TPC-C's transactions as stored procedures.
#[derive(Debug)]
pub struct ProcedureSql {
    /// The definitions (`CREATE OR REPLACE`), run at load time after the keys and indexes.
    pub(super) definitions: &'static str,
    /// New-Order's call: warehouse, district, customer, three lists (items, supplying
    /// warehouses, quantities) and the date.
    pub(super) new_order: &'static str,
    /// Payment's: warehouse, district, customer's warehouse and district, customer number or
    /// last name (the other null), amount, date.
    pub(super) payment: &'static str,
    /// Order-Status's: warehouse, district, customer number or last name.
    pub(super) order_status: &'static str,
    /// Delivery's: warehouse, carrier, date.
    pub(super) delivery: &'static str,
    /// Stock-Level's: warehouse, district, threshold.
    pub(super) stock_level: &'static str,
    /// What opens and closes a list of integers sent as one text parameter: the backends bind
    /// scalars.
    pub(super) list: (char, char),
}

/// PostgreSQL's: arrays travel as text (`{1,2,3}`) cast on the server.
pub(crate) const POSTGRES: ProcedureSql = ProcedureSql {
    definitions: include_str!("procedures.sql"),
    new_order: "SELECT neword($1, $2, $3, CAST($4 AS text)::bigint[], \
                CAST($5 AS text)::bigint[], CAST($6 AS text)::bigint[], $7)",
    payment: "SELECT payment($1, $2, $3, $4, $5, $6, $7, $8)",
    order_status: "SELECT ostat($1, $2, $3, $4)",
    delivery: "SELECT delivery($1, $2, $3)",
    stock_level: "SELECT slev($1, $2, $3)",
    list: ('{', '}'),
};

/// MariaDB's: no arrays, so lists travel as JSON (`[1,2,3]`); each procedure ends with a
/// one-row result set, which the prepared `CALL` returns like a query's.
pub(crate) const MARIADB: ProcedureSql = ProcedureSql {
    definitions: include_str!("procedures_mariadb.sql"),
    new_order: "CALL neword($1, $2, $3, $4, $5, $6, $7)",
    payment: "CALL payment($1, $2, $3, $4, $5, $6, $7, $8)",
    order_status: "CALL ostat($1, $2, $3, $4)",
    delivery: "CALL delivery($1, $2, $3)",
    stock_level: "CALL slev($1, $2, $3)",
    list: ('[', ']'),
};
