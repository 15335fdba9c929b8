//! Every state of a run: drawn from its write log, materialised one at a time in order of
//! their crash points (so the log is read once) and checked; each state's images are removed
//! once it is checked.

use super::{Checker, StateCheck};
use crate::tpcc::Ack;
use bakeoff_stack::crash::{generate, Base, CrashOptions, CrashState, LogIndex, Materialiser};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::undo::Undo;
use bakeoff_stack::StackError;
use std::path::Path;

/// Where a run's states come from and go.
pub struct Sources<'a> {
    /// The run's write log.
    pub log: &'a Path,
    /// The images as they were when the log began (the recorder's checkpoint).
    pub base: &'a Path,
    /// A directory of the caller's for working copies and each state's images.
    pub work: &'a Path,
    /// The log's records after this many are left out (the stack's teardown after the run:
    /// ZFS's `zpool destroy` marks its labels, which no power cut does); `None` keeps all.
    pub end: Option<u64>,
}

/// Draws the states `opts` asks for from `from.log` and checks each with `checker` against the
/// acknowledged commits `acks`; `on_state` hears each as it is checked (progress) and says
/// whether to go on (Ctrl-C). The states come back with their checks, in order of their crash
/// points.
pub fn check_states(
    from: &Sources,
    opts: &CrashOptions,
    checker: &Checker,
    acks: &[Ack],
    ledger: &mut Ledger,
    exec: &mut Exec,
    on_state: &mut dyn FnMut(&CrashState, &StateCheck) -> bool,
) -> Result<Vec<(CrashState, StateCheck)>, StackError> {
    let mut index = LogIndex::read(from.log)?;
    if let Some(end) = from.end {
        index.end_at(end);
    }
    let mut states = generate(&index, opts).map_err(StackError::Environment)?;
    states.sort_by_key(|s| s.crash_point);
    let copies = from.work.join("durable");
    ledger.record(Undo::RemoveDirAndFiles {
        path: copies.clone(),
    })?;
    std::fs::create_dir_all(&copies).map_err(StackError::io("creating", &copies))?;
    let mut materialiser = Materialiser::new(&index, Base::Dir(from.base.to_path_buf()), &copies)?;
    // Stopped after the last state; on an error, by the ledger's undo with everything else.
    let served = checker.serve(&from.work.join("serving"), ledger, exec)?;
    let mut checked = Vec::with_capacity(states.len());
    for state in states {
        let dir = from.work.join(format!("state-{}", state.number));
        ledger.record(Undo::RemoveDirAndFiles { path: dir.clone() })?;
        std::fs::create_dir_all(&dir).map_err(StackError::io("creating", &dir))?;
        let images = materialiser.materialise(&state, &dir)?;
        let check = checker.check(&images, acks, state.crash_ns, ledger, exec)?;
        std::fs::remove_dir_all(&dir).map_err(StackError::io("removing", &dir))?;
        let go_on = on_state(&state, &check);
        checked.push((state, check));
        if !go_on {
            break;
        }
    }
    checker.stop_serving(served, exec)?;
    Ok(checked)
}
