//! `run --capture FILE`: the trace the run wrote of its database's file-system calls.

use crate::trace::LostCounts;
use serde::{Deserialize, Serialize};

/// What the capture of a run recorded (docs/trace.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CaptureRecord {
    /// The trace file.
    pub path: String,
    /// Its identity (32 hex digits): a replay's plan names the trace it played by it.
    pub capture_id: String,
    /// Calls recorded.
    pub ops: u64,
    /// The trace file's size.
    pub bytes: u64,
    /// Bytes of trace per call recorded.
    pub bytes_per_op: Option<f64>,
    /// Calls lost, all causes together (0 in a complete trace).
    pub lost: u64,
    /// Calls lost, by cause.
    pub lost_detail: LostCounts,
    /// Calls on the traced files that a trace does not replay (`mmap`, ...), by name.
    pub uncovered: Vec<(String, u64)>,
    /// From the capture's start to its end.
    pub duration_ns: u64,
}
