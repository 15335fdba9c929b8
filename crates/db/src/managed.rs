//! The life of a database a run manages, whatever the database: a [`Backend`] checks a plan's
//! settings before anything is built and opens the database on a stack (a server started, or
//! a file opened); the [`ManagedDb`] it returns is made cold, read (counters, size, settings),
//! settled and stopped by the run pipeline without knowing which database it is.
//!
//! Adding a database is its folder (implementing [`ManagedDb`] and a `Dialect`) and its line
//! in the registry, `registry::BACKENDS` (CONTRIBUTING.md).

use crate::backend::{Database, Db, DbError};
use bakeoff_core::dbplan::DbPlan;
use bakeoff_core::dbrecord::{DatabaseRun, DbCounters};
use bakeoff_engine::warmup::Costs;
use bakeoff_stack::{Stack, StackError};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a managed database could not be checked, opened, used or stopped, sorted by whose it
/// is to fix.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A setting the user gave is refused (the message names the key): the user's to fix.
    #[error("{0}")]
    Setting(String),
    /// The database answered with an error, or a file operation failed.
    #[error("{0}")]
    Io(String),
    /// The machine lacks something (binaries, users, permissions) or the stack failed.
    #[error("{0}")]
    Environment(String),
}

impl From<DbError> for SetupError {
    fn from(e: DbError) -> SetupError {
        SetupError::Io(e.to_string())
    }
}

impl From<StackError> for SetupError {
    fn from(e: StackError) -> SetupError {
        SetupError::Environment(e.to_string())
    }
}

/// Where a database is opened.
pub struct OpenAt<'a> {
    /// The run's plan (its work, settings and timing).
    pub plan: &'a DbPlan,
    /// The directory its files go in, on the data stack.
    pub data: &'a Path,
    /// The log stack's mount, when the run has one (a server's WAL or redo log goes there).
    pub log_stack: Option<PathBuf>,
    /// Make it with page checksums where that is a choice made once (PostgreSQL's
    /// `initdb --data-checksums`): a crash-state run checks them.
    pub checksums: bool,
}

/// What [`ManagedDb::quiesce`] does on the quiet stack.
pub type StackAct<'a> = dyn FnMut(&mut Stack) -> Result<(), StackError> + 'a;

/// A database a run opened on its stack.
pub trait ManagedDb: Send + Sync {
    /// Which database it is.
    fn db(&self) -> Db;
    /// Connections to it, for the workloads.
    fn database(&self) -> Arc<dyn Database>;
    /// Stops what writes its files (a server's clean shutdown; an embedded database has
    /// nothing running between transactions), lets `act` work on the quiet stack, and starts
    /// it again.
    fn quiesce(&mut self, stack: &mut Stack, act: &mut StackAct) -> Result<(), SetupError>;
    /// Cold caches for the measured window: its own (a server restarted) and the stack's
    /// (`Stack::prepare_run`).
    fn make_cold(&mut self, stack: &mut Stack) -> Result<(), SetupError> {
        self.quiesce(stack, &mut |s| s.prepare_run(false))
    }
    /// What the record says about it: version, settings as read back, paths.
    fn describe(&self) -> DatabaseRun;
    /// Its own counters now, cumulative (a window is the difference of two,
    /// [`DbCounters::since`]); `None` when they cannot be read.
    fn counters(&self) -> Option<DbCounters>;
    /// Writes what is dirty in its cache to its files (a checkpoint), at a window's edges, so
    /// a window holds whole flush cycles. Nothing by default.
    fn checkpoint(&self) -> Result<(), SetupError> {
        Ok(())
    }
    /// The end of a load: what it wrote reaches its files (the stack is synced after).
    fn settle(&self) -> Result<(), SetupError>;
    /// Its size on disk now.
    fn size_on_disk(&self) -> Option<u64>;
    /// Its server's processes (their CPU is the database's); none when it runs inside
    /// bakeoff.
    fn processes(&self) -> Vec<u32>;
    /// How long its log is now, to read what it says after this point ([`Self::log_cause`]).
    fn log_len(&self) -> u64 {
        0
    }
    /// The cause its log gives for a failure since it was `since` bytes long, if any.
    fn log_cause(&self, _since: u64) -> Option<String> {
        None
    }
    /// The costs per transaction an automatic warm-up also waits for, read once a second
    /// over a connection of bakeoff's own; `None` when it has no such counters.
    fn warmup_costs(&self) -> Option<Costs<'_>> {
        None
    }
    /// The concrete type, for a workload that drives one database only (pgbench, sysbench).
    fn as_any(&self) -> &dyn Any;
    /// Stops it (a server's clean shutdown) and removes what only it needed.
    fn stop(self: Box<Self>, stack: &mut Stack) -> Result<(), SetupError>;
}

/// A database opened on a stack, or why it could not be.
pub type Opened = Result<Box<dyn ManagedDb>, SetupError>;

/// A database bakeoff can manage: how its settings are checked and how it is opened.
pub struct Backend {
    /// Which database.
    pub db: Db,
    /// Checks a plan's settings for it before anything is built (a server's own list of
    /// variables, its memory within `mem_limit`).
    pub check: fn(plan: &DbPlan, mem_limit: Option<u64>) -> Result<(), SetupError>,
    /// Opens it on `stack` (a server started, initialised on its first start).
    pub open: fn(stack: &mut Stack, at: OpenAt) -> Opened,
    /// What opening it runs, as a phase's command (TPC-H's `initdb` phase).
    pub started_by: &'static str,
    /// What `--log-stack` holds for it, or why it takes none.
    pub log_stack: Result<&'static str, &'static str>,
}
