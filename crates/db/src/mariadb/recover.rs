//! An instance as a power cut left it: started again (InnoDB's crash recovery applies its redo
//! log and rolls back what was not committed), then checked: `CHECK TABLE ... EXTENDED` on
//! every table of the benchmark database while it runs, `innochecksum` on every tablespace
//! once it is stopped.

use super::{MyError, MyOptions, MyServer};
use crate::integrity::PageCheck;
use crate::server_files::make_owned;
use bakeoff_stack::exec::{Cmd, Exec};
use bakeoff_stack::Stack;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one tablespace's check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(600);

impl MyServer {
    /// Starts the instance already in `opts.data_dir` (a crash state's copy, mounted on
    /// `stack`) with this server's option file: InnoDB recovers first. An error is the
    /// database failing to start from that state, with the end of its log.
    pub fn start_existing(stack: &mut Stack, opts: MyOptions) -> Result<MyServer, MyError> {
        let system = opts.data_dir.join("ibdata1");
        if !system.is_file() {
            return Err(MyError::Environment(format!(
                "{} holds no MariaDB instance (no ibdata1): nothing to recover",
                opts.data_dir.display()
            )));
        }
        let mut server = MyServer::unstarted(stack, opts)?;
        if !server.log_file.exists() {
            make_owned(&server.log_file, server.user, false)?;
        }
        server.write_cnf()?;
        server.make_socket_dir(stack)?;
        server.launch(stack)?;
        Ok(server)
    }

    /// `CHECK TABLE ... EXTENDED` on every table of the benchmark database: each row that is
    /// an error, or a status other than `OK`, is a problem.
    pub fn check_tables(&self) -> Result<PageCheck, MyError> {
        let mut conn = self.connect()?;
        let db = self.dbname().replace('\'', "''");
        let tables = conn.text_rows(&format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = '{db}' \
             AND table_type = 'BASE TABLE' ORDER BY table_name"
        ))?;
        let quoted_db = self.dbname().replace('`', "``");
        let mut check = PageCheck {
            tool: "CHECK TABLE",
            ..PageCheck::default()
        };
        for name in tables
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
        {
            let table = name.replace('`', "``");
            let rows = conn.text_rows(&format!("CHECK TABLE `{quoted_db}`.`{table}` EXTENDED"))?;
            for row in rows {
                let text = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
                let (kind, message) = (text(2), text(3));
                if kind == "error" || (kind == "status" && message != "OK") {
                    check.problems += 1;
                    check
                        .first
                        .get_or_insert(format!("{name}: {kind}: {message}"));
                }
            }
        }
        Ok(check)
    }
}

/// `innochecksum` on every InnoDB tablespace (`ibdata1`, each `.ibd`) of the stopped instance
/// in `data_dir`: a tablespace with a page whose checksum does not match is a problem.
pub fn check_tablespaces(data_dir: &Path) -> Result<PageCheck, MyError> {
    let mut check = PageCheck {
        tool: "innochecksum",
        ..PageCheck::default()
    };
    let mut exec = Exec::default();
    let system = data_dir.join("ibdata1");
    for file in tablespaces(data_dir)? {
        let path = file.to_string_lossy().into_owned();
        // The system tablespace's doublewrite buffer (its pages 64 to 191) holds copies of
        // other pages, which innochecksum takes for pages in the wrong place: check the
        // pages before it, then those after.
        let ranges: &[&[&str]] = match file == system {
            true => &[&["-e", "63"], &["-s", "192"]],
            false => &[&[]],
        };
        for range in ranges {
            check_pages(&mut exec, &path, range, &mut check)?;
        }
    }
    Ok(check)
}

/// `innochecksum` on the pages `range` of the tablespace at `path`, a mismatch added to `check`.
fn check_pages(
    exec: &mut Exec,
    path: &str,
    range: &[&str],
    check: &mut PageCheck,
) -> Result<(), MyError> {
    let mut args = range.to_vec();
    args.push(path);
    let cmd = Cmd::new("innochecksum", &args).timeout(CHECK_TIMEOUT);
    let out = exec.output(&cmd)?;
    match out.status {
        Some(0) => {}
        Some(1) => {
            check.problems += 1;
            let said = format!("{} {}", out.stdout.trim(), out.stderr.trim());
            check
                .first
                .get_or_insert(format!("{path}: {}", said.trim()));
        }
        _ => {
            return Err(MyError::Environment(format!(
                "innochecksum {path} could not check it ({}): {}",
                out.describe(),
                out.stderr.trim()
            )))
        }
    }
    Ok(())
}

/// `ibdata1` and every `.ibd` file under `data_dir`, in order.
fn tablespaces(data_dir: &Path) -> Result<Vec<PathBuf>, MyError> {
    let mut found = vec![data_dir.join("ibdata1")];
    let entries = std::fs::read_dir(data_dir).map_err(MyError::io("listing", data_dir))?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let entries = std::fs::read_dir(&dir).map_err(MyError::io("listing", &dir))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ibd"))
            .collect();
        files.sort();
        found.extend(files);
    }
    Ok(found)
}
