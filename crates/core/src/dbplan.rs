//! Database workloads (`tpcc`, `pgbench`, `sysbench`, `tpch`): their keys, checked like every
//! other workload's (unknown keys, wrong types and impossible values refused with where they were
//! written), and the validated [`DbPlan`] a run executes. Each workload's own keys are read in
//! `works.rs`, SQLite's options in `sqlite.rs`; a server's `pg.KEY` and `my.KEY` settings pass
//! through as text (`server.rs`): the server's own list of its settings validates them before
//! anything is built.

use crate::keys::{check_known, default_of, KeyDoc, RUN_KEYS};
use crate::planner::run_values;
use crate::settings::{SettingError, Settings};
use crate::values::Lookup;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

mod keys;
mod room;
mod server;
pub mod sqlite;
mod works;

pub use keys::{
    DB_WORKLOADS, PGBENCH_KEYS, SQLITE_KEYS, SYSBENCH_KEYS, SYSBENCH_TESTS, TPCC_KEYS, TPCH_KEYS,
};
use server::{split_server_settings, user_val, ServerSettings};
use works::{pgbench, refuse_run_keys, sysbench, tpcc, tpch};

/// Which database a workload runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Db {
    /// A PostgreSQL server bakeoff starts on the stack.
    Postgres,
    /// SQLite, embedded in bakeoff, its database file on the stack.
    Sqlite,
    /// A MariaDB server (InnoDB) bakeoff starts on the stack.
    Mariadb,
}

impl Db {
    /// Every database, in the order `bakeoff workloads` lists them.
    pub const ALL: [Db; 3] = [Db::Postgres, Db::Sqlite, Db::Mariadb];

    /// The name `db=` takes and the record shows.
    pub fn name(self) -> &'static str {
        match self {
            Db::Postgres => "postgres",
            Db::Sqlite => "sqlite",
            Db::Mariadb => "mariadb",
        }
    }

    /// The prefix of the database's own settings on the command line.
    pub fn option_prefix(self) -> &'static str {
        match self {
            Db::Postgres => "pg.",
            Db::Sqlite => "sqlite.",
            Db::Mariadb => "my.",
        }
    }

    /// A server bakeoff starts (and stops), rather than a library in bakeoff's process.
    pub fn is_server(self) -> bool {
        !matches!(self, Db::Sqlite)
    }

    /// It runs stored procedures (TPC-C's `procedures=true`).
    pub fn has_procedures(self) -> bool {
        self.is_server()
    }
}

/// What runs against the database.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DbWork {
    /// TPC-C: the five transactions from `terminals` connections.
    Tpcc {
        /// Warehouses loaded.
        warehouses: u32,
        /// Connections running transactions.
        terminals: u32,
        /// Target transactions per second over all terminals (open loop), if any.
        rate_tps: Option<f64>,
        /// Threads loading warehouses in parallel.
        load_threads: u32,
        /// Each transaction is one call of a stored function (PostgreSQL only, as HammerDB
        /// runs it); `false`: the client sends each statement. Records made before the key
        /// existed ran the statements.
        #[serde(default)]
        procedures: bool,
    },
    /// The real `pgbench`, TPC-B-like.
    Pgbench {
        /// Scale factor (`-s`).
        scale: u32,
        /// Clients (`-c`).
        clients: u32,
        /// pgbench threads (`-j`).
        jobs: u32,
        /// Target transactions per second (`-R`), if any.
        rate_tps: Option<f64>,
        /// Transactions later than this are skipped (`--latency-limit`), if any.
        latency_limit: Option<Duration>,
    },
    /// The real `sysbench` (its OLTP Lua tests) against a MariaDB server.
    Sysbench {
        /// The test: `oltp_read_write`, `oltp_read_only`, `oltp_write_only` or
        /// `oltp_update_index`.
        test: String,
        /// Tables (`--tables`).
        tables: u32,
        /// Rows per table (`--table-size`).
        table_size: u64,
        /// Client threads, one connection each (`--threads`).
        threads: u32,
        /// Target transactions per second (`--rate`), if any.
        rate_tps: Option<f64>,
    },
    /// TPC-H set up phase by phase (schema, load, indexes, keys, analyze), then its 22
    /// queries once each.
    Tpch {
        /// Scale factor (1 is about 1 GB of generated text).
        sf: f64,
        /// Connections loading the tables in parallel.
        load_threads: u32,
    },
}

