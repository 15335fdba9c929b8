//! MariaDB as a run's managed database: its `my.` variables and the run's needs made into
//! [`MyOptions`], checked against the server's own list, and the started server's life behind
//! [`ManagedDb`].

use super::{InnodbStats, MyError, MyOptions, MyServer};
use crate::backend::{Database, Db};
use crate::managed::{Backend, ManagedDb, OpenAt, Opened, SetupError, StackAct};
use bakeoff_core::dbplan::DbPlan;
use bakeoff_core::dbrecord::{DatabaseRun, DbCounters};
use bakeoff_engine::warmup::Costs;
use bakeoff_stack::Stack;
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// MariaDB's line in the registry of backends (`registry::BACKENDS`).
pub const BACKEND: Backend = Backend {
    db: Db::Mariadb,
    check,
    open,
    started_by: "mariadb-install-db, mariadbd (server bakeoff manages)",
    log_stack: Ok("its redo log (innodb_log_group_home_dir)"),
};

/// The server options of `plan` with its data directory under `data`.
pub fn options(plan: &DbPlan, data: &Path) -> Result<MyOptions, MyError> {
    let mut opts = MyOptions::new(data.join("mariadb"));
    opts.set_all(&plan.my)?;
    opts.clients = plan.work.connections();
    Ok(opts)
}

impl From<MyError> for SetupError {
    fn from(e: MyError) -> SetupError {
        match e {
            MyError::Setting { .. } => SetupError::Setting(e.to_string()),
            MyError::Db(_) => SetupError::Io(e.to_string()),
            _ => SetupError::Environment(e.to_string()),
        }
    }
}

/// The redo log's directory on a log stack (`innodb_log_group_home_dir`).
pub const REDO_DIR: &str = "myredo";

fn check(plan: &DbPlan, mem_limit: Option<u64>) -> Result<(), SetupError> {
    let opts = options(plan, Path::new("/nonexistent"))?;
    Ok(MyServer::check(&opts, mem_limit)?)
}

fn open(stack: &mut Stack, at: OpenAt) -> Opened {
    let mut opts = options(at.plan, at.data)?;
    opts.redo_dir = at.log_stack.map(|log| log.join(REDO_DIR));
    Ok(Box::new(MyServer::start(stack, opts)?))
}

impl ManagedDb for MyServer {
    fn db(&self) -> Db {
        Db::Mariadb
    }

    fn database(&self) -> Arc<dyn Database> {
        Arc::new(MyServer::database(self))
    }

    /// A restart with the buffer pool's dump and load off (docs/mariadb.md): really cold.
    fn quiesce(&mut self, stack: &mut Stack, act: &mut StackAct) -> Result<(), SetupError> {
        Ok(self.restart(stack, act)?)
    }

    fn describe(&self) -> DatabaseRun {
        self.database_run()
    }

    fn counters(&self) -> Option<DbCounters> {
        self.stats().ok().map(|s| s.counters())
    }

    /// Nothing: InnoDB has no checkpoint statement, and flushing every dirty page
    /// ([`MyServer::checkpoint`]) while clients write never finishes (it waited out a whole
    /// sysbench run). Its page cleaner flushes continuously (adaptive flushing), so a window in
    /// steady state holds its share; the dirty pages at both edges are in the record
    /// (docs/mariadb.md).
    fn checkpoint(&self) -> Result<(), SetupError> {
        Ok(())
    }

    /// Every dirty page written: the load's clients are gone.
    fn settle(&self) -> Result<(), SetupError> {
        Ok(MyServer::checkpoint(self)?)
    }

    fn size_on_disk(&self) -> Option<u64> {
        MyServer::size_on_disk(self).ok()
    }

    fn processes(&self) -> Vec<u32> {
        vec![self.pid() as u32]
    }

    fn log_len(&self) -> u64 {
        MyServer::log_len(self)
    }

    fn log_cause(&self, since: u64) -> Option<String> {
        MyServer::log_cause(self, since)
    }

    /// Redo bytes and doublewrite pages per committed transaction, from `SHOW GLOBAL STATUS`.
    fn warmup_costs(&self) -> Option<Costs<'_>> {
        let mut conn = self.connect().ok()?;
        Some(Costs {
            names: vec!["redo_bytes_per_txn", "dblwr_pages_per_txn"],
            read: Box::new(move || {
                let s = InnodbStats::read(&mut conn).ok()?;
                let redo = s.os_log_written? as f64;
                let dblwr = s.dblwr_pages_written.unwrap_or(0) as f64;
                Some((s.com_commit?, vec![redo, dblwr]))
            }),
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn stop(self: Box<Self>, stack: &mut Stack) -> Result<(), SetupError> {
        Ok(MyServer::stop(*self, stack)?)
    }
}
