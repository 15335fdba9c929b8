//! Replaying a captured trace as a workload (`run --replay`): one thread per captured thread,
//! under the run harness like every other workload, each issuing its thread's calls in order
//! on its own descriptors, each call once the other threads' calls it depends on are done
//! ([`bakeoff_core::trace::program`]), at once (timing=fast) or at its captured time divided
//! by the speed (timing=original, latency from that time). Every result is compared with the
//! captured one: equal (a short read at EOF included, an error that recurs included) is
//! success, anything else fails the run naming the file, the call and both results.
//! Asynchronous calls are issued by a few helper threads per replay thread (`pool.rs`), so
//! that they overlap as they did; the replay thread waits for one only where the database
//! had seen it complete.
//!
//! The trace is [`load`]ed first (before the run enters the stack's memory cgroup); the
//! layout ([`crate::layout`]) creates its files as they were at the capture's start.

pub mod cache;
mod deps;
mod files;
mod group;
mod io;
pub mod paths;
mod pool;
mod state;
mod sys;
mod thread;

pub use cache::{get, load, Loaded};
pub use state::ReplayCounts;

use crate::harness::{self, RoleDesc, ThreadSpec, Timing};
use crate::layout::Dataset;
use crate::run::{RunOutput, Tick};
use crate::shared::{RunError, Shared};
use bakeoff_core::plan::{OpKind, Plan, ReplayPlan, ReplayTiming};
use state::Replay;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Runs the replay `plan` describes on `dataset` (its replay layout).
pub fn run(
    plan: &Plan,
    dataset: &Dataset,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<RunOutput, RunError> {
    run_counted(plan, dataset, interrupt, on_tick).map(|(out, _)| out)
}

fn setup_error(message: String) -> RunError {
    RunError::Setup {
        engine: "replay",
        role: "replay".into(),
        source: std::io::Error::other(message),
    }
}

/// [`run`], with what the replay counted beside the run's operations (dependency waits, calls
/// not timed as a kind).
pub fn run_counted(
    plan: &Plan,
    dataset: &Dataset,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<(RunOutput, ReplayCounts), RunError> {
    let replay = plan
        .replay
        .as_ref()
        .ok_or_else(|| setup_error("the plan has no replay".into()))?;
    let loaded = cache::require(replay).map_err(setup_error)?;
    let dir = (dataset.filesets.first().and_then(|f| f.first()))
        .map(|r| r.path.clone())
        .ok_or_else(|| setup_error("the dataset is not a replay's layout".into()))?;
    let paths = paths::resolve(&loaded.trace, &dir).map_err(setup_error)?;
    let state = Arc::new(Replay::new(loaded, replay, dir, paths));
    let (roles, of_thread) = roles(&state);
    let (ramp, runtime) = window(plan, replay, &state);
    let mut specs = (0..of_thread.len()).map(|t| {
        Ok(ThreadSpec {
            role: of_thread[t],
            name: format!("replay-{t}"),
            kinds: kinds_of(&state, t),
            open_loop: replay.timing == ReplayTiming::Original,
            body: thread::body(state.clone(), t, plan.seed, ramp.as_nanos() as u64),
        })
    });
    let balloon = hold(replay.balloon_bytes);
    let shared = Arc::new(Shared::new());
    let timing = Timing::fixed(ramp, runtime);
    let out = harness::run(&shared, timing, &roles, &mut specs, interrupt, on_tick)?;
    drop(balloon);
    let mut counts = state.counts();
    // Only a replay that made every call should have left every file at its end size.
    if state.window.is_none() && out.error.is_none() && counts.calls == counts.trace_calls {
        (counts.end_sizes_checked, counts.end_sizes_differ) = state.end_sizes();
    }
    Ok((
        RunOutput {
            replay: Some(counts),
            ..out
        },
        counts,
    ))
}

/// The kinds thread `t`'s calls are timed as (each kind's running counts take memory).
fn kinds_of(state: &Replay, t: usize) -> Vec<OpKind> {
    let mut kinds: Vec<OpKind> = (state.loaded.trace.ops[t].iter())
        .filter_map(|r| io::kind(state, r))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// The roles: one per captured process name, in the order first seen; and each thread's role.
fn roles(state: &Replay) -> (Vec<RoleDesc>, Vec<usize>) {
    let mut roles: Vec<RoleDesc> = Vec::new();
    let mut of_thread = Vec::new();
    for t in &state.loaded.trace.threads {
        let comm = if t.comm.is_empty() { "thread" } else { &t.comm };
        let at = match roles.iter().position(|r| r.name == comm) {
            Some(i) => i,
            None => {
                roles.push(RoleDesc {
                    name: comm.to_string(),
                    threads: 0,
                    log_writer: false,
                });
                roles.len() - 1
            }
        };
        roles[at].threads += 1;
        of_thread.push(at);
    }
    (roles, of_thread)
}

/// The harness's warm-up and measured time: the whole replay (capped by the plan's runtime);
/// with window=marked and timing=original the marks divided by the speed; with window=marked
/// and timing=fast a window that opens when every thread has made its calls before the start
/// mark (until then the warm-up lasts), and that ends when the threads reach the end mark.
fn window(plan: &Plan, replay: &ReplayPlan, state: &Replay) -> (Duration, Duration) {
    match (state.window, replay.timing) {
        (None, _) => (Duration::ZERO, plan.runtime),
        (Some((start, end)), ReplayTiming::Original) => {
            let at = |ns: u64| Duration::from_nanos((ns as f64 / replay.speed) as u64);
            (at(start), at(end.saturating_sub(start)))
        }
        (Some(_), ReplayTiming::Fast) => (plan.runtime, plan.runtime),
    }
}

/// Anonymous memory of `bytes`, every page touched, held while it lives (the database's own
/// memory, which a replay would otherwise leave to the page cache).
fn hold(bytes: u64) -> Vec<u8> {
    vec![1u8; usize::try_from(bytes).unwrap_or(usize::MAX)]
}
