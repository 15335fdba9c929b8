//! bakeoff's real databases on the stacks it builds.
//!
//! * [`backend`]: what every database offers (connections running `$n`-parameterised SQL, a bulk
//!   path); the SQLite ([`sqlite`]) and PostgreSQL ([`postgres`]) implementations.
//! * [`postgres`]: a PostgreSQL server managed per run: initdb as the `postgres` user, settings
//!   validated against the server's own description, a private unix socket, start and stop through
//!   the stack's daemons and ledger, read-back of `SHOW ALL` and statistics.
//! * [`tpcc`]: TPC-C as the specification and HammerDB run it: schema, population, the five
//!   transactions, terminals under the engine's run harness, consistency checks.
//! * [`tpch`]: TPC-H as seed 002 stood it up, phase by phase: schema, a load streamed from the
//!   `tpchgen` generator, indexes, keys, statistics, the 22 queries.
//! * [`pgbench`]: the real `pgbench` against a managed server, its per-transaction log parsed
//!   into bakeoff's histograms.
//! * [`mariadb`]: a MariaDB server managed per run, as [`postgres`] is: `mariadb-install-db` and
//!   the server as the `mysql` user, variables validated against the server's own list, a private
//!   unix socket, InnoDB's counters from `SHOW GLOBAL STATUS`.
//! * [`sysbench`]: the real `sysbench` against a managed MariaDB server, its printed reports
//!   and latency histogram parsed into bakeoff's statistics.
//! * [`server_files`], [`sizing`]: what both managed servers share (their files and log, the
//!   memory and clients their defaults are sized from).

pub mod backend;
pub mod durability;
pub mod integrity;
pub mod managed;
pub mod mariadb;
mod parallel;
pub mod pgbench;
pub mod postgres;
pub mod registry;
pub mod server_files;
pub mod sizing;
pub mod sqlite;
pub mod sysbench;
pub mod tpcc;
pub mod tpch;

pub mod dialect;
pub use backend::{Conn, Database, Db, DbError, ErrorKind, Row, Value};
