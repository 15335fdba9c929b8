//! What a trace holds without its records: header, provenance, tables, marks, footer and each
//! thread's record count. The planner and `trace show` read this; only a replay decodes records.

use super::chunks::Chunks;
use super::error::TraceError;
use super::model::Trace;
use super::read::{Builder, Mode};
use std::path::Path;

/// A trace's tables and counts, without its records.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSummary {
    /// The header, provenance, tables, marks and footer; each thread's list of records is empty.
    pub trace: Trace,
    /// Records of each thread, by thread id.
    pub records_per_thread: Vec<u64>,
    /// The file's size.
    pub file_bytes: u64,
}

impl TraceSummary {
    /// The summary of a trace in memory (a lenient read of a killed capture, for `trace show`),
    /// whose file was `file_bytes` long.
    pub fn of(trace: &Trace, file_bytes: u64) -> TraceSummary {
        let mut tables = trace.clone();
        tables.ops.iter_mut().for_each(Vec::clear);
        TraceSummary {
            trace: tables,
            records_per_thread: trace.ops.iter().map(|ops| ops.len() as u64).collect(),
            file_bytes,
        }
    }

    /// Records of all threads.
    pub fn records(&self) -> u64 {
        self.records_per_thread.iter().sum()
    }

    /// The file's bytes per record (header, tables and footer included); 0 with no records.
    pub fn bytes_per_record(&self) -> f64 {
        match self.records() {
            0 => 0.0,
            n => self.file_bytes as f64 / n as f64,
        }
    }
}

/// Reads a complete trace file's summary. Every chunk's checksum is verified, but records are
/// only counted, never decoded or kept.
pub fn read_summary(path: &Path) -> Result<TraceSummary, TraceError> {
    let named = |e: TraceError| e.at_path(path);
    let file = std::fs::File::open(path).map_err(|e| named(TraceError::io(e)))?;
    let file_bytes = file.metadata().map_err(|e| named(TraceError::io(e)))?.len();
    let input = std::io::BufReader::with_capacity(1 << 16, file);
    let mut chunks = Chunks::start(input).map_err(named)?;
    let mut b = Builder::new(&mut chunks).map_err(named)?;
    loop {
        let chunk = chunks.next().map_err(named)?;
        if b.apply(&chunk, Mode::Counts).map_err(named)? {
            chunks.trailer(chunk.offset).map_err(named)?;
            return Ok(TraceSummary {
                trace: b.trace,
                records_per_thread: b.counts,
                file_bytes,
            });
        }
    }
}
