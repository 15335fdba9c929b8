//! `bakeoff trace personality`: a personality fitted to a trace, written in the vocabulary of
//! `personalities/*.toml` (`[params]`, `[[fileset]]`, `[[role]]`), so a user edits and sweeps it
//! like any other.
//!
//! Each thread's reads, writes and syncs are split by the class of the file they touched
//! ([`super::classify`]): its log part and its data part. Parts are grouped into roles by
//! behaviour: `log` (writes to log files), `session` (data parts that mostly read) and `writer`
//! (data parts that mostly write: a checkpointer, a page cleaner), each with `_async` when most
//! of its I/O was asynchronous. A thread that wrote both data and the log is in two roles.
//! Other files are left out.

mod emit;

#[cfg(test)]
mod tests;

use super::classify::{self, FileClass, O_DIRECT, O_DSYNC};
use super::model::{OpCode, Trace};
use super::stats::duration_ns;
use super::stats::{blocks, mode, BLOCK};
use crate::planner::MAX_BS;
use std::collections::{BTreeMap, HashSet};

/// The highest `rate_iops` the planner takes.
const MAX_RATE: f64 = 1e8;

/// Why a trace cannot be fitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    /// Nothing to fit: no thread read or wrote a data or log file.
    #[error(
        "the trace has no reads or writes of data or log files (trace show lists its files and \
         their classes): there is nothing to fit a personality to"
    )]
    NoIo,
}

/// What a role does, the key threads are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Behaviour {
    /// Writes a log.
    Log,
    /// Mostly reads data.
    Session,
    /// Mostly writes data.
    Writer,
}

/// One group of thread parts with the same behaviour: a role of the personality.
#[derive(Clone, Debug, Default)]
pub(crate) struct Group {
    pub threads: u64,
    pub comms: BTreeMap<String, u64>,
    pub reads: u64,
    pub writes: u64,
    pub sizes: Vec<u64>,
    pub fsyncs: u64,
    pub fdatasyncs: u64,
    pub dsync_writes: u64,
    pub direct_ios: u64,
    pub async_ios: u64,
    /// Sum over its threads of their asynchronous I/Os' time in flight, and of the spans they
    /// were in flight over.
    pub async_busy_ns: u64,
    pub async_span_ns: u64,
}

/// A fitted role: what the TOML writes.
#[derive(Clone, Debug)]
pub(crate) struct Role {
    pub name: String,
    pub behaviour: Behaviour,
    pub group: Group,
    /// Reads and writes per second per thread.
    pub rate: f64,
    pub bs: u64,
    pub read_pct: u64,
    /// `("fsync" | "fdatasync", writes per sync)`.
    pub sync_every: Option<(&'static str, u64)>,
    pub dsync: bool,
    pub direct: bool,
    /// In flight per thread, when its I/O was asynchronous.
    pub iodepth: Option<u64>,
}

/// A fileset the roles use.
#[derive(Clone, Debug)]
pub(crate) struct Fileset {
    pub name: &'static str,
    pub nrfiles: u64,
    pub size: u64,
}

/// How to fit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FitOptions {
    /// Size the `data` fileset by the distinct 8 KiB blocks the trace touched in data files (its
    /// working set) rather than by the files' sizes.
    pub working_set: bool,
}

/// The personality `name` fitted to `trace`, as TOML.
pub fn fit_personality(trace: &Trace, name: &str) -> Result<String, FitError> {
    fit_personality_with(trace, name, FitOptions::default())
}

/// [`fit_personality`] with `options`.
pub fn fit_personality_with(
    trace: &Trace,
    name: &str,
    options: FitOptions,
) -> Result<String, FitError> {
    let classes = classify::classify_files(trace);
    let duration_s = duration_ns(trace) as f64 / 1e9;
    let groups = groups(trace, &classes);
    if groups.is_empty() || duration_s <= 0.0 {
        return Err(FitError::NoIo);
    }
    let roles: Vec<Role> = (groups.into_iter())
        .map(|((behaviour, is_async), g)| role(behaviour, is_async, g, duration_s))
        .collect();
    let filesets = filesets(trace, &classes, &roles, options);
    Ok(emit::write(trace, name, &classes, &filesets, &roles))
}

/// Each thread's parts, grouped by (behaviour, mostly asynchronous).
fn groups(trace: &Trace, classes: &[FileClass]) -> BTreeMap<(Behaviour, bool), Group> {
    let mut out: BTreeMap<(Behaviour, bool), Group> = BTreeMap::new();
    for (thread, ops) in trace.threads.iter().zip(&trace.ops) {
        // The thread's log part and data part.
        let mut parts = [Group::default(), Group::default()];
        let mut spans: [Option<(u64, u64)>; 2] = [None, None];
        for r in ops {
            let Some(handle) = r.handle.and_then(|h| trace.handles.get(h as usize)) else {
                continue;
            };
            let k = match classes.get(handle.file as usize) {
                Some(FileClass::Log) => 0,
                Some(FileClass::Data) => 1,
                _ => continue,
            };
            let p = &mut parts[k];
            match r.op {
                Some(op @ (OpCode::Read | OpCode::Write)) => {
                    if op == OpCode::Write {
                        p.writes += 1;
                        p.dsync_writes += u64::from(handle.flags & O_DSYNC != 0);
                    } else {
                        p.reads += 1;
                    }
                    p.sizes.push(r.len);
                    p.direct_ios += u64::from(handle.flags & O_DIRECT != 0);
                    if r.is_async {
                        p.async_ios += 1;
                        p.async_busy_ns += r.dur_ns;
                        let (a, b) = spans[k].unwrap_or((r.start_ns, r.end_ns()));
                        spans[k] = Some((a.min(r.start_ns), b.max(r.end_ns())));
                    }
                }
                Some(OpCode::Fsync) => p.fsyncs += 1,
                Some(OpCode::Fdatasync) => p.fdatasyncs += 1,
                _ => {}
            }
        }
        for (k, mut p) in parts.into_iter().enumerate() {
            if p.reads + p.writes == 0 || (k == 0 && p.writes == 0) {
                continue;
            }
            p.async_span_ns = spans[k].map_or(0, |(a, b)| b - a);
            let behaviour = match k {
                0 => Behaviour::Log,
                _ if p.reads >= p.writes => Behaviour::Session,
                _ => Behaviour::Writer,
            };
            let is_async = p.async_ios * 2 > p.reads + p.writes;
            let g = out.entry((behaviour, is_async)).or_default();
            g.threads += 1;
            *g.comms.entry(thread.comm.clone()).or_default() += 1;
            g.merge(p);
        }
    }
    out
}

