//! The steps of a [`MyServer`]'s life on its stack: the instance created by
//! `mariadb-install-db` as `mysql`, the private socket directory, `mariadbd` started as the
//! stack's daemon and read back once it answers, and a checkpoint (MariaDB has no `CHECKPOINT`
//! statement: the page cleaner is told to flush every dirty page, and bakeoff waits for none to
//! be left).

use super::client::{MyConn, USER};
use super::places::USER as OS_USER;
use super::variables::render;
use super::{Binaries, MyError, MyServer};
use crate::backend::Conn;
use crate::server_files::{check_reachable, log_tail, make_owned};
use bakeoff_stack::daemon::{alive, DaemonStart, StopBy};
use bakeoff_stack::exec::Cmd;
use bakeoff_stack::undo::Undo;
use bakeoff_stack::Stack;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

/// How long `mariadb-install-db` may take (it bootstraps InnoDB and its redo log: slow on a
/// FUSE file system).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the server may take to answer: crash recovery of a large redo log.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// What a checkpoint sets, in this order (and puts back in the other): the page cleaner keeps
/// no dirty page, and may write as fast as the device takes (`innodb_io_capacity` is 200
/// pages a second by default, so a 1-warehouse TPC-C load's 10,000 dirty pages took about a
/// minute to flush).
const FLUSH_NOW: [(&str, &str); 4] = [
    ("innodb_io_capacity_max", "1000000"),
    ("innodb_io_capacity", "1000000"),
    ("innodb_max_dirty_pages_pct_lwm", "0"),
    ("innodb_max_dirty_pages_pct", "0"),
];
/// How long a checkpoint may take to flush every dirty page.
const CHECKPOINT_TIMEOUT: Duration = Duration::from_secs(300);

impl MyServer {
    /// Directories and the log owned by mysql, the option file (root's, mode 0644: mariadbd
    /// ignores a world-writable one), then `mariadb-install-db` reading it (so InnoDB's redo
    /// log is made where the server will look for it).
    pub(super) fn create_instance(&self, stack: &mut Stack) -> Result<(), MyError> {
        let who = format!("the {OS_USER} user");
        for dir in std::iter::once(&self.data_dir).chain(&self.redo_dir) {
            make_owned(dir, self.user, true)?;
            check_reachable(dir, self.user, &who)?;
        }
        make_owned(&self.log_file, self.user, false)?;
        self.write_cnf()?;
        let defaults = format!("--defaults-file={}", self.cnf.display());
        let args = [
            defaults.as_str(),
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ];
        let install = Cmd::new(&Binaries::path(&self.binaries.install_db), &args)
            .user(Some(self.user))
            .timeout(INSTALL_TIMEOUT);
        stack.run_command(&install).map_err(|e| {
            MyError::Environment(format!(
                "{e}; the end of the server's log {}:\n{}",
                self.log_file.display(),
                log_tail(&self.log_file)
            ))
        })?;
        Ok(())
    }

    /// The option file the server reads, root's, mode 0644 (mariadbd ignores a world-writable
    /// one).
    pub(super) fn write_cnf(&self) -> Result<(), MyError> {
        std::fs::write(&self.cnf, render(&self.variables))
            .map_err(MyError::io("writing", &self.cnf))?;
        std::fs::set_permissions(&self.cnf, std::fs::Permissions::from_mode(0o644))
            .map_err(MyError::io("chmod", &self.cnf))
    }

