//! The one planner. Every workload reaches a [`Plan`] through here: a plain job as one fileset
//! and one role, a personality as its declared filesets and roles. Each setting arrives as a
//! [`Val`] (text, the key to name, where it was written), so the rules of a role are written
//! once, in one wording, whichever kind of workload the role came from.

mod files;
mod rules;
mod verify;

use crate::plan::*;
use crate::settings::{Origin, SettingError};
use crate::units::format_bytes;
use crate::values::{Lookup, Val};
use rules::{
    check_aligned, check_depth_fits_count, check_engine_depth, check_fit, check_links,
    check_some_threads, io_kind, optional_rate, role_engine, sync_every, sync_mode,
};
use std::collections::BTreeMap;
use std::time::Duration;

pub(crate) use files::TreeInput;
#[cfg(test)]
pub(crate) use rules::IO_KINDS;
pub(crate) use verify::refuse_verify;

/// Largest block size accepted.
pub const MAX_BS: u64 = 256 << 20;

/// Smallest fileset: the log writer wraps its region in 512-byte units, and a smaller file
/// holds no useful block.
const MIN_FILESET_BYTES: u64 = 4096;

/// Dirty blocks a db writer lets wait before sessions wait.
const DEFAULT_DIRTY_LIMIT: u64 = 10_000;

/// Largest dataset bakeoff lays out (all filesets together): 1 PiB.
const MAX_DATASET_BYTES: u64 = 1 << 50;

/// Most client processes of a run.
const MAX_CLIENTS: u64 = 1024;

/// Run-wide values resolved from [`crate::keys::RUN_KEYS`].
pub(crate) struct RunValues {
    pub engine: EngineKind,
    pub runtime: Duration,
    pub ramp_time: Duration,
    /// `ramp_time=auto`: the warm-up lasts until steady (`ramp_time` is then zero).
    pub ramp_auto: Option<crate::steady::AutoRamp>,
    /// `ss=`: the measured window ends once steady.
    pub stop: Option<crate::steady::StopRule>,
    pub seed: u64,
    pub compress_pct: u8,
    pub clients: u32,
    /// `verify=`: the algorithm (`None`: off) and the value, to name in a refusal.
    pub verify: (Option<crate::verify::Algorithm>, Val),
}

pub(crate) fn run_values(look: &Lookup) -> Result<RunValues, SettingError> {
    let d = |k: &str| look.get(k, crate::keys::default_of(crate::keys::RUN_KEYS, k));
    let engine = d("engine");
    let engine = EngineKind::parse(engine.text.trim()).map_err(|_| {
        engine.invalid(format!(
            "{} is not an engine (allowed: {})",
            engine.shown(),
            EngineKind::names()
        ))
    })?;
    let week = Duration::from_secs(7 * 86400);
    let (ramp_time, ramp_auto) = warmup(&d, week)?;
    let verify = d("verify");
    let algorithm = crate::verify::Algorithm::parse_key(&verify.text)
        .map_err(|m| verify.invalid(format!("{} is not a verify mode ({m})", verify.shown())))?;
    Ok(RunValues {
        engine,
        runtime: d("runtime").duration(Duration::from_millis(100), week)?,
        ramp_time,
        ramp_auto,
        stop: stop_rule(&d, week)?,
        seed: d("seed").int(0, u64::MAX)?,
        compress_pct: d("buffer_compress_percentage").int(0, 100)? as u8,
        clients: d("clients").int(0, MAX_CLIENTS)? as u32,
        verify: (algorithm, verify),
    })
}

/// `ramp_time` and `ramp_max`: a fixed warm-up, or an automatic one with its cap.
fn warmup(
    d: &dyn Fn(&str) -> Val,
    week: Duration,
) -> Result<(Duration, Option<crate::steady::AutoRamp>), SettingError> {
    let ramp = d("ramp_time");
    let max = d("ramp_max").duration(Duration::from_secs(1), week)?;
    if ramp.text.trim() == "auto" {
        return Ok((Duration::ZERO, Some(crate::steady::AutoRamp { max })));
    }
    Ok((ramp.duration(Duration::ZERO, week)?, None))
}