impl DbWork {
    /// The connections it opens to the database at once: a server's `max_connections` is
    /// sized from this.
    pub fn connections(&self) -> u32 {
        match *self {
            DbWork::Tpcc { terminals, .. } => terminals,
            DbWork::Pgbench { clients, .. } => clients,
            DbWork::Sysbench { threads, .. } => threads,
            // The loaders, and the connection each phase opens.
            DbWork::Tpch { load_threads, .. } => load_threads + 1,
        }
    }
}

/// The validated plan of a database run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbPlan {
    /// Workload name.
    pub workload: String,
    /// The database.
    pub db: Db,
    /// What runs against it.
    pub work: DbWork,
    /// Measured time.
    pub runtime: Duration,
    /// Warm-up before measuring.
    pub ramp_time: Duration,
    /// `ramp_time=auto` (TPC-C, pgbench): warm up until throughput and the costs per
    /// transaction are steady, or the cap (see `docs/methodology.md`).
    pub ramp_auto: Option<crate::steady::rules::AutoRamp>,
    /// Seed of the population and the transaction inputs.
    pub seed: u64,
    /// PostgreSQL settings the user gave (`pg.KEY=VALUE`), by key without the prefix; not yet
    /// checked against the server (see the db crate).
    pub pg: BTreeMap<String, String>,
    /// MariaDB server variables the user gave (`my.KEY=VALUE`), by key without the prefix;
    /// checked against the server's own list before anything is built (see the db crate).
    #[serde(default)]
    pub my: BTreeMap<String, String>,
    /// SQLite's options (`sqlite.KEY`), checked and typed; SQLite's defaults unless
    /// `db=sqlite`.
    #[serde(default)]
    pub sqlite: sqlite::SqliteOptions,
    /// Every resolved setting as text, for the run record.
    pub settings: BTreeMap<String, String>,
}

/// Bytes per unit of TPC-H's scale factor on disk after every phase, indexes and keys
/// included: PostgreSQL's database was 184 MiB at SF 0.1 (`docs/tpch.md`), plus its WAL.
const TPCH_BYTES_PER_SF: f64 = 2.2 * (1u64 << 30) as f64;

impl DbPlan {
    /// About how many bytes the loaded database takes on its stack, for the room checks made
    /// before a run: TPC-C about 130 MiB per warehouse (PostgreSQL held 516 MiB after loading
    /// 4), pgbench about 16 MiB per scale step, sysbench about 250 bytes a row (an estimate,
    /// not measured at scale: its row's 188 bytes of columns, with InnoDB's page fill and
    /// secondary index). What a run adds and the WAL it keeps are
    /// [`DbPlan::room_bytes`].
    pub fn dataset_bytes(&self) -> u64 {
        const MIB: u64 = 1 << 20;
        match self.work {
            DbWork::Tpcc { warehouses, .. } => u64::from(warehouses) * 130 * MIB,
            DbWork::Pgbench { scale, .. } => u64::from(scale) * 16 * MIB,
            DbWork::Tpch { sf, .. } => (sf * TPCH_BYTES_PER_SF) as u64,
            DbWork::Sysbench {
                tables, table_size, ..
            } => u64::from(tables)
                .saturating_mul(table_size)
                .saturating_mul(250),
        }
    }
}

/// The run keys a database workload takes: its timing and seed (the I/O engine and buffer
/// contents are the database's own business).
pub fn db_run_keys() -> impl Iterator<Item = &'static KeyDoc> {
    RUN_KEYS
        .iter()
        .filter(|k| matches!(k.key, "runtime" | "ramp_time" | "ramp_max" | "seed"))
}

