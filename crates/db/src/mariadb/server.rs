//! A MariaDB server on a live stack: variables validated before anything is created, the data
//! directory (and the redo log's, maybe on a log stack) owned by `mysql`, `mariadb-install-db`
//! run as `mysql` through the stack's runner, a private socket directory whose removal is in the
//! stack's ledger before it exists, and `mariadbd` a daemon of the stack (its stop in the ledger
//! before it starts: teardown and `bakeoff cleanup` stop it before unmounting what it runs on).
//! No TCP: `skip_networking`, the socket only.

use super::checks;
use super::client::MyConn;
pub use super::options::MyOptions;
use super::places::{check_places, mysql_user, socket_dir_for, SOCKET};
use super::variables::{self, Places, Variables};
use super::{Binaries, InnodbStats, MyError};
use crate::server_files::log_file_of;
use crate::sizing::Sizing;
use bakeoff_core::dbrecord::DatabaseRun;
use bakeoff_stack::exec::{Exec, RunAs};
use bakeoff_stack::undo::{perform, Undo};
use bakeoff_stack::{Stack, StackError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A running server bakeoff started (stopped by the stack's teardown if not before).
#[derive(Debug)]
pub struct MyServer {
    pub(super) binaries: Binaries,
    pub(super) user: RunAs,
    pub(super) data_dir: PathBuf,
    pub(super) redo_dir: Option<PathBuf>,
    pub(super) log_file: PathBuf,
    pub(super) cnf: PathBuf,
    pub(super) socket_dir: PathBuf,
    pub(super) dbname: String,
    pub(super) variables: Variables,
    pub(super) pid: i32,
    pub(super) version: String,
    pub(super) show_variables: BTreeMap<String, String>,
}

/// Where the server's files go when its socket directory is `socket_dir`.
fn places(opts: &MyOptions, socket_dir: &Path) -> Result<Places, MyError> {
    Ok(Places {
        data_dir: opts.data_dir.clone(),
        redo_dir: opts.redo_dir.clone(),
        socket: socket_dir.join(SOCKET),
        pid_file: socket_dir.join("mariadbd.pid"),
        log_error: log_file_of(&opts.data_dir)?,
    })
}

/// The binaries, the user, and every variable checked: the user's against the server's list,
/// then all of them by the server's own parser. The variables the server will run with.
fn validate(
    opts: &MyOptions,
    mem_limit: Option<u64>,
    socket_dir: &Path,
) -> Result<(Binaries, RunAs, Variables), MyError> {
    let binaries = Binaries::find()?;
    let user = mysql_user()?;
    let sizing = Sizing::of_machine(mem_limit, opts.clients)?;
    let mut exec = Exec::default();
    let catalog = checks::catalog(&binaries, &mut exec)?;
    checks::check_user_variables(&catalog, &opts.variables)?;
    let defaults = variables::defaults(&sizing, &places(opts, socket_dir)?);
    let all = variables::merge(defaults, &opts.variables);
    checks::server_check(&binaries, &all, &opts.variables, &sizing, &mut exec)?;
    Ok((binaries, user, all))
}

impl MyServer {
    /// What [`MyServer::start`] checks before it creates anything (the binaries, the `mysql`
    /// user, the variables against the server's list and its own parser), for a dry run.
    pub fn check(opts: &MyOptions, mem_limit: Option<u64>) -> Result<(), MyError> {
        validate(opts, mem_limit, Path::new("/tmp/bakeoff-my-check")).map(drop)
    }

    /// Validates the variables, creates the instance on `stack` and starts it; see the module.
    pub fn start(stack: &mut Stack, opts: MyOptions) -> Result<MyServer, MyError> {
        check_places(stack, &opts)?;
        let mut server = MyServer::unstarted(stack, opts)?;
        server.create_instance(stack)?;
        server.make_socket_dir(stack)?;
        server.launch(stack)?;
        Ok(server)
    }

    /// The server `opts` describe, its variables checked, nothing created or started.
    pub(super) fn unstarted(stack: &Stack, opts: MyOptions) -> Result<MyServer, MyError> {
        let name = opts
            .name
            .clone()
            .unwrap_or_else(|| stack.name().to_string());
        let socket_dir = socket_dir_for(&name)?;
        let (binaries, user, all) = validate(&opts, stack.info.mem_limit_bytes, &socket_dir)?;
        let log_file = log_file_of(&opts.data_dir)?;
        let cnf = log_file.with_extension("cnf");
        Ok(MyServer {
            binaries,
            user,
            log_file,
            cnf,
            data_dir: opts.data_dir,
            redo_dir: opts.redo_dir,
            socket_dir,
            dbname: opts.dbname,
            variables: all,
            pid: 0,
            version: String::new(),
            show_variables: BTreeMap::new(),
        })
    }

    /// Stops the server, lets `while_stopped` make the run cold (drop caches, re-import a
    /// pool: `|stack| stack.prepare_run(false)`), and starts it again.
    pub fn restart(
        &mut self,
        stack: &mut Stack,
        while_stopped: impl FnOnce(&mut Stack) -> Result<(), StackError>,
    ) -> Result<(), MyError> {
        stack.stop_daemon(self.pid)?;
        while_stopped(stack)?;
        self.launch(stack)
    }

    /// Stops the server now (a clean shutdown) and removes its socket directory.
    pub fn stop(self, stack: &mut Stack) -> Result<(), MyError> {
        stack.stop_daemon(self.pid)?;
        let undo = Undo::RemoveDirAndFiles {
            path: self.socket_dir.clone(),
        };
        perform(&undo, &mut Exec::default()).map_err(MyError::Environment)
    }

    /// Its benchmark database, for the workloads' connections.
    pub fn database(&self) -> super::client::MyDatabase {
        super::client::MyDatabase::new(&self.socket(), &self.dbname)
    }

    /// A connection to the benchmark database.
    pub fn connect(&self) -> Result<MyConn, MyError> {
        Ok(MyConn::connect(&self.socket(), Some(&self.dbname))?)
    }

    /// InnoDB's and the server's counters now (see [`InnodbStats`]).
    pub fn stats(&self) -> Result<InnodbStats, MyError> {
        let mut conn = MyConn::connect(&self.socket(), None)?;
        Ok(InnodbStats::read(&mut conn)?)
    }

    /// What the run record says about the server: version, `SHOW GLOBAL VARIABLES`, and where
    /// its files and socket are (the load, window counters and the rest are the caller's).
    pub fn database_run(&self) -> DatabaseRun {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let mut paths = BTreeMap::from([
            ("data_directory".to_string(), path(&self.data_dir)),
            ("log_file".to_string(), path(&self.log_file)),
            ("socket_directory".to_string(), path(&self.socket_dir)),
            ("cnf".to_string(), path(&self.cnf)),
            ("mariadbd".to_string(), path(&self.binaries.mariadbd)),
        ]);
        if let Some(redo) = &self.redo_dir {
            paths.insert("redo_directory".into(), path(redo));
        }
        DatabaseRun {
            db: "mariadb".into(),
            version: self.version.clone(),
            settings: self.show_variables.clone(),
            paths,
            ..DatabaseRun::default()
        }
    }

    /// The server's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// `SELECT VERSION()`, read back at the last start.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// `SHOW GLOBAL VARIABLES` (name to value), read back at the last start.
    pub fn show_variables(&self) -> &BTreeMap<String, String> {
        &self.show_variables
    }

    /// The variables written: bakeoff's defaults and the user's over them.
    pub fn variables(&self) -> &Variables {
        &self.variables
    }

    /// The binaries it runs.
    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    /// The private directory holding its socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// Its socket.
    pub fn socket(&self) -> PathBuf {
        self.socket_dir.join(SOCKET)
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The redo log's directory, if not the data directory.
    pub fn redo_dir(&self) -> Option<&Path> {
        self.redo_dir.as_deref()
    }

    /// Its option file (`<data dir>.cnf`, beside the data directory).
    pub fn cnf(&self) -> &Path {
        &self.cnf
    }

    /// The server's error log (`<data dir>.log`, beside the data directory).
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// How long the server's log is now, to read what it says about a failure from here on.
    pub fn log_len(&self) -> u64 {
        std::fs::metadata(&self.log_file).map_or(0, |m| m.len())
    }

    /// What the server's log says went wrong since it was `since` bytes long (see
    /// [`MyServer::log_len`]): `the server's log says: [ERROR] ...`, or `None` if it says
    /// nothing of a failure.
    pub fn log_cause(&self, since: u64) -> Option<String> {
        let bytes = std::fs::read(&self.log_file).ok()?;
        let from = usize::try_from(since)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let text = String::from_utf8_lossy(&bytes[from..]);
        let cause = super::places::cause_in_log(&text)?;
        let full = cause.contains("No space left on device")
            || cause.contains("Operating system error number 28");
        let hint = match full {
            true => "; the file system is full: give the stack more room (--size)",
            false => "",
        };
        Some(format!(
            "the server's log says: {} (paths relative to its data directory {}){hint}",
            cause.split_whitespace().collect::<Vec<_>>().join(" "),
            self.data_dir.display()
        ))
    }

    /// The benchmark database's name.
    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    /// The user the server runs as.
    pub fn user(&self) -> RunAs {
        self.user
    }
}
