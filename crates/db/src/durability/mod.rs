//! What a power cut left: one crash state's images (made by `bakeoff_stack::crash`) checked as
//! a DBA would after the outage. Fresh loop devices over the images, a mount and unmount (the
//! file system's journal recovery), the file system's own read-only check, a mount again, the
//! database opened or started (its own recovery), then the commits the client saw acknowledged
//! before the crash looked for ([`crate::tpcc::lost_commits`]), the TPC-C consistency
//! conditions and the database's integrity checks. The state's outcome is the worst of what was
//! found: file system damaged, database fails to start, corruption found, acknowledged commits
//! lost, clean.

mod blocks;
mod mariadb;
pub mod mounted;
mod postgres;
mod recovery;
mod states;

pub use states::{check_states, Sources};

use crate::backend::{Conn, Database};
use crate::integrity::{sqlite_integrity_check, PageCheck};
use crate::sqlite::{Sqlite, SqliteOptions};
use crate::tpcc::{check_consistency, lost_commits, Ack, LostCommits};
use bakeoff_stack::daemon::Daemon;
use bakeoff_stack::exec::Exec;
use bakeoff_stack::fs::check::{FsCheck, StateChecking};
use bakeoff_stack::fs::zfs::state as zfs_state;
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::{StackError, StackKind};
use mounted::{MountedState, DATA};
use recovery::{recover, recover_log};
use std::path::{Path, PathBuf};

/// A state's outcome, from the worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// The file system did not mount, or its check found damage.
    FsDamaged,
    /// The database did not open or start from the state.
    DbFailedToStart,
    /// The database's checks found corruption, or TPC-C's conditions do not hold.
    Corrupt,
    /// Commits the client saw acknowledged before the crash are missing.
    LostCommits,
    /// Nothing wrong found.
    Clean,
}

impl Outcome {
    /// Its name in records and tables.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::FsDamaged => "fs_damaged",
            Outcome::DbFailedToStart => "db_failed_to_start",
            Outcome::Corrupt => "corrupt",
            Outcome::LostCommits => "lost_commits",
            Outcome::Clean => "clean",
        }
    }
}

/// What checking one state found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateCheck {
    /// The worst of what follows.
    pub outcome: Outcome,
    /// The kernel's refusal to mount it, if it refused.
    pub mount_error: Option<String>,
    /// The file system's own check (after the journal's recovery), where the type has one.
    pub fs_check: Option<FsCheck>,
    /// Why the database did not open or start, if it did not.
    pub start_error: Option<String>,
    /// The acknowledged commits (or a verified run's acknowledged blocks) looked for, and
    /// those missing.
    pub lost: Option<LostCommits>,
    /// The first acknowledged write found missing, in words, where the check can name it (a
    /// verified run's block: its offset and the generations expected).
    pub lost_first: Option<String>,
    /// The database's integrity checks.
    pub integrity: Vec<PageCheck>,
    /// TPC-C's consistency conditions that do not hold, each with where.
    pub inconsistent: Vec<String>,
}

impl StateCheck {
    fn new() -> StateCheck {
        StateCheck {
            outcome: Outcome::Clean,
            mount_error: None,
            fs_check: None,
            start_error: None,
            lost: None,
            lost_first: None,
            integrity: Vec::new(),
            inconsistent: Vec::new(),
        }
    }

    /// The outcome from what was found.
    fn conclude(mut self) -> StateCheck {
        let fs_damaged =
            self.mount_error.is_some() || self.fs_check.as_ref().is_some_and(|c| !c.clean);
        let corrupt = !self.inconsistent.is_empty() || self.integrity.iter().any(|c| !c.clean());
        self.outcome = if fs_damaged {
            Outcome::FsDamaged
        } else if self.start_error.is_some() {
            Outcome::DbFailedToStart
        } else if corrupt {
            Outcome::Corrupt
        } else if self.lost.as_ref().is_some_and(|l| l.lost > 0) {
            Outcome::LostCommits
        } else {
            Outcome::Clean
        };
        self
    }
}

