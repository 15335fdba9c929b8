//! Where a managed MariaDB server's files and socket go, and who owns them: the `mysql` user,
//! the private socket directory, the data and redo directories' checks (on the stack, new or
//! empty) and what its error log says went wrong.

use super::server::MyOptions;
use super::MyError;
use bakeoff_stack::exec::RunAs;
use bakeoff_stack::Stack;
use std::path::PathBuf;

/// The user the server runs as (Debian's package creates it).
pub const USER: &str = "mysql";

/// The socket's name in the private socket directory.
pub const SOCKET: &str = "mysqld.sock";

/// The `mysql` user; bakeoff must be root to run as it.
pub fn mysql_user() -> Result<RunAs, MyError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(MyError::Environment(
            "a managed MariaDB server needs root: bakeoff runs mariadb-install-db and the \
             server as the mysql user"
                .into(),
        ));
    }
    match nix::unistd::User::from_name(USER) {
        Ok(Some(u)) => Ok(RunAs {
            uid: u.uid.as_raw(),
            gid: u.gid.as_raw(),
        }),
        Ok(None) => Err(MyError::Environment(
            "there is no mysql user: install the Debian package mariadb-server (it creates it)"
                .into(),
        )),
        Err(e) => Err(MyError::Environment(format!(
            "looking up the mysql user: {e}"
        ))),
    }
}

/// `/tmp/bakeoff-my-<name>`: short enough for a socket path (at most 107 bytes).
pub(super) fn socket_dir_for(name: &str) -> Result<PathBuf, MyError> {
    let dir = std::env::temp_dir().join(format!("bakeoff-my-{name}"));
    let socket = dir.join(SOCKET);
    if socket.as_os_str().len() > 107 || name.contains('/') {
        return Err(MyError::Environment(format!(
            "the server name {name:?} makes the socket path {} too long (or not one directory): \
             give a shorter name",
            socket.display()
        )));
    }
    Ok(dir)
}

/// The data directory's place: on the stack's file system, new or empty, and so is the redo
/// directory (not inside the data directory).
pub(super) fn check_places(stack: &Stack, opts: &MyOptions) -> Result<(), MyError> {
    let refuse = |why: String| Err(MyError::Environment(why));
    if stack.is_device {
        return refuse(format!(
            "stack {} is a raw device: MariaDB needs a file system for its data directory",
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
    for dir in std::iter::once(data).chain(&opts.redo_dir) {
        let empty = std::fs::read_dir(dir).map(|mut d| d.next().is_none());
        if matches!(empty, Ok(false)) || (dir.exists() && !dir.is_dir()) {
            return refuse(format!(
                "{} exists and is not an empty directory: remove it or choose another",
                dir.display()
            ));
        }
    }
    match &opts.redo_dir {
        Some(redo) if !redo.is_absolute() || redo.starts_with(data) => refuse(format!(
            "the redo log directory {} must be an absolute path outside the data directory",
            redo.display()
        )),
        _ => Ok(()),
    }
}

/// The line of a MariaDB error log that best says why the server failed: one naming "No space
/// left on device" (or InnoDB's "Operating system error number 28") first, else the last
/// `[ERROR]` that is more than `Aborting`; its message only (after the severity).
pub(super) fn cause_in_log(text: &str) -> Option<&str> {
    let tagged: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            ["[ERROR]", "[Warning]", "[Note]"]
                .iter()
                .find_map(|sev| l.find(sev).map(|at| l[at..].trim()))
        })
        .collect();
    let full = |m: &&str| {
        m.contains("No space left on device") || m.contains("Operating system error number 28")
    };
    let error = |m: &&str| m.starts_with("[ERROR]") && m.trim_end() != "[ERROR] Aborting";
    tagged
        .iter()
        .rev()
        .copied()
        .find(|m| full(m) && !m.starts_with("[Note]"))
        .or_else(|| tagged.iter().rev().copied().find(error))
}

#[cfg(test)]
mod tests {
    use super::cause_in_log;

    #[test]
    fn a_full_disk_is_the_cause_before_later_lines() {
        let log = "\
2026-11-26 22:20:01 0 [Note] InnoDB: Buffer pool(s) load completed
2026-11-26 22:20:02 5 [ERROR] InnoDB: Write to file ./bakeoff/sbtest1.ibd failed at offset 4194304, 1048576 bytes should have been written, only 0 were written. Operating system error number 28. Check that your OS and file system support files of this size.
2026-11-26 22:20:02 5 [ERROR] InnoDB: Error number 28 means 'No space left on device'
2026-11-26 22:20:03 5 [Warning] InnoDB: Retry attempts for writing partial data failed.
2026-11-26 22:20:04 0 [ERROR] mariadbd: Table 'sbtest1' is full
";
        assert_eq!(
            cause_in_log(log),
            Some("[ERROR] InnoDB: Error number 28 means 'No space left on device'")
        );
        let other = "x [Note] starting\ny [ERROR] Unknown/unsupported storage engine: InnoDB\nz [ERROR] Aborting\n";
        assert_eq!(
            cause_in_log(other),
            Some("[ERROR] Unknown/unsupported storage engine: InnoDB")
        );
        assert_eq!(cause_in_log("x [Note] all fine\n"), None);
    }
}
