//! A crash-state run's record: each state checked as the record and the progress lines show
//! it (docs/schema.md, `durability`).

use bakeoff_core::record::durability::{
    Acknowledged, DurabilityRecord, RecordingCost, StateRecord, OUTCOMES,
};
use bakeoff_db::durability::StateCheck;
use bakeoff_stack::crash::{CrashOptions, CrashState, StateKind};
use bakeoff_stack::writelog::Recording;

/// One state's outcome as a progress line: `clean`, `lost_commits (3 of 120)` ...
pub(super) fn state_line(check: &StateCheck) -> String {
    let mut line = check.outcome.name().to_string();
    if let Some(lost) = check.lost.as_ref().filter(|l| l.lost > 0) {
        line += &format!(" ({} of {} acknowledged lost)", lost.lost, lost.checked);
    }
    if let Some(problem) = problems(check).first() {
        line += &format!(": {problem}");
    }
    line
}

/// What was wrong with a state, first thing first.
fn problems(check: &StateCheck) -> Vec<String> {
    let mut found = Vec::new();
    found.extend(check.mount_error.iter().map(|e| format!("mount: {e}")));
    found.extend(check.lost_first.iter().cloned());
    let damaged = check.fs_check.as_ref().filter(|c| !c.clean);
    found.extend(damaged.map(|c| format!("{}: {}", c.command, c.found)));
    found.extend(check.start_error.iter().map(|e| format!("start: {e}")));
    for page in check.integrity.iter().filter(|c| !c.clean()) {
        let first = page.first.clone().unwrap_or_default();
        found.push(format!(
            "{}: {} problem(s): {first}",
            page.tool, page.problems
        ));
    }
    found.extend(check.inconsistent.iter().cloned());
    found
}

/// The record of the states checked.
pub(super) fn durability_record(
    checked: &[(CrashState, StateCheck)],
    opts: &CrashOptions,
    (acknowledged, acknowledged_unit): (u64, Acknowledged),
    recording: &Recording,
    checksums: bool,
) -> DurabilityRecord {
    let mut outcomes: std::collections::BTreeMap<String, u64> =
        OUTCOMES.iter().map(|o| (o.to_string(), 0)).collect();
    let states: Vec<StateRecord> = checked
        .iter()
        .map(|(state, check)| {
            *outcomes.entry(check.outcome.name().into()).or_default() += 1;
            let lost = check.lost.as_ref();
            StateRecord {
                number: state.number as u64,
                kind: kind_name(state.kind).into(),
                crash_point: state.crash_point,
                persisted: state.persisted() as u64,
                torn: state.torn() as u64,
                outcome: check.outcome.name().into(),
                lost: lost.map_or(0, |l| l.lost),
                expected: lost.map_or(0, |l| l.checked),
                problems: problems(check),
            }
        })
        .collect();
    let o = &recording.overhead;
    DurabilityRecord {
        states_asked: opts.states as u64,
        states_checked: states.len() as u64,
        seed: opts.seed,
        sector_bytes: u64::from(opts.sector_bytes),
        torn: opts.torn,
        outcomes,
        acknowledged,
        acknowledged_unit,
        worst_loss: states.iter().map(|s| s.lost).max().unwrap_or(0),
        checksums,
        recording: RecordingCost {
            writes: o.writes,
            write_bytes: o.write_bytes,
            zeroes: o.zeroes,
            flushes: o.flushes,
            log_bytes: o.log_bytes,
            logging_ns: o.logging_ns,
            applying_ns: o.applying_ns,
            syncing_ns: o.syncing_ns,
            checking_ns: 0,
        },
        states,
    }
}

fn kind_name(kind: StateKind) -> &'static str {
    match kind {
        StateKind::Flushed => "flushed",
        StateKind::Issued => "issued",
        StateKind::Subset => "subset",
    }
}
