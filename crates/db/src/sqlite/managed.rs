//! SQLite as a run's managed database: a file on the stack, opened in bakeoff's process with
//! the plan's `sqlite.` options, behind [`ManagedDb`].

use super::Sqlite;
use crate::backend::{Database, Db};
use crate::managed::{Backend, ManagedDb, OpenAt, Opened, SetupError, StackAct};
use bakeoff_core::dbplan::DbPlan;
use bakeoff_core::dbrecord::{DatabaseRun, DbCounters};
use bakeoff_stack::Stack;
use std::any::Any;
use std::sync::Arc;

/// SQLite's line in the registry of backends (`registry::BACKENDS`).
pub const BACKEND: Backend = Backend {
    db: Db::Sqlite,
    check,
    open,
    started_by: "SQLite database file created",
    log_stack: Err("SQLite keeps its journal beside the database file"),
};

/// The name of the database file in the stack's directory.
pub const FILE: &str = "bakeoff.sqlite";

/// SQLite's options were checked, typed, when the plan was made: nothing is left to check.
fn check(_plan: &DbPlan, _mem_limit: Option<u64>) -> Result<(), SetupError> {
    Ok(())
}

fn open(_stack: &mut Stack, at: OpenAt) -> Opened {
    let db = Sqlite::open(&at.data.join(FILE), at.plan.sqlite.clone())?;
    Ok(Box::new(Embedded(Arc::new(db))))
}

/// An SQLite file a run opened.
pub struct Embedded(pub Arc<Sqlite>);

impl ManagedDb for Embedded {
    fn db(&self) -> Db {
        Db::Sqlite
    }

    fn database(&self) -> Arc<dyn Database> {
        self.0.clone()
    }

    /// Nothing runs between transactions, and its page cache lives in its connections,
    /// which a run opens after this: `act` is all there is (making it cold: the stack's
    /// cache drop).
    fn quiesce(&mut self, stack: &mut Stack, act: &mut StackAct) -> Result<(), SetupError> {
        Ok(act(stack)?)
    }

    fn describe(&self) -> DatabaseRun {
        DatabaseRun {
            db: "sqlite".into(),
            version: format!("SQLite {}", Sqlite::version()),
            settings: self.0.settings(),
            paths: [("database".to_string(), self.0.path().display().to_string())].into(),
            ..DatabaseRun::default()
        }
    }

    fn counters(&self) -> Option<DbCounters> {
        let c = self.0.cache_counters();
        Some(DbCounters {
            cache_hits: Some(c.hits),
            cache_misses: Some(c.misses),
            engine_cpu_us: Some(c.cpu_ns / 1000),
            ..DbCounters::default()
        })
    }

    /// Its WAL checkpointed into the database file (`wal_checkpoint(TRUNCATE)`; nothing in
    /// the other journal modes).
    fn settle(&self) -> Result<(), SetupError> {
        let why = |e: crate::DbError| {
            SetupError::Io(format!("checkpointing SQLite's WAL after the load: {e}"))
        };
        let mut conn = self.0.connect().map_err(why)?;
        conn.query("PRAGMA wal_checkpoint(TRUNCATE)", &[])
            .map_err(why)?;
        Ok(())
    }

    /// The database file, its WAL and its journal.
    fn size_on_disk(&self) -> Option<u64> {
        let files = ["", "-wal", "-journal"].map(|suffix| {
            let mut p = self.0.path().as_os_str().to_owned();
            p.push(suffix);
            std::fs::metadata(std::path::PathBuf::from(p)).map_or(0, |m| m.len())
        });
        Some(files.iter().sum())
    }

    fn processes(&self) -> Vec<u32> {
        Vec::new()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn stop(self: Box<Self>, _stack: &mut Stack) -> Result<(), SetupError> {
        Ok(())
    }
}
