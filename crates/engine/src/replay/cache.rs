//! The traces loaded for replay, by capture id and order of syncs. A trace is decoded (and its
//! program computed) before the run moves bakeoff into the stack's memory cgroup, so neither is
//! charged to the page cache the replay measures; the layout and the run find it here by the
//! plan.

use bakeoff_core::plan::{ReplayPlan, SyncRule};
use bakeoff_core::trace::program::{program_with, Program};
use bakeoff_core::trace::Trace;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A trace ready to replay.
#[derive(Debug)]
pub struct Loaded {
    /// The trace.
    pub trace: Trace,
    /// Each thread's calls and waits.
    pub program: Program,
}

fn cache() -> &'static Mutex<HashMap<String, Arc<Loaded>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Loaded>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The key of the trace `capture_id` with its syncs ordered by `syncs`: its program depends on
/// both.
fn key(capture_id: &str, syncs: SyncRule) -> String {
    format!("{capture_id}/{syncs:?}")
}

/// Computes `trace`'s program for `plan` and keeps both (replacing a trace of the same id and
/// order of syncs).
pub fn load(trace: Trace, plan: &ReplayPlan) -> Arc<Loaded> {
    let id = key(&trace.header.capture_id_hex(), plan.syncs);
    let loaded = Arc::new(Loaded {
        program: program_with(&trace, plan.syncs),
        trace,
    });
    let mut map = cache().lock().unwrap_or_else(|e| e.into_inner());
    map.insert(id, loaded.clone());
    loaded
}

/// The trace `plan` replays, if it was loaded for it.
pub fn get(plan: &ReplayPlan) -> Option<Arc<Loaded>> {
    let map = cache().lock().unwrap_or_else(|e| e.into_inner());
    map.get(&key(&plan.capture_id, plan.syncs)).cloned()
}

/// The trace `plan` replays, or a message saying it was not loaded.
pub(crate) fn require(plan: &ReplayPlan) -> Result<Arc<Loaded>, String> {
    get(plan).ok_or_else(|| {
        format!(
            "the trace with capture id {} is not loaded for syncs={:?} (replay::load it before \
             the layout and the run)",
            plan.capture_id, plan.syncs
        )
    })
}
