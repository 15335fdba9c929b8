//! The one error type of this crate.

use std::path::PathBuf;

/// What went wrong while probing; every variant names the file or device involved.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A path could not be examined (`stat`, `readlink`, `canonicalize`): typically it does not exist.
    #[error("cannot examine {path}: {source}")]
    Stat {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file's contents did not have the expected format. This is a bug or a kernel we do not know.
    #[error("cannot parse {file}: {reason}")]
    Parse {
        /// Which kind of file, e.g. `/proc/stat` or `/sys/block/<dev>/stat`.
        file: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// A device number has no entry under `/sys/dev/block`, so it is not a block device we can name.
    #[error("device {major}:{minor} (of {path}) has no entry under /sys/dev/block")]
    UnknownDevice {
        /// Major number.
        major: u32,
        /// Minor number.
        minor: u32,
        /// The path whose device it is.
        path: PathBuf,
    },
    /// The devices under a path could not be determined (e.g. a btrfs file system whose member
    /// devices sysfs does not list).
    #[error("cannot tell which devices hold {path}: {reason}")]
    Unresolved {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl ProbeError {
    /// A parse error for `file`.
    pub(crate) fn parse(file: &'static str, reason: impl Into<String>) -> ProbeError {
        ProbeError::Parse {
            file,
            reason: reason.into(),
        }
    }
}
