//! Errors of provisioning, each naming what failed, on what, and what the user can do.

use std::path::PathBuf;

/// Why a stack could not be built, used or taken down.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    /// The spec is wrong.
    #[error(transparent)]
    Spec(#[from] StackSpecError),
    /// The safety gate refused a device.
    #[error("refusing {device}: {reason}")]
    Refused { device: String, reason: String },
    /// A tool this stack needs is not installed.
    #[error("{kind} stacks need `{tool}`: install the Debian package {package}")]
    Missing {
        kind: &'static str,
        tool: &'static str,
        package: &'static str,
    },
    /// An external command failed.
    #[error("`{argv}` failed ({status}): {stderr}")]
    Command {
        argv: String,
        status: String,
        stderr: String,
    },
    /// A file-system operation failed.
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The stack cannot hold the dataset.
    #[error("stack {stack} has {available} bytes free, the dataset needs {needed}: raise --size or lower the dataset")]
    TooSmall {
        stack: String,
        available: u64,
        needed: u64,
    },
    /// A write log (`--crash-states`) could not be read.
    #[error(transparent)]
    WriteLog(#[from] crate::writelog::LogError),
    /// Something else about the environment (cgroups, daemons, locks).
    #[error("{0}")]
    Environment(String),
    /// Ctrl-C or SIGTERM while waiting (`--wait`); nothing was built.
    #[error("{0}")]
    Interrupted(String),
}

/// A spec that cannot be built as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stack '{spec}': {message}")]
pub struct StackSpecError {
    /// The spec as written.
    pub spec: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl StackError {
    /// An I/O error on `path`.
    pub fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> StackError {
        let path = path.into();
        move |source| StackError::Io { what, path, source }
    }
}
