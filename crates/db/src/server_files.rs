//! Files of a managed server that every server has alike (PostgreSQL's and MariaDB's): its
//! directories and log made for the user it runs as, the check that this user can reach them,
//! the log beside the data directory and its last lines for an error saying why the server did
//! not start. Each server's module turns a [`FileError`] into its own error.

use bakeoff_stack::exec::RunAs;
use std::os::unix::fs::{chown, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a server's file or directory could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A file-system operation failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A place the server cannot use (a path naming no directory, a directory it cannot reach).
    #[error("{0}")]
    Environment(String),
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FileError + 'a {
    move |source| FileError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// `<data dir>.log` beside the data directory.
pub(crate) fn log_file_of(data_dir: &Path) -> Result<PathBuf, FileError> {
    let name = data_dir.file_name().ok_or_else(|| {
        FileError::Environment(format!("{} names no directory", data_dir.display()))
    })?;
    Ok(data_dir.with_file_name(format!("{}.log", name.to_string_lossy())))
}

/// Creates `path` (a directory, mode 0700, or an empty file, 0600) owned by `user`; its
/// parents as root's, as usual.
pub(crate) fn make_owned(path: &Path, user: RunAs, dir: bool) -> Result<(), FileError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("creating", parent))?;
    }
    let (made, mode) = match dir {
        true => (std::fs::create_dir_all(path), 0o700),
        false => (std::fs::File::create(path).map(drop), 0o600),
    };
    made.map_err(io("creating", path))?;
    chown(path, Some(user.uid), Some(user.gid)).map_err(io("chown to the server's user", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(io("chmod", path))
}

/// Refuses a directory the server's user (`user`, called `who`: "the postgres user") cannot
/// reach, naming the ancestor in the way (a private temporary directory, a home directory).
pub(crate) fn check_reachable(dir: &Path, user: RunAs, who: &str) -> Result<(), FileError> {
    use std::os::unix::fs::MetadataExt;
    for ancestor in dir.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(ancestor) else {
            continue;
        };
        let bit = match (meta.uid() == user.uid, meta.gid() == user.gid) {
            (true, _) => 0o100,
            (_, true) => 0o010,
            _ => 0o001,
        };
        if meta.mode() & bit == 0 {
            return Err(FileError::Environment(format!(
                "{who} cannot reach {}: {} is mode {:o}; allow others to search it \
                 (chmod o+x) or put the data elsewhere",
                dir.display(),
                ancestor.display(),
                meta.mode() & 0o7777
            )));
        }
    }
    Ok(())
}

/// What marks a server's error line: MariaDB's `[ERROR]`, PostgreSQL's `FATAL:` and `PANIC:`.
const ERROR_MARKS: [&str; 3] = ["[ERROR]", "FATAL:", "PANIC:"];

/// Lines of a log's end an error quotes.
const TAIL_LINES: usize = 8;

/// The last lines of the server's log, for an error saying why it did not start.
pub(crate) fn log_tail(log: &Path) -> String {
    tail_of(&std::fs::read_to_string(log).unwrap_or_default())
}

/// The last [`TAIL_LINES`] of `text`, after the first error line before them: the cause, which
/// a server's lines about aborting and shutting down push out of the tail (InnoDB's "Unable to
/// apply log to corrupted page" is followed by a dozen of them).
fn tail_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    let is_error = |l: &&&str| ERROR_MARKS.iter().any(|m| l.contains(m));
    let tail = lines[from..].join("\n");
    match lines[..from].iter().find(is_error) {
        Some(cause) => format!("{cause}\n...\n{tail}"),
        None => tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_beside_the_data_directory_and_its_tail_is_the_last_lines() {
        let log = log_file_of(Path::new("/mnt/stack/pgdata")).unwrap();
        assert_eq!(log, Path::new("/mnt/stack/pgdata.log"));
        assert!(log_file_of(Path::new("/")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.log");
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        std::fs::write(&file, text).unwrap();
        assert_eq!(log_tail(&file).lines().next(), Some("line 3"));
        assert_eq!(log_tail(&dir.path().join("none")), "");
    }

    #[test]
    fn the_first_error_before_the_tail_comes_first() {
        let mut text = String::from("note\n[ERROR] InnoDB: Unable to apply log to page 7\n");
        text.extend((1..=10).map(|n| format!("[ERROR] aborting {n}\n")));
        let tail = tail_of(&text);
        let lines: Vec<&str> = tail.lines().collect();
        assert_eq!(lines[0], "[ERROR] InnoDB: Unable to apply log to page 7");
        assert_eq!(
            (lines[1], lines[2], lines.len()),
            ("...", "[ERROR] aborting 3", 10)
        );
        // An error already in the tail is not repeated.
        assert_eq!(tail_of("a\nFATAL: x\nb").lines().count(), 3);
    }
}
