//! A MariaDB instance in a mounted crash state: started under its own name on a `dir` stack
//! over the mount (InnoDB's crash recovery applies its redo log; the server is a daemon of
//! that stack, stopped on every exit path), then the acknowledged commits, TPC-C's conditions,
//! `CHECK TABLE ... EXTENDED`, and once it is stopped, `innochecksum` on every tablespace.

use super::{check_commits, state_stack, StateCheck};
use crate::mariadb::{check_tablespaces, MyOptions, MyServer};
use crate::tpcc::Ack;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs the checks into `found` (`redo`: the log stack's redo directory in the state, where
/// the run kept it there); an error is the instance failing to start (or a check that
/// could not run), in words.
pub(super) fn check(
    root: &Path,
    data_dir: &Path,
    (name, redo): (&str, Option<PathBuf>),
    variables: &BTreeMap<String, String>,
    (acks, crash_ns): (&[Ack], u64),
    found: &mut StateCheck,
) -> Result<(), String> {
    let mut stack = state_stack(root, name)?;
    // The run's own variables: the redo log's size and the doublewrite as the run had them.
    let mut my = MyOptions::new(root.join(data_dir));
    my.set_all(variables).map_err(|e| e.to_string())?;
    my.name = Some(name.to_string());
    // The redo log on the log stack, where the run kept it there.
    my.redo_dir = redo;
    let server = MyServer::start_existing(&mut stack, my).map_err(|e| e.to_string())?;
    let mut conn = server.connect().map_err(|e| e.to_string())?;
    check_commits(&mut conn, acks, crash_ns, found);
    drop(conn);
    let tables = server.check_tables().map_err(|e| e.to_string())?;
    found.integrity.push(tables);
    let data = server.data_dir().to_path_buf();
    server.stop(&mut stack).map_err(|e| e.to_string())?;
    let pages = check_tablespaces(&data).map_err(|e| e.to_string())?;
    found.integrity.push(pages);
    Ok(())
}
