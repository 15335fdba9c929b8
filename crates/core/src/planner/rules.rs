//! The rules of a role and of a plan, each written once: whatever kind of workload a role came
//! from, the same rule refuses it in the same words.

use super::{RoleInput, StepKind};
use crate::plan::*;
use crate::settings::SettingError;
use crate::units::format_bytes;
use crate::values::Val;

/// psync has one I/O in flight per thread: a deeper queue needs an asynchronous engine.
pub(super) fn check_engine_depth(
    engine: EngineKind,
    iodepth: &Val,
    depth: u32,
) -> Result<(), SettingError> {
    if depth > 1 && engine == EngineKind::Psync {
        return Err(iodepth.invalid(format!(
            "iodepth={depth} needs an asynchronous engine: psync has one I/O in flight per \
             thread (use engine=io_uring, or more threads instead)"
        )));
    }
    Ok(())
}

/// In a loop with other steps, an I/O step waits for all its I/Os at the end of each pass, so
/// at most `count` are ever in flight: an iodepth above that would be silently ignored.
pub(super) fn check_depth_fits_count(
    r: &RoleInput,
    steps: &[Step],
    depth: u32,
) -> Result<(), SettingError> {
    for (s, planned) in r.steps.iter().zip(steps) {
        let (StepKind::Io { count, .. }, Step::Io(io)) = (&s.kind, planned) else {
            continue;
        };
        let Some(n) = io.count.filter(|&n| n < u64::from(depth)) else {
            continue;
        };
        // Blame what the user wrote: raising iodepth, or lowering count.
        let blamed = [&r.iodepth, count]
            .into_iter()
            .find(|v| !v.is_default())
            .unwrap_or(count);
        return Err(blamed.invalid(format!(
            "iodepth={depth} but this I/O step issues count={n} per pass of a loop with other \
             steps, and each pass waits for its I/Os to finish: at most {n} can be in flight \
             (raise the step's count to at least {depth}, lower iodepth, or make the I/O the \
             role's only step so that it streams)"
        )));
    }
    Ok(())
}

/// O_DIRECT needs sizes and offsets in whole logical blocks.
pub(super) fn check_aligned(v: &Val, bytes: u64) -> Result<(), SettingError> {
    if bytes % 512 != 0 {
        return Err(v.invalid(format!(
            "{} with direct=true must be a multiple of 512 bytes (the smallest logical block)",
            v.shown()
        )));
    }
    Ok(())
}

/// Every I/O step's block must fit in each file after the role's offset.
pub(super) fn check_fit(
    r: &RoleInput,
    steps: &[Step],
    fileset: &FilesetPlan,
    offset: u64,
) -> Result<(), SettingError> {
    for (s, planned) in r.steps.iter().zip(steps) {
        let (StepKind::Io { bs, .. }, Step::Io(io)) = (&s.kind, planned) else {
            continue;
        };
        if offset.saturating_add(io.bs) > fileset.file_size {
            // Blame what the user wrote: a default is not what went wrong.
            let blamed = [bs, &r.offset]
                .into_iter()
                .find(|v| !v.is_default())
                .unwrap_or(bs);
            return Err(blamed.invalid(format!(
                "each of the {} file(s) of fileset '{}' holds {}, too small for offset {offset} \
                 plus one {}-byte block (raise the fileset's size or lower offset/bs)",
                fileset.nrfiles,
                fileset.name,
                format_bytes(fileset.file_size),
                io.bs
            )));
        }
    }
    Ok(())
}

/// Parses `sync`: none/false, dsync, sync/true.
pub(super) fn sync_mode(v: &Val) -> Result<SyncMode, SettingError> {
    Ok(
        match v.choice(&["none", "false", "0", "dsync", "sync", "true", "1"])? {
            "dsync" => SyncMode::Dsync,
            "sync" | "true" | "1" => SyncMode::Sync,
            _ => SyncMode::None,
        },
    )
}

