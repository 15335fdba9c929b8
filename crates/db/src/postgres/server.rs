//! A PostgreSQL server on a live stack: settings validated before anything is created, the
//! data directory (and the WAL directory, maybe on a log stack) owned by `postgres`, `initdb`
//! and `pg_ctl` run as `postgres` through the stack's runner, a private socket directory whose
//! removal is in the stack's ledger before it exists, and the postmaster a daemon of the stack
//! (its stop in the ledger before it starts: teardown and `bakeoff cleanup` stop it before
//! unmounting what it runs on).

use super::client::{PgConn, PgDatabase, ROLE};
use super::options::PgOptions;
use super::places::{cause_in_log, check_places, postgres_user, socket_dir_for};
use super::settings::{self, Settings, Sizing, PORT};
use super::{Binaries, PgError, PgStats};
use crate::backend::{Conn, Value};
use crate::server_files::{check_reachable, log_file_of, log_tail, make_owned};
use bakeoff_core::dbrecord::DatabaseRun;
use bakeoff_stack::daemon::{DaemonStart, StopBy};
use bakeoff_stack::exec::{Cmd, Exec, RunAs};
use bakeoff_stack::undo::{perform, Undo};
use bakeoff_stack::{Stack, StackError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long initdb may take (it syncs the new cluster; slow on a FUSE file system).
const INITDB_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the server may take to start (`pg_ctl -t`): crash recovery of a large WAL.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A running server bakeoff started (stopped by the stack's teardown if not before).
#[derive(Debug)]
pub struct PgServer {
    binaries: Binaries,
    user: RunAs,
    data_dir: PathBuf,
    wal_dir: Option<PathBuf>,
    log_file: PathBuf,
    socket_dir: PathBuf,
    dbname: String,
    settings: Settings,
    pid: i32,
    version: String,
    show_all: BTreeMap<String, String>,
}

impl PgServer {
    /// What [`PgServer::start`] checks before it creates anything (the binaries, the `postgres`
    /// user, the settings against the server's catalog and its own parser), for a dry run.
    pub fn check(opts: &PgOptions, mem_limit: Option<u64>) -> Result<(), PgError> {
        let binaries = Binaries::find(opts.bindir.as_deref())?;
        postgres_user()?;
        let sizing = Sizing::of_machine(mem_limit, opts.clients)?;
        let mut exec = Exec::default();
        let catalog = settings::catalog(&binaries, &mut exec)?;
        settings::check_user_settings(&catalog, &opts.settings)?;
        let socket = Path::new("/tmp/bakeoff-pg-check");
        let all = settings::merge(settings::defaults(&sizing, socket), &opts.settings);
        settings::server_check(&binaries, &all, &sizing, &mut exec)
    }

    /// Validates the settings, creates the cluster on `stack` and starts it; see the module.
    pub fn start(stack: &mut Stack, opts: PgOptions) -> Result<PgServer, PgError> {
        check_places(stack, &opts)?;
        let checksums = opts.data_checksums;
        let mut server = PgServer::unstarted(stack, opts)?;
        server.create_cluster(stack, checksums)?;
        server.make_socket_dir(stack)?;
        server.launch(stack)?;
        Ok(server)
    }

    /// The server `opts` describe, its settings checked, nothing created or started.
    pub(super) fn unstarted(stack: &Stack, opts: PgOptions) -> Result<PgServer, PgError> {
        let binaries = Binaries::find(opts.bindir.as_deref())?;
        let user = postgres_user()?;
        let name = opts
            .name
            .clone()
            .unwrap_or_else(|| stack.name().to_string());
        let socket_dir = socket_dir_for(&name)?;
        let sizing = Sizing::of_machine(stack.info.mem_limit_bytes, opts.clients)?;
        let mut exec = Exec::default();
        let catalog = settings::catalog(&binaries, &mut exec)?;
        settings::check_user_settings(&catalog, &opts.settings)?;
        let all = settings::merge(settings::defaults(&sizing, &socket_dir), &opts.settings);
        settings::server_check(&binaries, &all, &sizing, &mut exec)?;
        Ok(PgServer {
            binaries,
            user,
            log_file: log_file_of(&opts.data_dir)?,
            data_dir: opts.data_dir,
            wal_dir: opts.wal_dir,
            socket_dir,
            dbname: opts.dbname,
            settings: all,
            pid: 0,
            version: String::new(),
            show_all: BTreeMap::new(),
        })
    }

    /// Stops the server, lets `while_stopped` make the run cold (drop caches, re-import a
    /// pool: `|stack| stack.prepare_run(false)`), and starts it again.
    pub fn restart(
        &mut self,
        stack: &mut Stack,
        while_stopped: impl FnOnce(&mut Stack) -> Result<(), StackError>,
    ) -> Result<(), PgError> {
        stack.stop_daemon(self.pid)?;
        while_stopped(stack)?;
        self.launch(stack)
    }

    /// Stops the server now (a fast shutdown) and removes its socket directory.
    pub fn stop(self, stack: &mut Stack) -> Result<(), PgError> {
        stack.stop_daemon(self.pid)?;
        let undo = Undo::RemoveDirAndFiles {
            path: self.socket_dir.clone(),
        };
        perform(&undo, &mut Exec::default()).map_err(PgError::Environment)
    }

    /// The benchmark database.
    pub fn database(&self) -> PgDatabase {
        PgDatabase::new(&self.socket_dir, PORT, &self.dbname)
    }

    /// An immediate checkpoint (`CHECKPOINT`): every dirty buffer written and the data files
    /// synced before it returns.
    pub fn checkpoint(&self) -> Result<(), PgError> {
        let mut conn = self.database().connect_pg()?;
        conn.batch("CHECKPOINT")?;
        Ok(())
    }

    /// The server's counters now (see [`PgStats`]), for the benchmark database.
    pub fn stats(&self) -> Result<PgStats, PgError> {
        let mut conn = self.database().connect_pg()?;
        Ok(PgStats::read(&mut conn, &self.dbname)?)
    }

    /// The server's counters now, read over `conn` (a connection kept open for a series of
    /// readings, such as the warm-up's one a second).
    pub fn stats_on(&self, conn: &mut super::PgConn) -> Result<PgStats, PgError> {
        Ok(PgStats::read(conn, &self.dbname)?)
    }

    /// What the run record says about the server: version, `SHOW ALL`, and where its files
    /// and socket are (the load, window counters and the rest are the caller's to fill).
    pub fn database_run(&self) -> DatabaseRun {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let mut paths = BTreeMap::from([
            ("data_directory".to_string(), path(&self.data_dir)),
            ("log_file".to_string(), path(&self.log_file)),
            ("socket_directory".to_string(), path(&self.socket_dir)),
            ("bindir".to_string(), path(&self.binaries.dir)),
        ]);
        if let Some(wal) = &self.wal_dir {
            paths.insert("wal_directory".into(), path(wal));
        }
        DatabaseRun {
            db: "postgres".into(),
            version: self.version.clone(),
            settings: self.show_all.clone(),
            paths,
            ..DatabaseRun::default()
        }
    }

    /// The postmaster's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// `SELECT version()`, read back at the last start.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// `SHOW ALL` (name to value), read back at the last start.
    pub fn show_all(&self) -> &BTreeMap<String, String> {
        &self.show_all
    }

    /// The settings written: bakeoff's defaults and the user's over them.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The binaries it runs.
    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    /// The private directory holding its socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The WAL directory, if not the data directory's own `pg_wal`.
    pub fn wal_dir(&self) -> Option<&Path> {
        self.wal_dir.as_deref()
    }

    /// The server's log (`pg_ctl -l`), beside the data directory.
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// How long the server's log is now, to read what it says about a failure from here on.
    pub fn log_len(&self) -> u64 {
        std::fs::metadata(&self.log_file).map_or(0, |m| m.len())
    }

    /// What the server's log says went wrong since it was `since` bytes long (see
    /// [`PgServer::log_len`]): `the server's log says: PANIC: ... (paths relative to its data
    /// directory DIR)`, or `None` if it says nothing of a failure. A client sees only "error
    /// communicating with the server" when the server crashed, e.g. on a full disk.
    pub fn log_cause(&self, since: u64) -> Option<String> {
        let bytes = std::fs::read(&self.log_file).ok()?;
        let from = usize::try_from(since)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let text = String::from_utf8_lossy(&bytes[from..]);
        let cause = cause_in_log(&text)?;
        let full = match cause.contains("No space left on device") {
            true => "; the file system is full: give the stack more room (--size)",
            false => "",
        };
        Some(format!(
            "the server's log says: {} (paths relative to its data directory {}){full}",
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

    pub(super) fn as_postgres(&self, program: &str, args: &[&str]) -> Cmd {
        Cmd::new(&self.binaries.tool(program), args).user(Some(self.user))
    }

    /// Directories owned by postgres, `initdb`, then the settings into `postgresql.auto.conf`
    /// (read last, so they win over initdb's postgresql.conf). `checksums`: pages carry
    /// checksums (`--data-checksums`), which a check after a crash reads.
    fn create_cluster(&self, stack: &mut Stack, checksums: bool) -> Result<(), PgError> {
        for dir in std::iter::once(&self.data_dir).chain(&self.wal_dir) {
            make_owned(dir, self.user, true)?;
            check_reachable(dir, self.user, "the postgres user")?;
        }
        make_owned(&self.log_file, self.user, false)?;
        let data = self.data_dir.to_string_lossy().into_owned();
        let mut args = vec![
            "-D",
            &data,
            "-U",
            ROLE,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
        ];
        let wal = self
            .wal_dir
            .as_ref()
            .map(|w| w.to_string_lossy().into_owned());
        if let Some(wal) = &wal {
            args.extend(["--waldir", wal]);
        }
        if checksums {
            args.push("--data-checksums");
        }
        stack.run_command(&self.as_postgres("initdb", &args).timeout(INITDB_TIMEOUT))?;
        let auto = self.data_dir.join("postgresql.auto.conf");
        let mut text = std::fs::read_to_string(&auto).map_err(PgError::io("reading", &auto))?;
        text.push_str(&settings::render(&self.settings));
        std::fs::write(&auto, text).map_err(PgError::io("writing", &auto))
    }

    /// The socket directory, 0700 and postgres's, its removal recorded first.
    pub(super) fn make_socket_dir(&self, stack: &mut Stack) -> Result<(), PgError> {
        if self.socket_dir.exists() {
            return Err(PgError::Environment(format!(
                "{} exists: a server of the same name runs, or a killed run left it \
                 (`bakeoff cleanup` removes it)",
                self.socket_dir.display()
            )));
        }
        stack.record_undo(Undo::RemoveDirAndFiles {
            path: self.socket_dir.clone(),
        })?;
        Ok(make_owned(&self.socket_dir, self.user, true)?)
    }

    /// Starts the postmaster as a daemon of the stack and reads back what it runs with.
    pub(super) fn launch(&mut self, stack: &mut Stack) -> Result<(), PgError> {
        let data = self.data_dir.to_string_lossy().into_owned();
        let log = self.log_file.to_string_lossy().into_owned();
        let limit = START_TIMEOUT.as_secs().to_string();
        let start = self.as_postgres(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-w", "-t", &limit, "start"],
        );
        let postgres = self.binaries.dir.join("postgres");
        let daemon = DaemonStart {
            name: "postgres".into(),
            exe: std::fs::canonicalize(&postgres).map_err(PgError::io("resolving", &postgres))?,
            command: start.timeout(START_TIMEOUT + Duration::from_secs(30)),
            pidfile: self.data_dir.join("postmaster.pid"),
            stop: StopBy::Command {
                argv: self
                    .as_postgres("pg_ctl", &["-D", &data, "-m", "fast", "stop"])
                    .argv(),
                user: Some(self.user),
            },
            ready_within: START_TIMEOUT,
            launched: None,
        };
        match stack.start_daemon(daemon) {
            Ok(d) => self.pid = d.pid(),
            Err(e) => {
                let tail = log_tail(&self.log_file);
                return Err(PgError::Environment(format!(
                    "{e}; the end of its log {}:\n{tail}",
                    self.log_file.display()
                )));
            }
        }
        self.read_back()
    }

    /// `SELECT version()`, `SHOW ALL`, and the benchmark database (created if missing).
    fn read_back(&mut self) -> Result<(), PgError> {
        let mut admin = self.database_named("postgres").connect_pg()?;
        let text = |v: &Value| v.text().unwrap_or_default().to_string();
        let rows = admin.query("SELECT version()", &[])?;
        self.version = rows
            .first()
            .and_then(|r| r.first())
            .map(text)
            .unwrap_or_default();
        self.show_all = admin
            .query("SHOW ALL", &[])?
            .iter()
            .filter_map(|r| Some((text(r.first()?), text(r.get(1)?))))
            .collect();
        let exists = "SELECT 1 FROM pg_database WHERE datname = $1";
        if admin
            .query(exists, &[Value::from(self.dbname.as_str())])?
            .is_empty()
        {
            admin.batch(&format!("CREATE DATABASE {}", quote_ident(&self.dbname)))?;
        }
        Ok(())
    }

    fn database_named(&self, dbname: &str) -> PgDatabase {
        PgDatabase::new(&self.socket_dir, PORT, dbname)
    }

    /// A typed connection to the benchmark database.
    pub fn connect(&self) -> Result<PgConn, PgError> {
        Ok(self.database().connect_pg()?)
    }
}

/// `name` as a quoted SQL identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