/// The database a state holds, where on its file system.
#[derive(Clone, Debug)]
pub enum StateDb {
    /// A SQLite file, its path relative to the file system's root, opened with these options
    /// (a hot journal is rolled back, a WAL replayed, on open).
    Sqlite {
        /// The file, relative to the mount.
        file: PathBuf,
        /// Its options, as the run had them.
        options: SqliteOptions,
    },
    /// A PostgreSQL cluster, started from the state under its own name (crash recovery),
    /// then checked by `pg_amcheck` and, once stopped, `pg_checksums` (where the cluster was
    /// made with `data_checksums`).
    Postgres {
        /// The data directory, relative to the mount.
        data_dir: PathBuf,
        /// Names the recovering server's socket directory.
        name: String,
        /// `pg_checksums` can check it: the run's cluster was made with `data_checksums`.
        checksums: bool,
    },
    /// A MariaDB instance, started from the state under its own name (InnoDB's crash
    /// recovery), then checked by `CHECK TABLE ... EXTENDED` and, once stopped,
    /// `innochecksum`.
    Mariadb {
        /// The data directory, relative to the mount.
        data_dir: PathBuf,
        /// Names the recovering server's socket directory.
        name: String,
        /// The run's `my.` variables (the redo log's size, the doublewrite ...).
        variables: std::collections::BTreeMap<String, String>,
    },
    /// A verified I/O run's files (`verify=`), each block judged against the run's journal
    /// of writes and syncs at the state's instant.
    Blocks {
        /// The journal, with the files' paths during the run.
        journal: std::sync::Arc<bakeoff_core::verify::journal::Journal>,
    },
}

/// How the states of one run are checked: the file system they hold, the database on it,
/// and a directory to mount them on (created if missing).
#[derive(Clone, Debug)]
pub struct Checker {
    /// The stack's type: how to mount it and its own check.
    pub kind: StackKind,
    /// The database and where it is.
    pub db: StateDb,
    /// Where each state is mounted while it is checked (a ZFS pool's alternate root).
    pub mountpoint: PathBuf,
    /// Where the run's stack was mounted: a ZFS dataset comes back there, below `mountpoint`.
    pub origin: PathBuf,
    /// The run's log stack (its WAL or redo), if it had one.
    pub log: Option<LogState>,
}

/// A run's log stack in its states: its images follow the data stack's.
#[derive(Clone, Debug)]
pub struct LogState {
    /// Its type.
    pub kind: StackKind,
    /// Where it was mounted in the run: a ZFS log pool's dataset comes back there, below
    /// `mountpoint`.
    pub origin: PathBuf,
    /// Its first image's index among a state's images.
    pub first: usize,
    /// Where it is mounted while a state is checked (created if missing).
    pub mountpoint: PathBuf,
}

impl Checker {
    /// Checks the state whose images are `images`: see the module. The acknowledged commits
    /// `acks` at or before `crash_ns` must be there. Every loop device, mount and pool is in
    /// `ledger` before it exists and is gone when this returns.
    pub fn check(
        &self,
        images: &[PathBuf],
        acks: &[Ack],
        crash_ns: u64,
        ledger: &mut Ledger,
        exec: &mut Exec,
    ) -> Result<StateCheck, StackError> {
        let split = (self.log.as_ref()).map_or(images.len(), |l| l.first.min(images.len()));
        let (data_images, log_images) = images.split_at(split);
        let mut found = StateCheck::new();
        let mut state = MountedState::attach(data_images, &self.mountpoint, ledger, exec)?;
        let root = recover(
            &mut state,
            DATA,
            (self.kind, &self.origin),
            &mut found,
            exec,
        )?;
        let log_root = match &self.log {
            Some(log) => recover_log(&mut state, log, log_images, &mut found, exec)?,
            None => None,
        };
        if let Some(root) = root.filter(|_| self.log.is_none() || log_root.is_some()) {
            let at = (acks, crash_ns);
            let places = Places {
                root: &root,
                origin: &self.origin,
                log: log_root.as_deref(),
            };
            check_database(&self.db, &places, at, &mut found);
        }
        state.close(exec)?;
        Ok(found.conclude())
    }