/// `rate_iops`: 0 means unthrottled.
pub(super) fn optional_rate(v: &Val) -> Result<Option<f64>, SettingError> {
    if v.text.trim() == "0" {
        return Ok(None);
    }
    v.rate(1e8).map(Some)
}

pub(super) fn sync_every(fsync: &Val, fdatasync: &Val) -> Result<Option<SyncEvery>, SettingError> {
    let f = fsync.int(0, 1 << 32)?;
    let fd = fdatasync.int(0, 1 << 32)?;
    Ok(match (f, fd) {
        (0, 0) => None,
        (n, 0) => Some(SyncEvery {
            kind: SyncKind::Fsync,
            writes: n,
        }),
        (0, n) => Some(SyncEvery {
            kind: SyncKind::Fdatasync,
            writes: n,
        }),
        _ => return Err(fdatasync.invalid("set fsync or fdatasync, not both")),
    })
}

/// Posts must target roles with gates, waits need a gate, commits need a log writer, and a
/// worker with threads needs an io or file step.
pub(super) fn check_links(inputs: &[RoleInput], roles: &[RolePlan]) -> Result<(), SettingError> {
    for (input, r) in inputs.iter().zip(roles) {
        for (s, planned) in input.steps.iter().zip(&r.steps) {
            match planned {
                Step::Post(targets) => {
                    if let Some(&t) = targets.iter().find(|&&t| roles[t].gate.is_none()) {
                        return Err(s.at.invalid(format!(
                            "posts to '{}', which has no gate = {{ value, highwater }}",
                            roles[t].name
                        )));
                    }
                }
                Step::Wait if r.gate.is_none() => {
                    return Err(s
                        .at
                        .invalid("a wait step needs a gate = { value, highwater } on its role"));
                }
                Step::Commit { log_role, .. } if !roles[*log_role].log_writer => {
                    return Err(s.at.invalid(format!(
                        "commits to '{}', which is not kind = \"logwriter\"",
                        roles[*log_role].name
                    )));
                }
                Step::Commit { log_role, .. } if r.threads > 0 && roles[*log_role].threads == 0 => {
                    return Err(s.at.invalid(format!(
                        "commits to '{}', which has 0 threads: no commit would ever be durable",
                        roles[*log_role].name
                    )));
                }
                Step::Dirty { dbwriter, .. } => check_dirty(s, r, &roles[*dbwriter], &r.steps)?,
                _ => {}
            }
        }
        check_async(input, r)?;
        let writer = r.log_writer || r.db_writer;
        let works = |s: &Step| matches!(s, Step::Io(_) | Step::File(_));
        if !writer && r.threads > 0 && !r.steps.iter().any(works) {
            return Err(input.err("has no io or file step"));
        }
    }
    Ok(())
}

/// A dirty step queues the block a read step of its loop read for a dbwriter role of the same
/// fileset.
fn check_dirty(
    s: &super::StepInput,
    r: &RolePlan,
    target: &RolePlan,
    steps: &[Step],
) -> Result<(), SettingError> {
    if !target.db_writer {
        return Err(s.at.invalid(format!(
            "dirties blocks for '{}', which is not kind = \"dbwriter\"",
            target.name
        )));
    }
    if target.fileset != r.fileset {
        return Err(s.at.invalid(format!(
            "'{}' writes another fileset: a dirty block must be written where it was read",
            target.name
        )));
    }
    let reads = |st: &Step| matches!(st, Step::Io(io) if io.mix != IoMix::Write && !io.async_io);
    if !steps.iter().any(reads) {
        return Err(s.at.invalid(
            "a dirty step dirties the block a read step read: add a synchronous read step first",
        ));
    }
    Ok(())
}

