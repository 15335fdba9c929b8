//! Rules over a run's crash states (`run --crash-states N`, docs/durability.md): what the
//! configuration risks, beside what it costs.

use super::{found, Finding, Warning};
use crate::findings::context::Ctx;
use crate::findings::Severity::Info;
use crate::record::durability::Acknowledged;

/// States that lost commits the client saw acknowledged: the configuration acknowledges
/// before the data is durable (or a device or layer lies about its flushes).
pub(super) fn acknowledged_commits_lost(c: &Ctx) -> Option<Finding> {
    let d = c.r.durability.as_ref()?;
    let losing = d.states_losing_commits();
    if losing == 0 {
        return None;
    }
    let ev = format!(
        "{losing} of {} crash states lost acknowledged {}, the worst {} of {} acknowledged \
         (seed {})",
        d.states_checked,
        d.acknowledged_unit.noun(),
        d.worst_loss,
        d.acknowledged,
        d.seed
    );
    let (title, fix) = match d.acknowledged_unit {
        Acknowledged::NewOrders => (
            "a power cut loses commits this configuration acknowledged",
            "a setting that acknowledges before the data is durable (pg.synchronous_commit=off, \
             pg.fsync=off, sqlite.synchronous=OFF or NORMAL in WAL mode, zfs sync=disabled) \
             buys its speed with these commits: compare with it on",
        ),
        Acknowledged::Blocks => (
            "a power cut loses writes a sync acknowledged",
            "a layer acknowledged a sync before the data was durable: a mount without barriers \
             (nobarrier), a volatile write cache, zfs sync=disabled; the record's \
             durability.states name the first block lost in each state",
        ),
    };
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
    let fix = match d.acknowledged_unit {
        Acknowledged::NewOrders => {
            "a database must sync what it writes (not sqlite.synchronous=off, pg.fsync=off); \
             torn pages need full-page images (pg.full_page_writes=on), InnoDB's doublewrite or \
             a copy-on-write stack; a file system that does not mount or check clean needs its \
             barriers (no nobarrier); the record's durability.states say which state found what"
        }
        Acknowledged::Blocks => {
            "a block larger than the device's sector, overwritten in place, is torn by a power \
             cut mid-write and loses the version it overwrote: write it elsewhere first (a \
             journal or doublewrite, as databases do) or use a copy-on-write stack; the \
             record's durability.states say which block of which file"
        }
    };
    found("crash_damage", Warning, title, ev, fix)
}

/// Every state checked came back clean: say how many, so a reader weighs the evidence.
pub(super) fn crash_states_clean(c: &Ctx) -> Option<Finding> {
    let d = c.r.durability.as_ref()?;
    if d.states_checked == 0 || d.count("clean") < d.states_checked {
        return None;
    }
    let ev = format!(
        "{} of {} crash states clean, {} acknowledged {} looked for (seed {}, torn writes at \
         {} bytes)",
        d.count("clean"),
        d.states_checked,
        d.acknowledged,
        d.acknowledged_unit.noun(),
        d.seed,
        d.sector_bytes
    );
    let title = match d.acknowledged_unit {
        Acknowledged::NewOrders => {
            "every crash state checked recovered with every acknowledged commit"
        }
        Acknowledged::Blocks => "every crash state checked held every acknowledged write intact",
    };
    let fix = "more states (--crash-states) find rarer failures: none of N clean bounds the \
               failure rate at about 3/N (95 %)";
    found("crash_states_clean", Info, title, ev, fix)
}
