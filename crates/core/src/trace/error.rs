//! Why a trace file could not be read: each error names the byte offset where reading stopped
//! and what the user can do about it. The command line maps every one to a usage error (exit 2).

use std::path::PathBuf;

/// What a damaged file can do about it: shared by the errors that mean "the bytes changed".
const DAMAGED: &str =
    "the file is damaged: copy it again from where it was captured, or capture again";

/// A trace that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file has no bytes at all.
    #[error("the trace is empty (0 bytes): give a file written by `bakeoff capture`")]
    Empty,
    /// The first bytes are not the magic.
    #[error(
        "not a bakeoff trace: byte 0 does not start with \"BKTRACE\": give a file written by \
         `bakeoff capture` or `bakeoff run --capture`"
    )]
    NotATrace,
    /// A major version this reader does not know.
    #[error(
        "trace format {major}.{minor} (byte 8): this bakeoff reads format {reads}.x: upgrade \
         bakeoff, or capture again with this one"
    )]
    Version {
        /// The file's major version.
        major: u16,
        /// The file's minor version.
        minor: u16,
        /// The major version this reader reads.
        reads: u16,
    },
    /// A chunk's checksum does not match its bytes.
    #[error("chunk {chunk} at byte {offset}: CRC mismatch: {DAMAGED}")]
    Crc {
        /// Which chunk, counting from 0 after the header.
        chunk: u64,
        /// Where the chunk starts.
        offset: u64,
    },
    /// The file ends before its END chunk and trailer: the capture was killed, or the copy cut.
    #[error(
        "the trace is truncated at byte {offset} (no END chunk): the capture was killed or the \
         file was cut; `bakeoff trace show` can still read what was written; capture again to \
         replay it"
    )]
    Truncated {
        /// Where the bytes ran out.
        offset: u64,
    },
    /// A length over the format's limit.
    #[error("{what} at byte {offset} is {len} bytes, over the limit of {limit}: {DAMAGED}")]
    TooLong {
        /// What was that long.
        what: &'static str,
        /// Its length.
        len: u64,
        /// The limit.
        limit: u64,
        /// Where the length was read.
        offset: u64,
    },
    /// A reference to a path, file, handle or thread no earlier chunk defined.
    #[error("byte {offset} names {what} {id}, which no earlier chunk defined: {DAMAGED}")]
    Undefined {
        /// `path`, `file`, `handle` or `thread`.
        what: &'static str,
        /// The id named.
        id: u64,
        /// Where it was named.
        offset: u64,
    },
    /// An op code no version of the format used.
    #[error("invalid op code {code} at byte {offset}: {DAMAGED}")]
    InvalidOp {
        /// The code read.
        code: u8,
        /// Where.
        offset: u64,
    },
    /// The provenance chunk is not the JSON this bakeoff reads.
    #[error("the provenance at byte {offset} is not valid: {message}: {DAMAGED}")]
    Provenance {
        /// Where the chunk starts.
        offset: u64,
        /// What the JSON parser said.
        message: String,
    },
    /// Any other structure that is not the format's (a chunk out of place, a count that does not
    /// match, bytes after the trailer).
    #[error("byte {offset}: {what}: {DAMAGED}")]
    Malformed {
        /// Where.
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// The file could not be read.
    #[error("cannot read the trace {}: {source}", path.display())]
    Io {
        /// The file (`-` for a stream with no name).
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl TraceError {
    /// A [`TraceError::Malformed`].
    pub fn malformed(offset: u64, what: &str) -> TraceError {
        TraceError::Malformed {
            offset,
            what: what.to_string(),
        }
    }

    /// A read error on an unnamed stream, to be named by [`TraceError::at_path`].
    pub(crate) fn io(source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: PathBuf::from("-"),
            source,
        }
    }

    /// Names the file of an I/O error (the other errors name byte offsets in it).
    pub fn at_path(self, file: &std::path::Path) -> TraceError {
        match self {
            TraceError::Io { source, .. } => TraceError::Io {
                path: file.to_path_buf(),
                source,
            },
            other => other,
        }
    }

    /// Whether the file only ends early, so that a lenient read keeps what came before.
    pub fn is_truncated(&self) -> bool {
        matches!(self, TraceError::Truncated { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_says_where_and_what_to_do() {
        let errors = [
            TraceError::Empty,
            TraceError::NotATrace,
            TraceError::Version {
                major: 2,
                minor: 0,
                reads: 1,
            },
            TraceError::Crc {
                chunk: 3,
                offset: 4711,
            },
            TraceError::Truncated { offset: 4711 },
            TraceError::TooLong {
                what: "a path",
                len: 5000,
                limit: 4096,
                offset: 4711,
            },
            TraceError::Undefined {
                what: "handle",
                id: 7,
                offset: 4711,
            },
            TraceError::InvalidOp {
                code: 20,
                offset: 4711,
            },
            TraceError::Provenance {
                offset: 4711,
                message: "EOF".into(),
            },
            TraceError::malformed(4711, "a count that does not match"),
        ];
        for e in errors {
            let text = e.to_string();
            assert!(text.contains("byte"), "{text}");
            assert!(
                ["capture", "upgrade", "give a file"]
                    .iter()
                    .any(|w| text.contains(w)),
                "{text}"
            );
        }
        let truncated = TraceError::Truncated { offset: 9 }.to_string();
        assert!(truncated.contains("trace show"), "{truncated}");
        let version = TraceError::Version {
            major: 2,
            minor: 1,
            reads: 1,
        }
        .to_string();
        assert!(
            version.contains("2.1") && version.contains("reads format 1"),
            "{version}"
        );
    }

    #[test]
    fn an_io_error_is_named_by_its_path() {
        let e = TraceError::io(std::io::Error::other("disk gone")).at_path("/tmp/x.trace".as_ref());
        assert_eq!(
            e.to_string(),
            "cannot read the trace /tmp/x.trace: disk gone"
        );
        assert!(!e.is_truncated());
    }
}
