//! A captured trace: the file-system calls a database made to its files, as bakeoff records them
//! (`bakeoff capture`, `run --capture`) and replays them (`run --replay`). Metadata only: which
//! file, which offset, how many bytes, which flush, by which thread, when; never the data.
//!
//! * [`model`]: the records and tables every stage shares (the contract);
//! * the on-disk format ([`write`], the streaming [`read`]er, typed [`error`]s, a
//!   [`summary`] without the records): docs/trace.md;
//! * what a trace shows ([`stats`], [`classify`]) and the personality fitted to it ([`fit`]):
//!   docs/trace-analysis.md;
//! * a trace as a workload: its [`plan`] (the replay's keys) and the [`program`] each
//!   replayed thread runs, with the waits between threads.

mod chunks;
pub mod classify;
mod codec;
pub mod error;
pub mod fit;
pub mod model;
pub mod plan;
pub mod program;
pub mod read;
pub mod stats;
pub mod summary;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;
mod varint;
pub mod write;

pub use error::TraceError;
pub use model::{
    FileEntry, FileId, FileKind, Footer, HandleEntry, HandleId, Header, LostCounts, Mark, OpCode,
    PathEntry, PathId, Provenance, Record, RootInfo, ThreadEntry, ThreadId, Trace, TraceSink,
};
pub use read::{read_trace, read_trace_file, read_trace_lenient, LenientTrace};
pub use summary::{read_summary, TraceSummary};
pub use write::{write_trace, TraceWriter};
