//! A trace as a run's plan: the replay's settings ([`crate::keys::REPLAY_KEYS`]) checked once
//! into a [`ReplayPlan`], and the sizes the layout and the room checks need, read from the
//! trace. The engine replays the trace itself (found by its capture id); the plan says how.

use super::model::{FileKind, OpCode, Trace};
use crate::keys::{check_known, default_of, names, REPLAY_KEYS};
use crate::plan::{EngineKind, Plan};
pub use crate::plan::{FlagRule, ReplayPlan, ReplayTiming, ReplayWindow, SyncRule, Think};
use crate::settings::{SettingError, Settings};
use crate::values::{Lookup, Val};
use std::collections::BTreeMap;
use std::time::Duration;

/// Name of the mark where a marked window starts.
pub const WINDOW_START: &str = "window_start";
/// Name of the mark where a marked window ends.
pub const WINDOW_END: &str = "window_end";

/// The plan of a replay of `trace` named `name` (the trace file's name), with `settings` from
/// [`REPLAY_KEYS`]. A key not in the table, or a value out of range, is named with where it was
/// written.
pub fn plan_replay(trace: &Trace, name: &str, settings: &Settings) -> Result<Plan, SettingError> {
    crate::planner::refuse_verify(
        settings,
        "a replay",
        "makes the captured calls at their own offsets and sizes: not whole blocks bakeoff can \
         stamp",
    )?;
    check_known(settings, &names(&[REPLAY_KEYS]))?;
    let look = Lookup {
        settings,
        workload: name,
    };
    let g = |k: &str| look.get(k, default_of(REPLAY_KEYS, k));
    let replay = replay_plan(trace, &g)?;
    let ramp = g("ramp_time");
    if ramp.duration(Duration::ZERO, Duration::ZERO).is_err() {
        return Err(ramp.invalid(
            "a replay measures from its first call: ramp_time is 0 (use window=marked to measure \
             part of a trace)",
        ));
    }
    let week = Duration::from_secs(7 * 86400);
    let runtime_val = g("runtime");
    let runtime = match runtime_val.text.trim() {
        "auto" => (replay.duration)
            .mul_f64(10.0 / replay.speed)
            .clamp(Duration::from_secs(1), week),
        _ => runtime_val.duration(Duration::from_millis(100), week)?,
    };
    let settings: BTreeMap<String, String> = REPLAY_KEYS
        .iter()
        .map(|k| (k.key.to_string(), g(k.key).text.trim().to_string()))
        .collect();
    Ok(Plan {
        workload: name.to_string(),
        engine: EngineKind::Psync,
        runtime,
        ramp_time: Duration::ZERO,
        ramp_auto: None,
        stop: None,
        seed: g("seed").int(0, u64::MAX)?,
        repetition: 1,
        compress_pct: 0,
        filesets: Vec::new(),
        roles: Vec::new(),
        settings,
        clients: 0,
        replay: Some(replay),
        verify: None,
        journal: Default::default(),
    })
}

/// The replay's own keys, checked against what `trace` holds.
fn replay_plan(trace: &Trace, g: &dyn Fn(&str) -> Val) -> Result<ReplayPlan, SettingError> {
    let timing = match g("timing").choice(&["original", "fast"])? {
        "original" => ReplayTiming::Original,
        _ => ReplayTiming::Fast,
    };
    let speed_val = g("speed");
    let speed = parse_speed(&speed_val)?;
    if timing == ReplayTiming::Fast && !speed_val.is_default() {
        return Err(speed_val.invalid(
            "speed scales the captured schedule, and timing=fast has none (use timing=original)",
        ));
    }
    let think_val = g("think");
    let think = match think_val.choice(&["none", "cpu"])? {
        "cpu" => Think::Cpu,
        _ => Think::None,
    };
    if think == Think::Cpu && !trace.provenance.cpu_ns_recorded {
        return Err(think_val.invalid(
            "the trace has no CPU time per call (it was captured without cpu_ns); use think=none",
        ));
    }
    let window_val = g("window");
    let window = match window_val.choice(&["all", "marked"])? {
        "marked" => ReplayWindow::Marked,
        _ => ReplayWindow::All,
    };
    if window == ReplayWindow::Marked && marked_window(trace).is_none() {
        return Err(window_val.invalid(format!(
            "the trace has no {WINDOW_START} mark followed by a {WINDOW_END} mark (traces made \
             by run --capture have them); use window=all"
        )));
    }
    let flags = match g("flags").choice(&["captured", "no_direct"])? {
        "no_direct" => FlagRule::NoDirect,
        _ => FlagRule::Captured,
    };
    let syncs = match g("syncs").choice(&["each", "merge"])? {
        "merge" => SyncRule::Merge,
        _ => SyncRule::Each,
    };
    let balloon = g("balloon");
    let balloon_bytes = match balloon.text.trim() {
        "auto" => trace.provenance.app_memory_bytes,
        _ => balloon.size(0, 1 << 40)?,
    };
    let (layout_bytes, peak) = sizes(trace);
    // Seen: pgbench scale 50's 90 s trace (peak 1.75 GB) filled a btrfs stack sized to
    // its peak with ENOSPC: a copy-on-write stack holds old and new copies of what is
    // rewritten until its transaction commits.
    let peak_bytes = peak.saturating_add(rewritten_bytes(trace).min(peak));
    Ok(ReplayPlan {
        capture_id: trace.header.capture_id_hex(),
        timing,
        speed,
        think,
        window,
        flags,
        syncs,
        threads: u32::try_from(trace.threads.len()).unwrap_or(u32::MAX),
        ops: trace.record_count(),
        duration: Duration::from_nanos(trace_duration_ns(trace)),
        layout_bytes,
        peak_bytes,
        balloon_bytes,
    })
}

