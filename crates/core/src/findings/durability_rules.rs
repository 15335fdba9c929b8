//! Rules over a run's crash states (`run --crash-states N`, docs/durability.md): what the
//! configuration risks, beside what it costs.

use super::{found, Finding, Warning};
use crate::findings::context::Ctx;
use crate::findings::Severity::Info;

/// States that lost commits the client saw acknowledged: the configuration acknowledges
/// before the data is durable (or a device or layer lies about its flushes).
pub(super) fn acknowledged_commits_lost(c: &Ctx) -> Option<Finding> {
    let d = c.r.durability.as_ref()?;
    let losing = d.states_losing_commits();
    if losing == 0 {
        return None;
    }
    let ev = format!(
        "{losing} of {} crash states lost acknowledged New-Orders, the worst {} of {} \
         acknowledged (seed {})",
        d.states_checked, d.worst_loss, d.acknowledged, d.seed
    );
    let title = "a power cut loses commits this configuration acknowledged";
    let fix = "a setting that acknowledges before the data is durable (pg.synchronous_commit=off, \
               pg.fsync=off, sqlite.synchronous=OFF or NORMAL in WAL mode, zfs sync=disabled) \
               buys its speed with these commits: compare with it on";
    found("acknowledged_commits_lost", Warning, title, ev, fix)
}

/// States whose file system, database start or integrity checks failed.
pub(super) fn crash_damage(c: &Ctx) -> Option<Finding> {
    let d = c.r.durability.as_ref()?;
    if d.states_damaged() == 0 {
        return None;
    }
    let ev = format!(
        "of {} crash states: file system damaged {}, database failed to start {}, corrupt {}",
        d.states_checked,
        d.count("fs_damaged"),
        d.count("db_failed_to_start"),
        d.count("corrupt")
    );
    let title = "a power cut can leave this stack or database damaged";
    let fix = "a database must sync what it writes (not sqlite.synchronous=off, pg.fsync=off); \
               torn pages need full-page images (pg.full_page_writes=on), InnoDB's doublewrite \
               or a copy-on-write stack; a file system that does not mount or check clean needs \
               its barriers (no nobarrier); the record's durability.states say which state \
               found what";
    found("crash_damage", Warning, title, ev, fix)
}

/// Every state checked came back clean: say how many, so a reader weighs the evidence.
pub(super) fn crash_states_clean(c: &Ctx) -> Option<Finding> {
    let d = c.r.durability.as_ref()?;
    if d.states_checked == 0 || d.count("clean") < d.states_checked {
        return None;
    }
    let ev = format!(
        "{} of {} crash states clean, {} acknowledged New-Orders looked for (seed {}, torn \
         writes at {} bytes)",
        d.count("clean"),
        d.states_checked,
        d.acknowledged,
        d.seed,
        d.sector_bytes
    );
    let title = "every crash state checked recovered with every acknowledged commit";
    let fix = "more states (--crash-states) find rarer failures: none of N clean bounds the \
               failure rate at about 3/N (95 %)";
    found("crash_states_clean", Info, title, ev, fix)
}