    /// Starts what checking this run's states needs throughout (ZFS on zfs-fuse: a daemon of
    /// the checks' own, under `dir`); stop it with [`Checker::stop_serving`].
    pub fn serve(
        &self,
        dir: &Path,
        ledger: &mut Ledger,
        exec: &mut Exec,
    ) -> Result<Option<Daemon>, StackError> {
        let kinds = std::iter::once(self.kind).chain(self.log.as_ref().map(|l| l.kind));
        let pool = |k: StackKind| matches!(k.driver().crash_state, Some(StateChecking::Pool));
        match kinds.into_iter().any(pool) {
            true => zfs_state::serve(dir, ledger, exec),
            false => Ok(None),
        }
    }

    /// Stops what [`Checker::serve`] started.
    pub fn stop_serving(&self, served: Option<Daemon>, exec: &mut Exec) -> Result<(), StackError> {
        served.map_or(Ok(()), |d| zfs_state::stop_serving(&d, exec))
    }
}

/// Where a state's database is: the data stack's root in the state and in the run, and the
/// log stack's root in the state, if the run had one.
struct Places<'a> {
    root: &'a Path,
    origin: &'a Path,
    log: Option<&'a Path>,
}

/// Opens the database on the mounted state (`places`) and runs its checks into `found`: the
/// commits in `acks` acknowledged at or before `crash_ns` must be there.
fn check_database(
    db: &StateDb,
    places: &Places,
    (acks, crash_ns): (&[Ack], u64),
    found: &mut StateCheck,
) {
    let (root, origin) = (places.root, places.origin);
    match db {
        StateDb::Postgres {
            data_dir,
            name,
            checksums,
        } => {
            let wal = places
                .log
                .map(|l| l.join(crate::postgres::managed::WAL_DIR));
            let at = (acks, crash_ns);
            if let Err(e) = postgres::check(root, data_dir, (name, wal), *checksums, at, found) {
                found.start_error = Some(e);
            }
        }
        StateDb::Mariadb {
            data_dir,
            name,
            variables,
        } => {
            let at = (acks, crash_ns);
            let redo = places
                .log
                .map(|l| l.join(crate::mariadb::managed::REDO_DIR));
            if let Err(e) = mariadb::check(root, data_dir, (name, redo), variables, at, found) {
                found.start_error = Some(e);
            }
        }
        StateDb::Blocks { journal } => blocks::check(root, origin, journal, crash_ns, found),
        StateDb::Sqlite { file, options } => {
            let path = root.join(file);
            let opened = Sqlite::open(&path, options.clone()).and_then(|db| db.connect());
            let mut conn = match opened {
                Ok(conn) => conn,
                Err(e) => {
                    found.start_error = Some(e.message);
                    return;
                }
            };
            let integrity = sqlite_integrity_check(conn.as_mut());
            let readable = integrity.clean();
            found.integrity.push(integrity);
            if readable {
                // (Queries over damaged pages say the same again, or worse, at random.)
                check_commits(conn.as_mut(), acks, crash_ns, found);
            }
        }
    }
}

/// A `dir` stack over the mounted state `root`, named for `name`, so that a server started
/// from the state is a daemon of it (stopped on every exit path); its images directory is the
/// caller's, beside the mount, not the default one.
fn state_stack(root: &Path, name: &str) -> Result<bakeoff_stack::Stack, String> {
    let spec = bakeoff_stack::StackSpec::parse(&format!("dir:path={}", root.display()))
        .map_err(|e| e.to_string())?;
    let opts = bakeoff_stack::Options {
        name: Some(format!("{name}-dir")),
        images: root.parent().unwrap_or(root).to_path_buf(),
        ..bakeoff_stack::Options::default()
    };
    bakeoff_stack::Stack::create(&spec, &opts).map_err(|e| e.to_string())
}

/// The acknowledged New-Orders and TPC-C's consistency conditions on `conn`, into `found`.
fn check_commits(conn: &mut dyn Conn, acks: &[Ack], crash_ns: u64, found: &mut StateCheck) {
    match lost_commits(conn, acks, crash_ns) {
        Ok(lost) => found.lost = Some(lost),
        Err(e) => found.start_error = Some(e.message),
    }
    match check_consistency(conn) {
        Ok(conditions) => {
            let failing = conditions.into_iter().filter(|c| !c.passed);
            found.inconsistent.extend(
                failing
                    .map(|c| format!("condition {}: {}", c.number, c.offender.unwrap_or_default())),
            )
        }
        Err(e) => {
            (found.inconsistent).push(format!("the conditions' queries failed: {}", e.message))
        }
    }
}