/// Asynchronous I/O steps need an aiowait step in the same loop, and an aiowait step needs
/// asynchronous I/O to wait for.
fn check_async(input: &RoleInput, r: &RolePlan) -> Result<(), SettingError> {
    let is_async = |s: &Step| matches!(s, Step::Io(io) if io.async_io);
    let aiowait = r.steps.iter().position(|s| *s == Step::AioWait);
    match (r.steps.iter().position(is_async), aiowait) {
        (Some(i), None) => Err(input.steps[i].at.invalid(
            "an async io step needs an aiowait = true step in the same loop to wait for its I/Os",
        )),
        (None, Some(i)) => Err(input.steps[i]
            .at
            .invalid("an aiowait step waits for async io steps, and this loop has none")),
        _ => Ok(()),
    }
}

/// A plan where no role that does I/O has threads would run nothing: refused, naming what
/// disabled each role.
pub(super) fn check_some_threads(
    inputs: &[RoleInput],
    roles: &[RolePlan],
) -> Result<(), SettingError> {
    let workers: Vec<&RoleInput> = inputs
        .iter()
        .zip(roles)
        .filter(|(_, r)| !r.log_writer && !r.db_writer)
        .map(|(i, _)| i)
        .collect();
    if roles
        .iter()
        .any(|r| !r.log_writer && !r.db_writer && r.threads > 0)
    {
        return Ok(());
    }
    let Some(first) = workers.first() else {
        return match inputs.first() {
            Some(log_writer) => {
                Err(log_writer.err("no role does I/O: add a worker role with io steps"))
            }
            None => Ok(()), // parsing refuses a personality without roles
        };
    };
    let disabled: Vec<String> = workers
        .iter()
        .map(|i| format!("{}: {}={}", i.name, i.threads.key, i.threads.text.trim()))
        .collect();
    let blamed = workers
        .iter()
        .map(|i| &i.threads)
        .find(|v| !v.is_default())
        .unwrap_or(&first.threads);
    Err(blamed.invalid(format!(
        "every role that does I/O has 0 threads ({}): nothing would run (give one of them threads)",
        disabled.join(", ")
    )))
}

/// A role's own engine (`engine = "io_uring"`), or `None` to use the run's.
pub(super) fn role_engine(v: &Val) -> Result<Option<EngineKind>, SettingError> {
    if v.text.trim().is_empty() {
        return Ok(None);
    }
    EngineKind::parse(v.text.trim()).map(Some).map_err(|_| {
        v.invalid(format!(
            "{} is not an engine (allowed: {})",
            v.shown(),
            EngineKind::names()
        ))
    })
}

/// The I/O kinds of `rw` (plain jobs) and `io` (steps): one table, one meaning. A mixed kind's
/// read share comes from `rwmixread`.
pub(crate) const IO_KINDS: &[(&str, IoMix, Pattern)] = &[
    ("read", IoMix::Read, Pattern::Sequential),
    ("write", IoMix::Write, Pattern::Sequential),
    ("randread", IoMix::Read, Pattern::Random),
    ("randwrite", IoMix::Write, Pattern::Random),
    ("randrw", IoMix::Mixed { read_pct: 0 }, Pattern::Random),
    ("rw", IoMix::Mixed { read_pct: 0 }, Pattern::Sequential),
    (
        "readwrite",
        IoMix::Mixed { read_pct: 0 },
        Pattern::Sequential,
    ),
    ("update", IoMix::Update, Pattern::Sequential),
    ("randupdate", IoMix::Update, Pattern::Random),
];

pub(super) fn io_kind(io: &Val, rwmixread: &Val) -> Result<(IoMix, Pattern), SettingError> {
    let names: Vec<&str> = IO_KINDS.iter().map(|(n, _, _)| *n).collect();
    let name = io.choice(&names)?;
    // Checked even where unused: a wrong value written is refused, never ignored.
    let read_pct = rwmixread.int(0, 100)? as u8;
    let (_, mix, pattern) = IO_KINDS
        .iter()
        .find(|(n, _, _)| *n == name)
        .copied()
        .unwrap_or(IO_KINDS[0]);
    let mix = match mix {
        IoMix::Mixed { .. } => IoMix::Mixed { read_pct },
        other => other,
    };
    Ok((mix, pattern))
}
