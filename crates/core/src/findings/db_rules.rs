//! Rules over a database run's own counters.

use super::{found, Ctx, Finding, Severity::Warning};

/// A PostgreSQL window without a checkpoint: the data pages its transactions dirtied were not
/// written in it, so the data stack's write bytes per transaction leave them out.
pub(super) fn no_checkpoint(c: &Ctx) -> Option<Finding> {
    let window = c.r.database.as_ref()?.window.as_ref()?;
    if window.checkpoints? > 0 {
        return None;
    }
    let ev = format!(
        "checkpoints 0 in {:.1} s measured; WAL {} bytes",
        c.r.measured_ns as f64 / 1e9,
        window.wal_bytes.map_or("-".into(), |b| b.to_string())
    );
    let fix = "the data pages the transactions dirtied stayed in the buffers: let the window \
               close with its checkpoint (see the warning above) or set pg.checkpoint_timeout \
               below the runtime";
    let title =
        "no checkpoint in the window: data-stack writes per transaction leave out the data pages";
    found("no_checkpoint", Warning, title, ev, fix)
}