/// `ss` and `ss_dur`: fio's stop rule on the measured window, if written.
fn stop_rule(
    d: &dyn Fn(&str) -> Val,
    week: Duration,
) -> Result<Option<crate::steady::StopRule>, SettingError> {
    let ss = d("ss");
    if ss.text.trim().is_empty() {
        return Ok(None);
    }
    let dur = d("ss_dur").duration(Duration::from_secs(2), week)?;
    crate::steady::StopRule::parse(&ss.text, dur.as_secs() as u32)
        .map(Some)
        .map_err(|m| ss.invalid(m))
}

/// A fileset as written.
pub(crate) struct FilesetInput {
    pub name: String,
    pub nrfiles: Val,
    pub size: FileSize,
    /// A directory tree for file steps (`entries` or `data_per_ops` written).
    pub tree: Option<TreeInput>,
}

/// How a fileset's size was given.
pub(crate) enum FileSize {
    /// Total bytes, split over the files.
    Total(Val),
    /// Bytes per file.
    PerFile(Val),
}

/// A role as written; `label` (`role.reader`, or `job`) and `origin` locate role-wide errors.
pub(crate) struct RoleInput {
    pub name: String,
    pub label: String,
    pub origin: Origin,
    pub threads: Val,
    /// Threads come from a `$param`: 0 disables the role instead of being refused.
    pub threads_via_param: bool,
    pub fileset: Val,
    pub kind: Val,
    pub direct: Val,
    pub sync: Val,
    pub iodepth: Val,
    pub offset: Val,
    pub rate_iops: Val,
    pub fsync: Val,
    pub fdatasync: Val,
    pub log: Val,
    /// This role's engine; empty: the run's.
    pub engine: Val,
    /// A dbwriter's dirty-block limit, where written.
    pub dirty_limit: Option<Val>,
    pub gate: Option<(Val, Val)>,
    /// Each pass runs one step drawn by weight.
    pub mix: Val,
    pub steps: Vec<StepInput>,
}

/// One step as written; `at` is the value that names its kind (`io = "randread"`).
pub(crate) struct StepInput {
    pub at: Val,
    pub kind: StepKind,
    /// Its weight in a mix, where written.
    pub weight: Option<Val>,
}

/// What a step does.
#[allow(clippy::large_enum_variant)] // a few per role, planned once
pub(crate) enum StepKind {
    Io {
        io: Val,
        bs: Val,
        rwmixread: Val,
        count: Val,
        async_io: Val,
    },
    File {
        op: Val,
        /// The tree it works on: the role's fileset unless the step names one.
        fileset: Val,
        bs: Val,
        random: Val,
    },
    Hog(Val),
    Post(Vec<Val>),
    Wait,
    Commit {
        bytes: Val,
        log: Val,
    },
    Sync(Val),
    AioWait,
    Dirty {
        role: Val,
        pct: Val,
    },
}

impl RoleInput {
    fn err(&self, msg: impl Into<String>) -> SettingError {
        SettingError::new(self.origin.clone(), &self.label, msg)
    }
}

