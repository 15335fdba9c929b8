//! The keys of each database workload, with their defaults and help: what `plan_db` checks
//! a user's settings against, and what `bakeoff workloads` shows.

use crate::keys::{doc, KeyDoc};

/// Keys of `tpcc` (besides the run keys and `pg.*` / `sqlite.*`).
pub const TPCC_KEYS: &[KeyDoc] = &[
    doc(
        "db",
        "postgres",
        "postgres or mariadb (a server bakeoff starts), or sqlite (embedded)",
    ),
    doc("warehouses", "1", "warehouses loaded (100 MB or so each)"),
    doc(
        "terminals",
        "4",
        "connections running transactions, no keying or think time",
    ),
    doc(
        "rate_tps",
        "0",
        "target transactions per second over all terminals, open loop (0: as fast as they go)",
    ),
    doc("load_threads", "2", "warehouses loaded in parallel"),
    doc(
        "procedures",
        "true",
        "each transaction one call of a stored procedure (PL/pgSQL, MariaDB's SQL), as \
         HammerDB runs it (false: the client sends each statement); db=sqlite has none and \
         takes only false",
    ),
];

/// Keys of `pgbench` (besides the run keys and `pg.*`).
pub const PGBENCH_KEYS: &[KeyDoc] = &[
    doc(
        "db",
        "postgres",
        "postgres only: pgbench drives a PostgreSQL server",
    ),
    doc(
        "scale",
        "10",
        "pgbench scale factor (-s): 100,000 accounts each",
    ),
    doc("clients", "4", "pgbench clients (-c)"),
    doc("jobs", "2", "pgbench threads (-j)"),
    doc(
        "rate",
        "0",
        "target transactions per second (-R), 0: as fast as they go",
    ),
    doc(
        "latency_limit",
        "0",
        "skip transactions later than this (--latency-limit), 0: none",
    ),
];

/// Keys of `tpch` (besides `pg.*` / `sqlite.*`; no run keys: its phases run to their end).
pub const TPCH_KEYS: &[KeyDoc] = &[
    doc(
        "db",
        "postgres",
        "postgres (a server bakeoff starts) or sqlite (embedded)",
    ),
    doc(
        "sf",
        "0.1",
        "scale factor, 0.01 to 100: 1 is 6 million line items, about 1.9 GB on disk with indexes",
    ),
    doc(
        "load_threads",
        "2",
        "connections loading the tables in parallel",
    ),
];

/// The OLTP tests of sysbench bakeoff runs (its bundled Lua scripts).
pub const SYSBENCH_TESTS: [&str; 4] = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_update_index",
];

/// Keys of `sysbench` (besides the run keys and `my.*`).
pub const SYSBENCH_KEYS: &[KeyDoc] = &[
    doc(
        "db",
        "mariadb",
        "mariadb only: sysbench drives a MariaDB server bakeoff starts",
    ),
    doc(
        "test",
        "oltp_read_write",
        "oltp_read_write, oltp_read_only, oltp_write_only or oltp_update_index",
    ),
    doc("tables", "4", "tables (--tables)"),
    doc("table_size", "100000", "rows per table (--table-size)"),
    doc(
        "threads",
        "4",
        "client threads, one connection each (--threads)",
    ),
    doc(
        "rate",
        "0",
        "target transactions per second (--rate), 0: as fast as they go",
    ),
];

/// SQLite options (`sqlite.KEY`), validated here.
pub const SQLITE_KEYS: &[KeyDoc] = &[
    doc(
        "sqlite.journal_mode",
        "wal",
        "delete, truncate, persist, memory, wal or off",
    ),
    doc("sqlite.synchronous", "full", "off, normal, full or extra"),
    doc(
        "sqlite.page_size",
        "4096",
        "database page size: a power of two from 512 to 65536 (the database block size)",
    ),
    doc(
        "sqlite.cache_size",
        "-2000",
        "page cache: pages, or negative KiB (SQLite's meaning)",
    ),
];

/// The database workloads: name, one line, keys.
pub const DB_WORKLOADS: &[(&str, &str, &[KeyDoc])] = &[
    (
        "tpcc",
        "TPC-C on PostgreSQL, MariaDB or SQLite: New-Order, Payment, Order-Status, Delivery, Stock-Level",
        TPCC_KEYS,
    ),
    (
        "pgbench",
        "the real pgbench (TPC-B-like) against a PostgreSQL server bakeoff manages",
        PGBENCH_KEYS,
    ),
    (
        "sysbench",
        "the real sysbench (OLTP tests) against a MariaDB server bakeoff manages",
        SYSBENCH_KEYS,
    ),
    (
        "tpch",
        "TPC-H on PostgreSQL or SQLite: schema, load, indexes, keys, analyze, 22 queries, each timed",
        TPCH_KEYS,
    ),
];