    /// The socket directory, 0700 and mysql's, its removal recorded first.
    pub(super) fn make_socket_dir(&self, stack: &mut Stack) -> Result<(), MyError> {
        if self.socket_dir.exists() {
            return Err(MyError::Environment(format!(
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

    /// Starts `mariadbd` as a daemon of the stack (it does not detach itself: `sh ... &` does,
    /// so the shell exits and the server is reparented away from bakeoff), waits until it
    /// answers, and reads back what it runs with.
    pub(super) fn launch(&mut self, stack: &mut Stack) -> Result<(), MyError> {
        let server = Binaries::path(&self.binaries.mariadbd);
        let defaults = format!("--defaults-file={}", self.cnf.display());
        let log = self.log_file.to_string_lossy().into_owned();
        // `$!` is mariadbd itself (the background child execs it): a server that exits before
        // its pid file (InnoDB cannot recover, say) is noticed at once.
        let launched = self.socket_dir.join("mariadbd.launched");
        let script = r#""$0" "$1" </dev/null >>"$2" 2>&1 & echo $! >"$3""#;
        let at = launched.to_string_lossy().into_owned();
        let start =
            Cmd::new("sh", &["-c", script, &server, &defaults, &log, &at]).user(Some(self.user));
        let socket = format!("--socket={}", self.socket().display());
        let shutdown = [
            Binaries::path(&self.binaries.admin),
            "--no-defaults".into(),
            socket,
            format!("--user={USER}"),
            "shutdown".into(),
        ];
        let daemon = DaemonStart {
            name: "mariadbd".into(),
            exe: self.binaries.mariadbd.clone(),
            command: start,
            pidfile: self.socket_dir.join("mariadbd.pid"),
            stop: StopBy::Command {
                argv: shutdown.to_vec(),
                user: None,
            },
            ready_within: START_TIMEOUT,
            launched: Some(launched),
        };
        let started = stack.start_daemon(daemon).map(|d| d.pid());
        self.pid = started.map_err(|e| self.failed_start(e))?;
        let conn = self.wait_until_it_answers()?;
        self.read_back(conn)
    }

    fn failed_start(&self, e: impl std::fmt::Display) -> MyError {
        MyError::Environment(format!(
            "{e}; the end of its log {}:\n{}",
            self.log_file.display(),
            log_tail(&self.log_file)
        ))
    }

    /// A connection once the socket accepts one (the pid file is written before it does).
    fn wait_until_it_answers(&self) -> Result<MyConn, MyError> {
        let begun = Instant::now();
        loop {
            match MyConn::connect(&self.socket(), None) {
                Ok(conn) => return Ok(conn),
                Err(e) if !alive(self.pid) => return Err(self.failed_start(e)),
                Err(e) if begun.elapsed() > START_TIMEOUT => {
                    let waited = START_TIMEOUT.as_secs();
                    return Err(self.failed_start(format!("{e} (after {waited} s)")));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// `SELECT VERSION()`, `SHOW GLOBAL VARIABLES`, and the benchmark database (created if
    /// missing).
    fn read_back(&mut self, mut conn: MyConn) -> Result<(), MyError> {
        let rows = conn.text_rows("SELECT VERSION()")?;
        let first = rows.into_iter().next().and_then(|r| r.into_iter().next());
        self.version = first.flatten().unwrap_or_default();
        self.show_variables = conn.show("SHOW GLOBAL VARIABLES")?;
        let db = self.dbname.replace('`', "``");
        conn.batch(&format!("CREATE DATABASE IF NOT EXISTS `{db}`"))?;
        Ok(())
    }

    /// Every dirty page of the buffer pool written before it returns: the page cleaner told to
    /// keep none (`innodb_max_dirty_pages_pct` and its low-water mark 0) until
    /// `Innodb_buffer_pool_pages_dirty` is 0, then both put back.
    pub fn checkpoint(&self) -> Result<(), MyError> {
        let mut conn = MyConn::connect(&self.socket(), None)?;
        let names: Vec<String> = FLUSH_NOW.iter().map(|(k, _)| format!("'{k}'")).collect();
        let vars = conn.show(&format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
            names.join(", ")
        ))?;
        let mut restore = Vec::new();
        for (name, _) in FLUSH_NOW.iter().rev() {
            let was = vars.get(*name).map_or("0", String::as_str);
            restore.push(format!("SET GLOBAL {name} = {}", number(was)?));
        }
        for (name, value) in FLUSH_NOW {
            conn.batch(&format!("SET GLOBAL {name} = {value}"))?;
        }
        let flushed = wait_for_no_dirty_pages(&mut conn);
        conn.batch(&restore.join("; "))?;
        flushed
    }

    /// The bytes the benchmark database's files take on disk (allocated blocks: file per
    /// table puts each table in `<data dir>/<db>/`).
    pub fn size_on_disk(&self) -> Result<u64, MyError> {
        use std::os::unix::fs::MetadataExt;
        let dir = self.data_dir.join(&self.dbname);
        let entries = std::fs::read_dir(&dir).map_err(MyError::io("reading", &dir))?;
        Ok(entries
            .filter_map(|e| e.ok()?.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.blocks() * 512)
            .sum())
    }
}

/// A variable's value read back, checked to be a number before it goes into a `SET`.
fn number(v: &str) -> Result<&str, MyError> {
    match v.parse::<f64>() {
        Ok(_) => Ok(v),
        Err(_) => Err(MyError::Environment(format!(
            "MariaDB showed {v:?} for a dirty-page limit, not a number"
        ))),
    }
}

fn wait_for_no_dirty_pages(conn: &mut MyConn) -> Result<(), MyError> {
    let begun = Instant::now();
    loop {
        let status = conn.show("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")?;
        let dirty = status.get("Innodb_buffer_pool_pages_dirty");
        if dirty.map(String::as_str) == Some("0") {
            return Ok(());
        }
        if begun.elapsed() > CHECKPOINT_TIMEOUT {
            return Err(MyError::Environment(format!(
                "a checkpoint did not flush the buffer pool within {} s ({} pages still dirty): \
                 the stack may be too slow or failing",
                CHECKPOINT_TIMEOUT.as_secs(),
                dirty.map_or("?", String::as_str)
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
