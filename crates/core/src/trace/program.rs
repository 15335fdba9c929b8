//! What a replay runs: each captured thread's calls in order, and the calls of other threads
//! each must wait for, so that a replay as fast as the stack allows still keeps the order the
//! data needed (an fsync after the writes it made durable, a read after the write it read).
//! Pure: computed once from a [`Trace`], before the replay's threads start.
//!
//! Edges are found on one timeline of every call's start and end. A call waits only for calls
//! that ended strictly before it started (an end at the same instant as a start counts as
//! after it), so every edge goes to an earlier start and no replay can wait in a circle, not
//! even with calls the capture timed at zero length:
//! * a sync of file F (fsync, fdatasync, sync_file_range) waits for every other thread's last
//!   write to F that ended before it started; a syncfs for their last write to any file;
//! * an fsync or fdatasync of F waits for the other threads' last fsync or fdatasync of F that
//!   ended before it started: syncs the database made one at a time (PostgreSQL's WAL syncs,
//!   under its WAL write lock, never overlapped in a pgbench trace) stay one at a time, where
//!   a replay as fast as the stack allows would otherwise overlap them (btrfs makes concurrent
//!   syncs of one file dear); syncs that overlapped in the capture keep no order. With
//!   [`SyncRule::Merge`] this edge is left out: the replay makes a file's syncs one at a time
//!   in the order the threads come to them, as a database's group commit does;
//! * a read waits for the last write by another thread to each 8 KiB block it overlaps that
//!   ended before it;
//! * any call on a file waits for the call of another thread that created it or last renamed
//!   it (or renamed another file over it); a rename, unlink or rmdir waits for every other thread's last call on the file;
//! * a call that names a path (an open, failed or not, a rename, unlink, mkdir or rmdir) waits
//!   for the other threads' last change of what is at that path (a create, rename, unlink);
//!   a change waits for the other threads' last call that named the path: a failed open
//!   stays before the create it did not see;
//! * the size of a file: an `lseek(SEEK_END)` waits for the other threads' last change of
//!   the file's size (a write that made it longer than any call had, a truncate, a
//!   fallocate), and such a write waits for the other threads' last `lseek(SEEK_END)` of it
//!   (PostgreSQL asks a relation's length that way while other backends extend it). A write
//!   inside the file changes no size: a probe does not wait for it (in a pgbench trace half
//!   of all edges were probes waiting for the checkpointer's writes inside the relations);
//! * a call waits once per other thread, for the latest of its calls it needs; and an edge
//!   Y ← (X, n) is kept only if Y's earlier calls do not already wait for X's n-th.

use super::model::{FileId, FileKind, OpCode, Record, ThreadId, Trace};
use crate::plan::SyncRule;
// Bounded to what one call can move: a damaged length must not overflow or loop for hours.
use super::stats::blocks;
use std::collections::HashMap;

/// Block size of the read-after-write rule.
pub const BLOCK: u64 = 8192;

/// "Wait until `thread` has finished `count` calls."
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dep {
    /// The other thread.
    pub thread: ThreadId,
    /// How many of its calls (in its order) must be done: its call `count - 1` and all before.
    pub count: u32,
}

/// What each of one thread's calls (`Trace::ops[thread]`, in order) touches and waits for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadProgram {
    /// The file each call touches (`None`: none, or a path the trace does not know).
    pub files: Vec<Option<FileId>>,
    /// `deps[starts[i]..starts[i + 1]]` are call `i`'s waits (`starts` has `ops.len() + 1`
    /// entries).
    pub starts: Vec<u32>,
    /// Every call's waits, call by call.
    pub deps: Vec<Dep>,
}

