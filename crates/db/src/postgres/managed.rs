//! PostgreSQL as a run's managed database: its `pg.` settings and the run's needs made into
//! [`PgOptions`], checked against the server's own description, and the started server's life
//! behind [`ManagedDb`].

use super::{PgError, PgOptions, PgServer};
use crate::backend::{Database, Db};
use crate::managed::{Backend, ManagedDb, OpenAt, Opened, SetupError, StackAct};
use bakeoff_core::dbplan::{DbPlan, DbWork};
use bakeoff_core::dbrecord::{DatabaseRun, DbCounters};
use bakeoff_engine::warmup::Costs;
use bakeoff_stack::Stack;
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// PostgreSQL's line in the registry of backends (`registry::BACKENDS`).
pub const BACKEND: Backend = Backend {
    db: Db::Postgres,
    check,
    open,
    started_by: "initdb, pg_ctl start (server bakeoff manages)",
    log_stack: Ok("its WAL (pg_wal)"),
};

/// The server options of `plan` with its data directory under `data`.
pub fn options(plan: &DbPlan, data: &Path) -> Result<PgOptions, PgError> {
    let mut opts = PgOptions::new(data.join("pgdata"));
    opts.set_all(&plan.pg)?;
    if !matches!(plan.work, DbWork::Tpch { .. }) {
        // Whole checkpoint cycles in the window (docs/methodology.md); the user's wins.
        let timeout = super::settings::checkpoint_timeout_for(plan.runtime);
        opts.settings
            .entry("checkpoint_timeout".into())
            .or_insert(timeout);
    }
    opts.clients = plan.work.connections();
    Ok(opts)
}

impl From<PgError> for SetupError {
    fn from(e: PgError) -> SetupError {
        match e {
            PgError::Setting { .. } => SetupError::Setting(e.to_string()),
            PgError::Db(_) => SetupError::Io(e.to_string()),
            _ => SetupError::Environment(e.to_string()),
        }
    }
}

/// The WAL's directory on a log stack (`pg_wal` links to it).
pub const WAL_DIR: &str = "pgwal";

fn check(plan: &DbPlan, mem_limit: Option<u64>) -> Result<(), SetupError> {
    let opts = options(plan, Path::new("/nonexistent"))?;
    Ok(PgServer::check(&opts, mem_limit)?)
}

fn open(stack: &mut Stack, at: OpenAt) -> Opened {
    let mut opts = options(at.plan, at.data)?;
    opts.wal_dir = at.log_stack.map(|log| log.join(WAL_DIR));
    opts.data_checksums = at.checksums;
    Ok(Box::new(PgServer::start(stack, opts)?))
}

impl ManagedDb for PgServer {
    fn db(&self) -> Db {
        Db::Postgres
    }

    fn database(&self) -> Arc<dyn Database> {
        Arc::new(PgServer::database(self))
    }

    fn quiesce(&mut self, stack: &mut Stack, act: &mut StackAct) -> Result<(), SetupError> {
        Ok(self.restart(stack, act)?)
    }

    fn describe(&self) -> DatabaseRun {
        self.database_run()
    }

    fn counters(&self) -> Option<DbCounters> {
        self.stats().ok().map(|s| s.counters())
    }

    fn checkpoint(&self) -> Result<(), SetupError> {
        Ok(PgServer::checkpoint(self)?)
    }

    /// A `CHECKPOINT`: the dirty buffers written and the files synced.
    fn settle(&self) -> Result<(), SetupError> {
        Ok(PgServer::checkpoint(self)?)
    }

    fn size_on_disk(&self) -> Option<u64> {
        self.stats().ok().map(|s| s.db_size_bytes)
    }

    fn processes(&self) -> Vec<u32> {
        vec![self.pid() as u32]
    }

    fn log_len(&self) -> u64 {
        PgServer::log_len(self)
    }

    fn log_cause(&self, since: u64) -> Option<String> {
        PgServer::log_cause(self, since)
    }

    /// WAL bytes and full-page images per committed transaction, from `pg_stat_wal` and
    /// `pg_stat_database`.
    fn warmup_costs(&self) -> Option<Costs<'_>> {
        let mut conn = PgServer::database(self).connect_pg().ok()?;
        Some(Costs {
            names: vec!["wal_bytes_per_txn", "fpi_per_txn"],
            read: Box::new(move || {
                let s = self.stats_on(&mut conn).ok()?;
                Some((s.xact_commit, vec![s.wal_bytes as f64, s.wal_fpi as f64]))
            }),
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn stop(self: Box<Self>, stack: &mut Stack) -> Result<(), SetupError> {
        Ok(PgServer::stop(*self, stack)?)
    }
}
