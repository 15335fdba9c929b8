//! Where a managed server's files and socket go, and who owns them: the `postgres` user, the
//! private socket directory, the data and WAL directories' checks (on the stack, new or empty,
//! reachable by `postgres`) and their creation.

use super::client::ROLE;
use super::options::PgOptions;
use super::settings::PORT;
use super::PgError;
use bakeoff_stack::exec::RunAs;
use bakeoff_stack::Stack;
use std::path::PathBuf;

/// The `postgres` user (Debian's package creates it); bakeoff must be root to run as it.
pub fn postgres_user() -> Result<RunAs, PgError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(PgError::Environment(
            "a managed PostgreSQL server needs root: bakeoff runs initdb and the server as the \
             postgres user"
                .into(),
        ));
    }
    match nix::unistd::User::from_name(ROLE) {
        Ok(Some(u)) => Ok(RunAs {
            uid: u.uid.as_raw(),
            gid: u.gid.as_raw(),
        }),
        Ok(None) => Err(PgError::Environment(
            "there is no postgres user: install the Debian package postgresql (it creates it)"
                .into(),
        )),
        Err(e) => Err(PgError::Environment(format!(
            "looking up the postgres user: {e}"
        ))),
    }
}

/// `/tmp/bakeoff-pg-<name>`: short enough for a socket path (at most 107 bytes).
pub(super) fn socket_dir_for(name: &str) -> Result<PathBuf, PgError> {
    let dir = std::env::temp_dir().join(format!("bakeoff-pg-{name}"));
    let socket = dir.join(format!(".s.PGSQL.{PORT}"));
    if socket.as_os_str().len() > 107 || name.contains('/') {
        return Err(PgError::Environment(format!(
            "the server name {name:?} makes the socket path {} too long (or not one directory): \
             give a shorter name",
            socket.display()
        )));
    }
    Ok(dir)
}

/// The data directory's place: on the stack's file system, new or empty, and so is the WAL
/// directory (not inside the data directory).
pub(super) fn check_places(stack: &Stack, opts: &PgOptions) -> Result<(), PgError> {
    let refuse = |why: String| Err(PgError::Environment(why));
    if stack.is_device {
        return refuse(format!(
            "stack {} is a raw device: PostgreSQL needs a file system for its data directory",
            stack.name()
        ));
    }
    let data = &opts.data_dir;
    if !data.is_absolute() || !data.starts_with(&stack.target) || data == &stack.target {
        return refuse(format!(
            "the data directory {} must be a directory inside stack {}'s file system ({})",
            data.display(),
            stack.name(),
            stack.target.display()
        ));
    }
    for dir in std::iter::once(data).chain(&opts.wal_dir) {
        let empty = std::fs::read_dir(dir).map(|mut d| d.next().is_none());
        if matches!(empty, Ok(false)) || (dir.exists() && !dir.is_dir()) {
            return refuse(format!(
                "{} exists and is not an empty directory: remove it or choose another",
                dir.display()
            ));
        }
    }
    match &opts.wal_dir {
        Some(wal) if !wal.is_absolute() || wal.starts_with(data) => refuse(format!(
            "the WAL directory {} must be an absolute path outside the data directory",
            wal.display()
        )),
        _ => Ok(()),
    }
}

/// The line of a server log that best says why the server failed: one naming "No space left
/// on device" first (a full disk is what a benchmark on a small stack meets), else the last
/// `PANIC`, else the last `FATAL`, else the last `ERROR`; its message only (after the severity),
/// with the `DETAIL`/`HINT` lines that follow it dropped.
pub(super) fn cause_in_log(text: &str) -> Option<&str> {
    fn message(l: &str) -> Option<&str> {
        ["PANIC:", "FATAL:", "ERROR:", "LOG:"]
            .iter()
            .find_map(|sev| l.find(sev).map(|at| l[at..].trim()))
    }
    let messages: Vec<&str> = text.lines().filter_map(message).collect();
    let with = |severity: &str| {
        messages
            .iter()
            .rev()
            .copied()
            .find(|m| m.starts_with(severity))
    };
    let full = (messages.iter().rev().copied())
        .find(|m| m.contains("No space left on device") && !m.starts_with("LOG:"));
    full.or_else(|| with("PANIC:"))
        .or_else(|| with("FATAL:"))
        .or_else(|| with("ERROR:"))
}

#[cfg(test)]
mod tests {
    use super::cause_in_log;

    #[test]
    fn a_full_disk_is_the_cause_before_later_lines() {
        let log = "\
2026-11-26 15:20:01.1 UTC [41] ERROR:  duplicate key value violates unique constraint
2026-11-26 15:20:02.2 UTC [42] PANIC:  could not write to file \"pg_wal/xlogtemp.42\": No space left on device
2026-11-26 15:20:02.3 UTC [40] LOG:  server process (PID 42) was terminated by signal 6: Aborted
2026-11-26 15:20:02.4 UTC [40] LOG:  terminating any other active server processes
2026-11-26 15:20:03.0 UTC [43] FATAL:  the database system is in recovery mode
";
        assert_eq!(
            cause_in_log(log),
            Some("PANIC:  could not write to file \"pg_wal/xlogtemp.42\": No space left on device")
        );
        let other = "x LOG:  checkpoint\ny ERROR:  boom\nz FATAL:  gone\n";
        assert_eq!(cause_in_log(other), Some("FATAL:  gone"));
        assert_eq!(cause_in_log("x LOG:  all fine\n"), None);
    }
}
