//! The operation kinds the engine counts: every per-kind array (counters, latency counts,
//! a tick's latencies) is [`KINDS`] long, indexed by [`OpKind::index`].

use bakeoff_core::plan::OpKind;

/// Number of operation kinds.
pub const KINDS: usize = OpKind::ALL.len();
