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

/// A MariaDB window that dirtied more data pages than InnoDB wrote: its page cleaner deferred
/// them (the buffer pool and redo log had room), so the data stack's write bytes per
/// transaction, and the doublewrite's, leave out most of the page writes this work costs.
pub(super) fn innodb_writes_deferred(c: &Ctx) -> Option<Finding> {
    let innodb = c.r.database.as_ref()?.window.as_ref()?.innodb.as_ref()?;
    let (start, end) = (innodb.dirty_pages_at_start?, innodb.dirty_pages?);
    let written = innodb.pages_written?;
    let grew = end.saturating_sub(start);
    if grew == 0 || written >= grew {
        return None;
    }
    let ev = format!(
        "InnoDB wrote {written} data pages in {:.1} s measured while its dirty pages grew \
         {start} → {end}",
        c.r.measured_ns as f64 / 1e9
    );
    let fix = "the pages stayed dirty in the buffer pool: measure longer (runtime), or make \
               InnoDB flush within the window (a lower my.innodb_max_dirty_pages_pct, a smaller \
               my.innodb_log_file_size or my.innodb_buffer_pool_size)";
    let title = "InnoDB deferred its page writes: data-stack and doublewrite writes per \
                 transaction leave most of them out";
    found("innodb_writes_deferred", Warning, title, ev, fix)
}