/// True if `name` is a database workload.
pub fn is_db_workload(name: &str) -> bool {
    DB_WORKLOADS.iter().any(|(n, _, _)| *n == name)
}

/// Validates `user` settings for database workload `name` into its plan.
pub fn plan_db(name: &str, user: &Settings) -> Result<DbPlan, SettingError> {
    let (_, _, keys) = DB_WORKLOADS
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| {
            SettingError::new(
                crate::settings::Origin::CommandLine,
                name,
                "not a database workload",
            )
        })?;
    crate::planner::refuse_verify(
        user,
        name,
        "writes the database's own pages, which bakeoff does not stamp: the database's page \
         checksums check them",
    )?;
    let run_keys = db_run_keys().filter(|_| name != "tpch");
    let mut allowed: Vec<&str> = (run_keys.chain(keys.iter())).map(|k| k.key).collect();
    if name == "tpch" {
        refuse_run_keys(user)?;
    }
    let db_choices = databases_of(name);
    if db_choices.contains(&"sqlite") {
        allowed.extend(SQLITE_KEYS.iter().map(|k| k.key));
    }
    let (plain, server) = split_server_settings(user)?;
    check_known(&plain, &allowed)?;
    let look = Lookup {
        settings: &plain,
        workload: name,
    };
    let run = run_values(&look)?;
    let g = |k: &str| look.get(k, default_of(keys, k));
    let chosen = g("db").choice(db_choices)?;
    let db = (Db::ALL.into_iter().find(|d| d.name() == chosen))
        .expect("databases_of names databases by Db::name");
    let work = match name {
        "tpcc" => tpcc(&g, db)?,
        "tpch" => tpch(&g)?,
        "sysbench" => sysbench(&g)?,
        _ => pgbench(&g)?,
    };
    if matches!(name, "pgbench" | "sysbench") && !run.ramp_time.is_zero() {
        return Err(user_val(user, "ramp_time").invalid(format!(
            "{name}'s printed TPS covers its whole run: a fixed warm-up cannot be cut from it; \
             ramp_time=auto (the default) warms up with a {name} run of its own until steady"
        )));
    }
    let sqlite = sqlite::from_settings(&look, db)?;
    server.check_for(db, user)?;
    let ServerSettings { pg, my } = server;
    let mut settings: BTreeMap<String, String> = allowed
        .iter()
        .map(|k| (k.to_string(), look.get(k, default_of(RUN_KEYS, k)).text))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    for k in keys
        .iter()
        .chain(if db == Db::Sqlite { SQLITE_KEYS } else { &[] })
    {
        settings.insert(k.key.to_string(), look.get(k.key, k.default).text);
    }
    settings.extend(pg.iter().map(|(k, v)| (format!("pg.{k}"), v.clone())));
    settings.extend(my.iter().map(|(k, v)| (format!("my.{k}"), v.clone())));
    if let DbWork::Tpcc { procedures, .. } = &work {
        // The value in force, which for SQLite is not the key's default.
        settings.insert("procedures".into(), procedures.to_string());
    }
    // TPC-H has no timed window: its phases take what they take.
    let timed = !matches!(work, DbWork::Tpch { .. });
    Ok(DbPlan {
        workload: name.to_string(),
        db,
        work,
        runtime: if timed { run.runtime } else { Duration::ZERO },
        ramp_time: if timed { run.ramp_time } else { Duration::ZERO },
        ramp_auto: run.ramp_auto.filter(|_| name != "tpch"),
        seed: run.seed,
        pg,
        my,
        sqlite,
        settings,
    })
}

/// The databases workload `name` runs on (`db=` choices), its default first.
pub fn databases_of(name: &str) -> &'static [&'static str] {
    match name {
        "pgbench" => &["postgres"],
        "sysbench" => &["mariadb"],
        "tpcc" => &["postgres", "sqlite", "mariadb"],
        _ => &["postgres", "sqlite"],
    }
}

#[cfg(test)]
mod tests;