impl Group {
    fn merge(&mut self, p: Group) {
        self.reads += p.reads;
        self.writes += p.writes;
        self.sizes.extend(p.sizes);
        self.fsyncs += p.fsyncs;
        self.fdatasyncs += p.fdatasyncs;
        self.dsync_writes += p.dsync_writes;
        self.direct_ios += p.direct_ios;
        self.async_ios += p.async_ios;
        self.async_busy_ns += p.async_busy_ns;
        self.async_span_ns += p.async_span_ns;
    }
}

fn role(behaviour: Behaviour, is_async: bool, g: Group, duration_s: f64) -> Role {
    let base = match behaviour {
        Behaviour::Log => "log",
        Behaviour::Session => "session",
        Behaviour::Writer => "writer",
    };
    let ios = g.reads + g.writes;
    let syncs = g.fsyncs + g.fdatasyncs;
    let sync_every = (syncs > 0 && g.writes > 0).then(|| {
        let kind = if g.fsyncs > g.fdatasyncs {
            "fsync"
        } else {
            "fdatasync"
        };
        (
            kind,
            (g.writes as f64 / syncs as f64).round().max(1.0) as u64,
        )
    });
    let direct = g.direct_ios * 2 > ios;
    // Sizes the planner takes: 1 byte to its largest block.
    let mut bs = mode(&g.sizes).unwrap_or(4096).clamp(1, MAX_BS);
    if direct {
        // O_DIRECT sizes are whole logical blocks: a modal size that is not is rounded up.
        bs = bs.div_ceil(512) * 512;
    }
    let iodepth = (is_async && g.async_span_ns > 0).then(|| {
        (g.async_busy_ns as f64 / g.async_span_ns as f64)
            .round()
            .clamp(1.0, 256.0) as u64
    });
    Role {
        name: if is_async {
            format!("{base}_async")
        } else {
            base.to_string()
        },
        behaviour,
        rate: (ios as f64 / g.threads as f64 / duration_s).min(MAX_RATE),
        bs,
        read_pct: (g.reads * 100 + ios / 2) / ios,
        sync_every,
        dsync: g.dsync_writes * 2 > g.writes && g.writes > 0,
        direct,
        iodepth,
        group: g,
    }
}

/// `data` and `log` filesets, each of the files of its class, as large as the files were (and
/// at least one block of the largest size a role uses per file).
fn filesets(
    trace: &Trace,
    classes: &[FileClass],
    roles: &[Role],
    options: FitOptions,
) -> Vec<Fileset> {
    let mut extent = vec![0u64; trace.files.len()];
    let mut touched: Vec<HashSet<u64>> = vec![HashSet::new(); trace.files.len()];
    for r in trace.ops.iter().flatten() {
        if let (Some(OpCode::Read | OpCode::Write), Some(f)) = (r.op, classify::file_of(trace, r)) {
            let moved = super::stats::done(r.result);
            if let (Some(e), true) = (extent.get_mut(f as usize), moved > 0) {
                *e = (*e).max(r.offset.saturating_add(moved));
                if options.working_set {
                    touched[f as usize].extend(blocks(r.offset, moved));
                }
            }
        }
    }
    [(FileClass::Data, "data"), (FileClass::Log, "log")]
        .into_iter()
        .filter_map(|(class, name)| {
            let log = class == FileClass::Log;
            let users = roles
                .iter()
                .filter(|r| (r.behaviour == Behaviour::Log) == log);
            let bs = users.map(|r| r.bs).max()?;
            let files: Vec<usize> = (0..classes.len())
                .filter(|i| classes[*i] == class)
                .collect();
            let nrfiles = files.len().max(1) as u64;
            let working_set = options.working_set && !log;
            let total = (files.iter())
                .map(|&i| {
                    let f = &trace.files[i];
                    if working_set {
                        return touched[i].len() as u64 * BLOCK;
                    }
                    (f.start_size.unwrap_or(0))
                        .max(f.end_size.unwrap_or(0))
                        .max(extent[i])
                })
                .fold(0u64, u64::saturating_add);
            let size = total.max(nrfiles * bs.max(4096));
            Some(Fileset {
                name,
                nrfiles,
                size,
            })
        })
        .collect()
}