/// Resolves and checks filesets and roles into the plan of `workload`.
pub(crate) fn build(
    workload: &str,
    run: RunValues,
    inputs: &[FilesetInput],
    roles: &[RoleInput],
    settings: BTreeMap<String, String>,
) -> Result<Plan, SettingError> {
    let mut planned_filesets = Vec::with_capacity(inputs.len());
    let mut dataset = 0u64;
    for f in inputs {
        let p = fileset(f)?;
        dataset = dataset.saturating_add(p.file_size.saturating_mul(u64::from(p.nrfiles)));
        if dataset > MAX_DATASET_BYTES {
            let size = match &f.size {
                FileSize::Total(v) | FileSize::PerFile(v) => v,
            };
            return Err(size.invalid(format!(
                "the dataset would exceed {}, the most bakeoff lays out (lower the size or the \
                 number of files)",
                format_bytes(MAX_DATASET_BYTES)
            )));
        }
        planned_filesets.push(p);
    }
    let filesets = planned_filesets;
    let names: Vec<&str> = roles.iter().map(|r| r.name.as_str()).collect();
    let planned = roles
        .iter()
        .map(|r| role(r, &names, &filesets, run.engine))
        .collect::<Result<Vec<_>, _>>()?;
    check_links(roles, &planned)?;
    check_some_threads(roles, &planned)?;
    let mut plan = Plan {
        workload: workload.to_string(),
        engine: run.engine,
        runtime: run.runtime,
        ramp_time: run.ramp_time,
        ramp_auto: run.ramp_auto,
        stop: run.stop,
        seed: run.seed,
        repetition: 1,
        compress_pct: run.compress_pct,
        filesets,
        roles: planned,
        settings,
        clients: run.clients,
        replay: None,
        verify: None,
        journal: Default::default(),
    };
    files::size_trees(&mut plan, inputs)?;
    let (algorithm, val) = &run.verify;
    verify::plan_verify(&mut plan, *algorithm, val)?;
    Ok(plan)
}

fn fileset(f: &FilesetInput) -> Result<FilesetPlan, SettingError> {
    if let Some(tree) = &f.tree {
        return files::tree_fileset(f, tree);
    }
    let nrfiles = f.nrfiles.int(1, 100_000)? as u32;
    let (size, file_size) = match &f.size {
        FileSize::PerFile(v) => (v, v.size(MIN_FILESET_BYTES, u64::MAX / 2)?),
        FileSize::Total(v) => (
            v,
            v.size(MIN_FILESET_BYTES, u64::MAX / 2)? / u64::from(nrfiles),
        ),
    };
    if file_size < MIN_FILESET_BYTES {
        let blamed = if size.is_default() { &f.nrfiles } else { size };
        return Err(blamed.invalid(format!(
            "{} split over {nrfiles} files leaves {} per file of fileset '{}': each file needs at \
             least {} (raise the size or lower the number of files)",
            size.shown(),
            format_bytes(file_size),
            f.name,
            format_bytes(MIN_FILESET_BYTES)
        )));
    }
    Ok(FilesetPlan {
        name: f.name.clone(),
        nrfiles,
        file_size,
        tree: None,
        verify: None,
    })
}

