//! A MariaDB server managed per run (docs/mariadb.md), as [`crate::postgres`] manages
//! PostgreSQL: the binaries ([`binaries`]), its variables sized to the machine ([`variables`])
//! and validated before anything is created ([`checks`]), the server on a stack's file system,
//! started and stopped through the stack's daemons and ledger ([`server`]; where its files and
//! socket go: `places`), a client connection ([`client`]) and InnoDB's counters ([`stats`]).
//!
//! The client is the synchronous `mysql` crate, not `mysql_async`: bakeoff has no async code,
//! each TPC-C terminal thread owns one blocking connection ([`crate::Conn`] is `Send`, not a
//! future), and the sync `postgres` crate hides its runtime where `mysql_async` would need one
//! we would have to run per terminal or share. Both crates share one protocol implementation
//! (`mysql_common`, same authors); over a private unix socket neither needs TLS, so the crate is
//! built with its `minimal` features only.

pub mod binaries;
mod bulk;
pub mod checks;
pub mod client;
mod instance;
pub mod managed;
mod options;
mod places;
pub mod recover;
pub mod server;
pub mod stats;
mod values;
pub mod variables;

pub use binaries::Binaries;
pub use client::{MyConn, MyDatabase};
pub use places::mysql_user;
pub use recover::check_tablespaces;
pub use server::{MyOptions, MyServer};
pub use stats::InnodbStats;
pub use variables::Variables;

use crate::server_files::FileError;
use bakeoff_stack::StackError;
use std::path::PathBuf;

/// Why a managed MariaDB server could not be set up, started, used or stopped.
#[derive(Debug, thiserror::Error)]
pub enum MyError {
    /// The MariaDB binaries are missing or not what they should be.
    #[error("{0}")]
    Binaries(String),
    /// A `my.KEY=VALUE` variable is refused (before anything is created).
    #[error("my.{key}={value}: {reason}")]
    Setting {
        /// The key (`_` form, lower case).
        key: String,
        /// The value given.
        value: String,
        /// Why, and what is allowed.
        reason: String,
    },
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
    /// The stack's runner or ledger failed (mariadb-install-db, the server's start or stop).
    #[error(transparent)]
    Stack(#[from] StackError),
    /// The server answered with an error, or could not be reached.
    #[error("MariaDB: {0}")]
    Db(#[from] crate::DbError),
    /// Something else about the environment (users, permissions, directories).
    #[error("{0}")]
    Environment(String),
}

impl MyError {
    /// An I/O error on `path`.
    pub fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> MyError {
        let path = path.into();
        move |source| MyError::Io { what, path, source }
    }
}

impl From<FileError> for MyError {
    fn from(e: FileError) -> MyError {
        match e {
            FileError::Io { what, path, source } => MyError::Io { what, path, source },
            FileError::Environment(why) => MyError::Environment(why),
        }
    }
}
