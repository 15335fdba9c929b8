//! A PostgreSQL server managed per run (docs/postgres.md): the binaries ([`binaries`]), its
//! settings sized to the machine and validated before initdb ([`settings`], [`describe`]), the
//! server itself on a stack's file system, started and stopped through the stack's daemons and
//! ledger ([`server`], built as [`options`] say; where its files and socket go: `places`), the
//! client bakeoff's workloads use ([`client`]) and the statistics a run record keeps
//! ([`stats`]).

pub mod binaries;
pub mod client;
pub mod describe;
pub mod managed;
pub mod options;
mod places;
pub mod recover;
pub mod server;
pub mod settings;
pub mod stats;
mod values;

pub use binaries::Binaries;
pub use client::{PgConn, PgDatabase};
pub use options::PgOptions;
pub use places::postgres_user;
pub use recover::check_checksums;
pub use server::PgServer;
pub use settings::Settings;
pub use stats::PgStats;

use bakeoff_stack::StackError;
use std::path::PathBuf;

/// Why a managed server could not be set up, started, used or stopped.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The PostgreSQL binaries are missing or not what they should be.
    #[error("{0}")]
    Binaries(String),
    /// A `pg.KEY=VALUE` setting is refused (before anything is created).
    #[error("pg.{key}={value}: {reason}")]
    Setting {
        /// The key.
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
    /// The stack's runner or ledger failed (initdb, pg_ctl, recording an undo).
    #[error(transparent)]
    Stack(#[from] StackError),
    /// The server answered with an error, or could not be reached.
    #[error("PostgreSQL: {0}")]
    Db(#[from] crate::DbError),
    /// Something else about the environment (users, permissions, directories).
    #[error("{0}")]
    Environment(String),
}

impl From<crate::server_files::FileError> for PgError {
    fn from(e: crate::server_files::FileError) -> PgError {
        match e {
            crate::server_files::FileError::Io { what, path, source } => {
                PgError::Io { what, path, source }
            }
            crate::server_files::FileError::Environment(why) => PgError::Environment(why),
        }
    }
}

impl PgError {
    /// An I/O error on `path`.
    pub fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> PgError {
        let path = path.into();
        move |source| PgError::Io { what, path, source }
    }
}