fn role(
    r: &RoleInput,
    names: &[&str],
    filesets: &[FilesetPlan],
    engine: EngineKind,
) -> Result<RolePlan, SettingError> {
    let fileset = filesets
        .iter()
        .position(|f| f.name == r.fileset.text.trim())
        .ok_or_else(|| {
            let known: Vec<&str> = filesets.iter().map(|f| f.name.as_str()).collect();
            r.fileset.invalid(format!(
                "no fileset named {} (filesets: {})",
                r.fileset.shown(),
                known.join(", ")
            ))
        })?;
    let kind = r.kind.choice(&["worker", "logwriter", "dbwriter"])?;
    let (log_writer, db_writer) = (kind == "logwriter", kind == "dbwriter");
    let direct = r.direct.boolean()?;
    let iodepth = r.iodepth.int(1, 4096)? as u32;
    let own_engine = role_engine(&r.engine)?;
    // A role of file steps has no engine: `files::check_role` says what applies to it.
    if !r
        .steps
        .iter()
        .any(|s| matches!(s.kind, StepKind::File { .. }))
    {
        check_engine_depth(own_engine.unwrap_or(engine), &r.iodepth, iodepth)?;
    }
    let offset = r.offset.size(0, u64::MAX / 2)?;
    if direct {
        check_aligned(&r.offset, offset)?;
    }
    // A loop of one I/O step streams: the engine keeps iodepth I/Os in flight across passes,
    // as fio does. With other steps, each pass drains its I/Os before the next step.
    let stream = matches!(
        r.steps[..],
        [StepInput {
            kind: StepKind::Io { .. },
            ..
        }]
    );
    let mut steps = Vec::with_capacity(r.steps.len());
    for s in &r.steps {
        steps.push(match &s.kind {
            StepKind::File { .. } => files::file_step(s, filesets)?,
            _ => step(s, names, direct, stream)?,
        });
    }
    let weights = files::check_role(r, &steps, filesets, fileset)?;
    check_depth_fits_count(r, &steps, iodepth)?;
    check_fit(r, &steps, &filesets[fileset], offset)?;
    let gate = match &r.gate {
        None => None,
        Some((value, highwater)) => Some(SemaphoreSpec {
            value: value.int(1, 1 << 40)?,
            highwater: highwater.int(1, 1 << 40)?,
        }),
    };
    let min_threads = if r.threads_via_param { 0 } else { 1 };
    let threads = r.threads.int(min_threads, 4096)? as u32;
    if log_writer && threads > 1 {
        return Err(r.threads.invalid("a logwriter role has exactly one thread"));
    }
    let dirty_limit = match (&r.dirty_limit, db_writer) {
        (Some(v), true) => v.int(1, 1 << 30)?,
        (None, true) => DEFAULT_DIRTY_LIMIT,
        (Some(v), false) => return Err(v.invalid("applies to a kind = \"dbwriter\" role only")),
        (None, false) => 0,
    };
    Ok(RolePlan {
        name: r.name.clone(),
        threads,
        fileset,
        direct,
        sync_mode: sync_mode(&r.sync)?,
        iodepth,
        offset,
        rate_iops: optional_rate(&r.rate_iops)?,
        steps,
        gate,
        sync_every: sync_every(&r.fsync, &r.fdatasync)?,
        log: log_writer || r.log.boolean()?,
        log_writer,
        db_writer,
        dirty_limit,
        engine: own_engine,
        weights,
    })
}

fn step(s: &StepInput, names: &[&str], direct: bool, stream: bool) -> Result<Step, SettingError> {
    let role_ref = |v: &Val| -> Result<usize, SettingError> {
        names
            .iter()
            .position(|n| *n == v.text.trim())
            .ok_or_else(|| {
                v.invalid(format!(
                    "no role named {} (roles: {})",
                    v.shown(),
                    names.join(", ")
                ))
            })
    };
    Ok(match &s.kind {
        StepKind::Io {
            io,
            bs,
            rwmixread,
            count,
            async_io,
        } => {
            let (mix, pattern) = io_kind(io, rwmixread)?;
            let bytes = bs.size(1, MAX_BS)?;
            if direct {
                check_aligned(bs, bytes)?;
            }
            let count = count.int(1, 1 << 40)?;
            Step::Io(IoStep {
                mix,
                pattern,
                bs: bytes,
                count: (!stream).then_some(count),
                async_io: async_io.boolean()?,
            })
        }
        StepKind::Hog(n) => Step::Hog(n.int(0, 1 << 40)?),
        StepKind::Post(targets) => {
            Step::Post(targets.iter().map(role_ref).collect::<Result<_, _>>()?)
        }
        StepKind::Wait => Step::Wait,
        StepKind::Commit { bytes, log } => Step::Commit {
            bytes: bytes.size(1, 64 << 20)?,
            log_role: role_ref(log)?,
        },
        StepKind::Sync(kind) => Step::Sync(match kind.choice(&["fsync", "fdatasync"])? {
            "fsync" => SyncKind::Fsync,
            _ => SyncKind::Fdatasync,
        }),
        StepKind::AioWait => Step::AioWait,
        StepKind::Dirty { role, pct } => Step::Dirty {
            dbwriter: role_ref(role)?,
            pct: pct.int(0, 100)? as u8,
        },
        StepKind::File { .. } => {
            return Err(s.at.invalid("a file step is planned with its fileset"))
        }
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod verify_tests;
