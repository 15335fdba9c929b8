//! What both end-to-end durability tests do once their run is recorded: draw the states (seed
//! 20261127, torn writes at 4 KiB), check each, print it, and leave nothing in the ledger.

use bakeoff_db::durability::{check_states, Checker, Outcome, Sources, StateCheck};
use bakeoff_db::tpcc::Ack;
use bakeoff_stack::crash::{CrashOptions, CrashState};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::Ledger;
use std::path::Path;

/// The outcomes of `states` states of the run logged in `log` from the images in `base`,
/// checked by `checker` against `acks`; each printed under `label`.
pub fn outcomes(
    label: &str,
    states: usize,
    (log, base, work): (&Path, &Path, &Path),
    checker: &Checker,
    acks: &[Ack],
    mut ledger: Ledger,
    exec: &mut Exec,
) -> Vec<Outcome> {
    let crash = CrashOptions {
        states,
        seed: 20261127,
        sector_bytes: 4096,
        torn: true,
        from_record: 0,
    };
    let from = Sources {
        log,
        base,
        work,
        end: None,
    };
    let mut print = |state: &CrashState, check: &StateCheck| {
        eprintln!(
            "{label} state {} ({:?}, crash point {}, {} persisted, {} torn): {:?}, lost {:?}, \
             fs {:?}, {:?}, {:?} {:?}",
            state.number,
            state.kind,
            state.crash_point,
            state.persisted(),
            state.torn(),
            check.outcome,
            check.lost,
            check.fs_check.as_ref().map(|c| c.clean),
            check.integrity,
            check.inconsistent,
            check.start_error
        );
        true
    };
    let checked = check_states(&from, &crash, checker, acks, &mut ledger, exec, &mut print);
    let outcomes = checked
        .unwrap()
        .into_iter()
        .map(|(_, c)| c.outcome)
        .collect();
    assert!(ledger.undo_all(exec).is_empty());
    outcomes
}