/// `2x`, `0.5x` or `2`: a factor above 0, at most 1000.
fn parse_speed(val: &Val) -> Result<f64, SettingError> {
    let text = val.text.trim();
    let number = text.strip_suffix(['x', 'X']).unwrap_or(text);
    match number.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1000.0 => Ok(v),
        _ => Err(val.invalid(format!(
            "{} is not a speed (a factor above 0 up to 1000: 2x, 0.5x)",
            val.shown()
        ))),
    }
}

/// The trace's length: the footer's, or its last call's end if that is later.
pub fn trace_duration_ns(trace: &Trace) -> u64 {
    let last_end = (trace.ops.iter().flatten())
        .map(|r| r.end_ns())
        .max()
        .unwrap_or(0);
    trace.footer.duration_ns.max(last_end)
}

/// The marked window, `(start_ns, end_ns)`: the first `window_start` mark and the first
/// `window_end` mark after it.
pub fn marked_window(trace: &Trace) -> Option<(u64, u64)> {
    let start = trace.marks.iter().find(|m| m.name == WINDOW_START)?.t_ns;
    let end = (trace.marks.iter())
        .find(|m| m.name == WINDOW_END && m.t_ns >= start)?
        .t_ns;
    Some((start, end))
}

/// `(layout, peak)`: the bytes of the files that exist at the start, and the bytes of every
/// file at the largest size it reaches.
pub fn sizes(trace: &Trace) -> (u64, u64) {
    let mut largest: Vec<u64> = (trace.files.iter())
        .map(|f| match f.kind {
            FileKind::File => f.start_size.unwrap_or(0).max(f.end_size.unwrap_or(0)),
            FileKind::Dir => 0,
        })
        .collect();
    for r in trace.ops.iter().flatten() {
        let reach = match r.op {
            Some(OpCode::Write) if r.result > 0 => r.offset.saturating_add(r.result as u64),
            Some(OpCode::Fallocate) if r.result == 0 => r.offset.saturating_add(r.len),
            Some(OpCode::Ftruncate) if r.result == 0 => r.len,
            _ => continue,
        };
        let file = (r.handle)
            .and_then(|h| trace.handles.get(h as usize))
            .map(|h| h.file as usize);
        if let Some(size) = file.and_then(|f| largest.get_mut(f)) {
            *size = (*size).max(reach);
        }
    }
    let layout = (trace.files.iter())
        .filter(|f| f.kind == FileKind::File)
        .filter_map(|f| f.start_size)
        .fold(0, u64::saturating_add);
    let peak = largest.into_iter().fold(0, u64::saturating_add);
    (layout, peak.max(layout))
}

/// Bytes the trace's writes put over what its files already held (by offset: a write below
/// the furthest end so far of its file).
fn rewritten_bytes(trace: &Trace) -> u64 {
    let mut reach: Vec<u64> = (trace.files.iter())
        .map(|f| f.start_size.unwrap_or(0))
        .collect();
    let mut rewritten = 0u64;
    for r in trace.ops.iter().flatten() {
        let (Some(OpCode::Write), Ok(done)) = (r.op, u64::try_from(r.result)) else {
            continue;
        };
        let file = (r.handle)
            .and_then(|h| trace.handles.get(h as usize))
            .map(|h| h.file as usize);
        if let Some(end) = file.and_then(|f| reach.get_mut(f)) {
            rewritten = rewritten.saturating_add(done.min(end.saturating_sub(r.offset)));
            *end = (*end).max(r.offset.saturating_add(done));
        }
    }
    rewritten
}

#[cfg(test)]
mod tests;