impl ThreadProgram {
    /// What call `i` waits for.
    pub fn deps_of(&self, i: usize) -> &[Dep] {
        &self.deps[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// Every thread's program.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    /// By [`ThreadId`].
    pub threads: Vec<ThreadProgram>,
}

impl Program {
    /// The cross-thread edges kept.
    pub fn edge_count(&self) -> usize {
        self.threads.iter().map(|t| t.deps.len()).sum()
    }
}

/// The file a call touches: its handle's, or for a path call the file at that path then.
fn handle_file(trace: &Trace, r: &Record) -> Option<FileId> {
    let h = trace.handles.get(r.handle? as usize)?;
    Some(h.file)
}

/// A position on the timeline: a call's start or end.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    t_ns: u64,
    /// 0: a start, 1: an end (starts first at the same instant).
    end: u8,
    thread: ThreadId,
    seq: u32,
}

/// Each thread's last call of some sort (few threads touch one file: a short list).
type PerThread = Vec<(ThreadId, u32)>;

/// Sets `thread`'s entry of `list` to `seq`.
fn set(list: &mut PerThread, thread: ThreadId, seq: u32) {
    match list.iter_mut().find(|(u, _)| *u == thread) {
        Some(entry) => entry.1 = seq,
        None => list.push((thread, seq)),
    }
}

/// What the timeline has seen end so far.
#[derive(Default)]
struct Seen {
    /// file → each thread's last write to it.
    last_write: HashMap<FileId, PerThread>,
    /// thread → its last write to any file.
    last_write_any: HashMap<ThreadId, u32>,
    /// (file, block) → the last write to it.
    block: HashMap<(FileId, u64), (ThreadId, u32)>,
    /// file → each thread's last call on it.
    last_op: HashMap<FileId, PerThread>,
    /// file → the call that created or last renamed it.
    named: HashMap<FileId, (ThreadId, u32)>,
    /// Files created already (their first open is the create).
    created: Vec<bool>,
    /// path → the file there now.
    by_path: HashMap<u32, FileId>,
    /// path → each thread's last call that named it.
    path_named: HashMap<u32, PerThread>,
    /// path → the last call that changed what is there.
    path_changed: HashMap<u32, (ThreadId, u32)>,
    /// file → each thread's last `lseek(SEEK_END)` of it.
    size_probe: HashMap<FileId, PerThread>,
    /// file → each thread's last call that changed its size.
    last_resize: HashMap<FileId, PerThread>,
    /// file → each thread's last fsync or fdatasync of it.
    last_sync: HashMap<FileId, PerThread>,
    /// file → the furthest end any call made it reach (its start size at first).
    extent: HashMap<FileId, u64>,
}

/// `lseek`'s whence that reads the file's size.
const SEEK_END: u64 = 2;

/// Whether `r` reads the size of its file.
fn probes_size(r: &Record) -> bool {
    r.op == Some(OpCode::Lseek) && r.arg == SEEK_END
}

/// The paths call `r` names (none for calls on a handle only).
fn paths_of(r: &Record) -> [Option<u32>; 2] {
    let path = |v: u64| u32::try_from(v).ok();
    match r.op {
        Some(OpCode::Open | OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir) => [path(r.arg), None],
        Some(OpCode::Rename) => [path(r.arg), path(r.arg2)],
        _ => [None, None],
    }
}

/// Whether call `r` changes what is at the paths it names (when it succeeds).
fn changes_paths(r: &Record) -> bool {
    const O_CREAT: u64 = 0o100;
    match r.op {
        Some(OpCode::Rename | OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir) => true,
        Some(OpCode::Open) => r.arg2 & O_CREAT != 0,
        _ => false,
    }
}

/// The program of `trace`, each sync of a file after the other threads' syncs of it that ended
/// before it ([`SyncRule::Each`]).
pub fn program(trace: &Trace) -> Program {
    program_with(trace, SyncRule::Each)
}

/// The program of `trace` with the order of syncs `syncs` says.
pub fn program_with(trace: &Trace, syncs: SyncRule) -> Program {
    let threads = trace.ops.len();
    let mut events = Vec::with_capacity(trace.record_count() as usize * 2);
    for (t, ops) in trace.ops.iter().enumerate() {
        for (i, r) in ops.iter().enumerate() {
            let (thread, seq) = (t as ThreadId, i as u32);
            events.push(Event {
                t_ns: r.start_ns,
                end: 0,
                thread,
                seq,
            });
            events.push(Event {
                t_ns: r.end_ns(),
                end: 1,
                thread,
                seq,
            });
        }
    }
    events.sort_unstable();
    let mut seen = Seen {
        created: trace.files.iter().map(|f| f.start_size.is_some()).collect(),
        by_path: (trace.files.iter().enumerate())
            .filter(|(_, f)| f.start_size.is_some())
            .map(|(id, f)| (f.path, id as FileId))
            .collect(),
        extent: (trace.files.iter().enumerate())
            .filter_map(|(id, f)| Some((id as FileId, f.start_size?)))
            .collect(),
        ..Seen::default()
    };
    let mut out: Vec<ThreadProgram> = (trace.ops.iter())
        .map(|ops| ThreadProgram {
            files: vec![None; ops.len()],
            starts: vec![0; ops.len() + 1],
            deps: Vec::new(),
        })
        .collect();
    // Per waiting thread: the count of each other thread it already waits for.
    let mut kept: Vec<HashMap<ThreadId, u32>> = vec![HashMap::new(); threads];
    let mut found = Vec::new();
    for e in events {
        let (t, i) = (e.thread as usize, e.seq as usize);
        let r = trace.ops[t][i];
        if e.end == 0 {
            let file = file_of(trace, &seen, &r);
            out[t].files[i] = file;
            found.clear();
            waits(&seen, &r, (file, syncs), e.thread, &mut found);
            // One wait per other thread: for the latest of its calls this one needs.
            found.sort_unstable_by_key(|&(u, seq)| (u, std::cmp::Reverse(seq)));
            found.dedup_by_key(|&mut (u, _)| u);
            let prog = &mut out[t];
            for (u, seq) in found.drain(..) {
                let count = seq + 1;
                let have = kept[t].entry(u).or_insert(0);
                if count > *have {
                    *have = count;
                    prog.deps.push(Dep { thread: u, count });
                }
            }
            prog.starts[i + 1] = prog.deps.len() as u32;
        } else {
            let file = out[t].files[i];
            ended(trace, &mut seen, &r, file, e.thread, e.seq);
        }
    }
    Program { threads: out }
}

/// The file `r` touches, as the timeline stands at its start.
fn file_of(trace: &Trace, seen: &Seen, r: &Record) -> Option<FileId> {
    match r.op? {
        OpCode::Rename | OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir => {
            let path = u32::try_from(r.arg).ok()?;
            seen.by_path.get(&path).copied().or_else(|| {
                // A directory made during the trace is found by its entry's path.
                (trace
                    .files
                    .iter()
                    .position(|f| f.path == path && f.kind == FileKind::Dir))
                .map(|f| f as FileId)
            })
        }
        _ => handle_file(trace, r),
    }
}

/// What call `r` of `thread` on `file` waits for, as (thread, seq) pairs, into `found`.
fn waits(
    seen: &Seen,
    r: &Record,
    (file, syncs): (Option<FileId>, SyncRule),
    thread: ThreadId,
    found: &mut Vec<(ThreadId, u32)>,
) {
    let others = |map: &HashMap<FileId, PerThread>, f: FileId, found: &mut Vec<(ThreadId, u32)>| {
        let list = map.get(&f).map_or(&[][..], |l| l.as_slice());
        found.extend(list.iter().filter(|(u, _)| *u != thread));
    };
    let Some(op) = r.op else { return };
    for path in paths_of(r).into_iter().flatten() {
        if let Some(&(u, s)) = seen.path_changed.get(&path) {
            if u != thread {
                found.push((u, s));
            }
        }
        if changes_paths(r) {
            let list = seen.path_named.get(&path).map_or(&[][..], |l| l.as_slice());
            found.extend(list.iter().filter(|(u, _)| *u != thread));
        }
    }
    if op == OpCode::Syncfs {
        found.extend(
            (seen.last_write_any.iter()).filter_map(|(&u, &s)| (u != thread).then_some((u, s))),
        );
    }
    let Some(f) = file else { return };
    if let Some(&(u, s)) = seen.named.get(&f) {
        if u != thread {
            found.push((u, s));
        }
    }
    match op {
        OpCode::Fsync | OpCode::Fdatasync => {
            others(&seen.last_write, f, found);
            if syncs == SyncRule::Each {
                others(&seen.last_sync, f, found);
            }
        }
        OpCode::SyncFileRange => others(&seen.last_write, f, found),
        OpCode::Read if r.len > 0 => {
            for b in blocks(r.offset, r.len) {
                if let Some(&(u, s)) = seen.block.get(&(f, b)) {
                    if u != thread {
                        found.push((u, s));
                    }
                }
            }
        }
        OpCode::Rename | OpCode::Unlink | OpCode::Rmdir => {
            others(&seen.last_op, f, found);
        }
        OpCode::Lseek if probes_size(r) => others(&seen.last_resize, f, found),
        OpCode::Write
            if r.offset.saturating_add(r.len) > seen.extent.get(&f).copied().unwrap_or(0) =>
        {
            others(&seen.size_probe, f, found);
        }
        _ => {}
    }
}

/// Records the end of call `seq` of `thread`.
fn ended(
    trace: &Trace,
    seen: &mut Seen,
    r: &Record,
    file: Option<FileId>,
    thread: ThreadId,
    seq: u32,
) {
    let Some(op) = r.op else { return };
    let ok = r.result >= 0;
    for path in paths_of(r).into_iter().flatten() {
        set(seen.path_named.entry(path).or_default(), thread, seq);
        if ok && changes_paths(r) {
            seen.path_changed.insert(path, (thread, seq));
        }
    }
    if let Some(f) = file {
        set(seen.last_op.entry(f).or_default(), thread, seq);
        match op {
            OpCode::Lseek if probes_size(r) => {
                set(seen.size_probe.entry(f).or_default(), thread, seq)
            }
            OpCode::Fsync | OpCode::Fdatasync if ok => {
                set(seen.last_sync.entry(f).or_default(), thread, seq)
            }
            OpCode::Ftruncate | OpCode::Fallocate if ok => {
                set(seen.last_write.entry(f).or_default(), thread, seq);
                set(seen.last_resize.entry(f).or_default(), thread, seq);
                let end = match op {
                    OpCode::Ftruncate => r.len,
                    _ => r.offset.saturating_add(r.len),
                };
                let extent = seen.extent.entry(f).or_insert(0);
                *extent = if op == OpCode::Ftruncate {
                    end
                } else {
                    (*extent).max(end)
                };
            }
            OpCode::Write if ok && r.len > 0 => {
                let extent = seen.extent.entry(f).or_insert(0);
                let end = r.offset.saturating_add(r.len);
                if end > *extent {
                    *extent = end;
                    set(seen.last_resize.entry(f).or_default(), thread, seq);
                }
                set(seen.last_write.entry(f).or_default(), thread, seq);
                seen.last_write_any.insert(thread, seq);
                for b in blocks(r.offset, r.len) {
                    seen.block.insert((f, b), (thread, seq));
                }
            }
            OpCode::Open | OpCode::Mkdir if ok => {
                let made = seen
                    .created
                    .get_mut(f as usize)
                    .is_some_and(|c| !std::mem::replace(c, true));
                if made {
                    seen.named.insert(f, (thread, seq));
                    if let Some(entry) = trace.files.get(f as usize) {
                        seen.by_path.insert(entry.path, f);
                    }
                }
            }
            OpCode::Rename if ok => {
                seen.named.insert(f, (thread, seq));
                if let (Ok(from), Ok(to)) = (u32::try_from(r.arg), u32::try_from(r.arg2)) {
                    seen.by_path.remove(&from);
                    // A file it replaced is gone: its later calls come after the rename.
                    if let Some(replaced) = seen.by_path.insert(to, f).filter(|&g| g != f) {
                        seen.named.insert(replaced, (thread, seq));
                    }
                }
            }
            OpCode::Unlink | OpCode::Rmdir if ok => {
                if let Ok(path) = u32::try_from(r.arg) {
                    seen.by_path.remove(&path);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
