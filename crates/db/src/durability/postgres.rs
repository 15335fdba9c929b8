//! A PostgreSQL cluster in a mounted crash state: started under its own name on a `dir` stack
//! over the mount (so its postmaster is a daemon of that stack, stopped on every exit path),
//! then the acknowledged commits, TPC-C's conditions, `pg_amcheck`, and once it is stopped,
//! `pg_checksums`.

use super::{check_commits, state_stack, StateCheck};
use crate::postgres::{check_checksums, PgOptions, PgServer};
use crate::tpcc::Ack;
use std::path::{Path, PathBuf};

/// Runs the checks into `found`; an error is the cluster failing to start (or a check that
/// could not run), in words. `wal`: the log stack's WAL directory in the state, where the
/// run kept it there (the data directory's `pg_wal` link, which names the run's mount, is
/// pointed at it first).
pub(super) fn check(
    root: &Path,
    data_dir: &Path,
    (name, wal): (&str, Option<PathBuf>),
    checksums: bool,
    (acks, crash_ns): (&[Ack], u64),
    found: &mut StateCheck,
) -> Result<(), String> {
    let mut stack = state_stack(root, name)?;
    if let Some(wal) = wal {
        let link = root.join(data_dir).join("pg_wal");
        std::fs::remove_file(&link)
            .and_then(|()| std::os::unix::fs::symlink(&wal, &link))
            .map_err(|e| format!("pointing {} at {}: {e}", link.display(), wal.display()))?;
    }
    let mut pg = PgOptions::new(root.join(data_dir));
    pg.name = Some(name.to_string());
    let server = PgServer::start_existing(&mut stack, pg).map_err(|e| e.to_string())?;
    let mut conn = server.connect().map_err(|e| e.to_string())?;
    check_commits(&mut conn, acks, crash_ns, found);
    drop(conn);
    found
        .integrity
        .push(server.amcheck().map_err(|e| e.to_string())?);
    let (binaries, user) = (server.binaries().clone(), server.user());
    let data = server.data_dir().to_path_buf();
    server.stop(&mut stack).map_err(|e| e.to_string())?;
    if checksums {
        found
            .integrity
            .push(check_checksums(&binaries, user, &data).map_err(|e| e.to_string())?);
    }
    Ok(())
}
