//! From the kernel's records to the trace: which thread, which file, which handle and which
//! path each call names, with the tables sent to the sink before the first record that uses
//! them. Calls on files outside the roots (same file system, another directory) end here.

use super::anon::Anonymizer;
use super::event::{RawEvent, IO_REAPED, IO_SUBMIT, URING_DONE, URING_SUBMIT};
use super::order::Order;
use super::paths::{Inode, Loc, PathIndex};
use bakeoff_core::trace::{
    FileEntry, FileId, FileKind, Footer, HandleEntry, HandleId, Mark, OpCode, PathEntry, PathId,
    Record, ThreadEntry, ThreadId, TraceSink,
};
use std::collections::HashMap;

/// The name, among the calls not captured, of calls on files the capture could not place.
pub const UNPLACED: &str = "calls on other files of the traced file systems (outside --under, or opened while calls were lost)";

/// The flags of an open that change the file (`O_CREAT`, `O_EXCL`, `O_TRUNC`): kept in the
/// record, since the file's own flags drop them.
const CREATION_FLAGS: u32 = (libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC) as u32;
/// `O_LARGEFILE`: the kernel sets it on every 64-bit open; it says nothing about the file.
const O_LARGEFILE: u32 = 0o100000;

/// The trace being built.
pub struct Tables {
    sink: Box<dyn TraceSink + Send>,
    /// The files under the roots.
    pub index: PathIndex,
    /// Monotonic time the capture started at.
    t0: u64,
    anon: Option<Anonymizer>,
    paths: HashMap<Loc, PathId>,
    files: HashMap<Inode, FileId>,
    file_list: Vec<(Inode, FileId)>,
    handles: HashMap<(FileId, u32), HandleId>,
    threads: HashMap<(u32, u32), ThreadId>,
    /// Records sent.
    pub ops: u64,
    uncovered: std::collections::BTreeMap<&'static str, u64>,
    /// Asynchronous calls not yet finished, by [`async_tag`].
    pending: HashMap<(u32, u64), (ThreadId, Record)>,
    /// Asynchronous calls dropped because their end was never seen.
    unreaped: u64,
    order: Order,
    error: Option<String>,
}

impl Tables {
    /// Tables that send to `sink`, with times relative to `t0`.
    pub fn new(
        sink: Box<dyn TraceSink + Send>,
        index: PathIndex,
        t0: u64,
        anonymize: bool,
    ) -> Tables {
        Tables {
            sink,
            index,
            t0,
            anon: anonymize.then(Anonymizer::default),
            paths: HashMap::new(),
            files: HashMap::new(),
            file_list: Vec::new(),
            handles: HashMap::new(),
            threads: HashMap::new(),
            ops: 0,
            uncovered: Default::default(),
            pending: HashMap::new(),
            unreaped: 0,
            order: Order::default(),
            error: None,
        }
    }

    fn io<T>(&mut self, r: std::io::Result<T>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.error
                    .get_or_insert_with(|| format!("writing the trace: {e}"));
                None
            }
        }
    }

    fn path_id(&mut self, loc: &Loc, is_dir: bool) -> Option<PathId> {
        if let Some(id) = self.paths.get(loc) {
            return Some(*id);
        }
        let path = match &mut self.anon {
            Some(a) => a.path(&loc.rel, is_dir),
            None => loc.rel.clone(),
        };
        let r = self.sink.path(PathEntry {
            root: loc.root,
            path,
        });
        let id = self.io(r)?;
        self.paths.insert(loc.clone(), id);
        Some(id)
    }

    fn file_id(&mut self, inode: Inode) -> Option<FileId> {
        if let Some(id) = self.files.get(&inode) {
            return Some(*id);
        }
        let known = self.index.get(inode)?.clone();
        let path = self.path_id(&known.loc, known.is_dir)?;
        let kind = if known.is_dir {
            FileKind::Dir
        } else {
            FileKind::File
        };
        let entry = FileEntry {
            path,
            kind,
            start_size: known.start_size,
            end_size: None,
        };
        let r = self.sink.file(entry);
        let id = self.io(r)?;
        self.files.insert(inode, id);
        self.file_list.push((inode, id));
        Some(id)
    }

    fn handle_id(&mut self, file: FileId, flags: u32, implicit: bool) -> Option<HandleId> {
        let flags = flags & !O_LARGEFILE;
        if let Some(id) = self.handles.get(&(file, flags)) {
            return Some(*id);
        }
        let r = self.sink.handle(HandleEntry {
            file,
            flags,
            implicit,
        });
        let id = self.io(r)?;
        self.handles.insert((file, flags), id);
        Some(id)
    }

    fn thread_id(&mut self, e: &RawEvent) -> Option<ThreadId> {
        if let Some(id) = self.threads.get(&(e.tid, e.tgid)) {
            return Some(*id);
        }
        let entry = ThreadEntry {
            tid: e.tid,
            tgid: e.tgid,
            comm: e.comm.clone(),
        };
        let r = self.sink.thread(entry);
        let id = self.io(r)?;
        self.threads.insert((e.tid, e.tgid), id);
        Some(id)
    }

    /// Where a path of the event names.
    fn resolve(&self, dev: u32, ino: u64, path: Option<&str>) -> Option<Loc> {
        let path = path?;
        let base = (!path.starts_with('/')).then_some((dev, ino));
        self.index.resolve(base, path)
    }

    /// Sends the record of one finished call, if it is on a traced file.
    pub fn event(&mut self, e: &RawEvent) {
        if let Some(op) = async_op(e) {
            return self.async_submitted(e, op);
        }
        if e.code == URING_DONE || IO_REAPED.contains(&e.code) {
            return self.async_done(e);
        }
        let Some(op) = e.op() else {
            if let Some(name) = super::uncovered::counted(&self.index, e) {
                *self.uncovered.entry(name).or_default() += 1;
            }
            return;
        };
        let mut r = Record {
            op: Some(op),
            start_ns: e.start.saturating_sub(self.t0),
            dur_ns: e.dur,
            offset: e.offset,
            len: e.len,
            result: e.ret,
            arg: u64::from(e.arg),
            cpu_ns: e.cpu_ns,
            ..Record::default()
        };
        let kept = match op {
            OpCode::Open => self.open(e, &mut r),
            OpCode::Rename => self.rename(e, &mut r),
            OpCode::Unlink | OpCode::Mkdir | OpCode::Rmdir => self.namespace(e, op, &mut r),
            _ => self.on_handle(e, op, &mut r),
        };
        if kept.is_none() {
            return;
        }
        let Some(thread) = self.thread_id(e) else {
            return;
        };
        let ready = self.order.push(thread, r);
        self.send(thread, &ready);
    }

    fn send(&mut self, thread: ThreadId, records: &[Record]) {
        for r in records {
            let sent = self.sink.op(thread, r);
            if self.io(sent).is_some() {
                self.ops += 1;
            }
        }
    }

    /// An asynchronous call submitted (an AIO iocb, an io_uring request): kept until its
    /// completion. Its file is known now for a descriptor (`dev` set: the kernel filtered
    /// it), or at completion for an io_uring registered file.
    fn async_submitted(&mut self, e: &RawEvent, op: OpCode) {
        let handle = if e.dev != 0 {
            let Some(file) = self.file_id((e.dev, e.ino)) else {
                return;
            };
            self.handle_id(file, e.flags, true)
        } else {
            None
        };
        let Some(thread) = self.thread_id(e) else {
            return;
        };
        let sync = matches!(op, OpCode::Fsync | OpCode::Fdatasync);
        let r = Record {
            op: Some(op),
            is_async: true,
            start_ns: e.start.saturating_sub(self.t0),
            handle,
            offset: if sync { 0 } else { e.offset },
            len: if sync { 0 } else { e.len },
            cpu_ns: e.cpu_ns,
            ..Record::default()
        };
        self.order.submitted(thread, r.start_ns);
        if let Some((t, old)) = self.pending.insert(async_tag(e), (thread, r)) {
            // Its tag is reused, so its end was lost (a full ring, more events than the program
            // reads): it is dropped, counted, and no longer holds its thread's later calls.
            self.unreaped += 1;
            let ready = self.order.withdrawn(t, old.start_ns);
            self.send(t, &ready);
        }
    }

    /// An asynchronous call's end (io_uring's completion, AIO's reap, which stands in for
    /// it): its submission's record is finished and sent, or withdrawn when its file turns
    /// out not to be traced.
    fn async_done(&mut self, e: &RawEvent) {
        let Some((thread, mut r)) = self.pending.remove(&async_tag(e)) else {
            return;
        };
        if r.handle.is_none() {
            let traced = self.file_id((e.dev, e.ino));
            r.handle = traced.and_then(|file| self.handle_id(file, e.flags, true));
        }
        r.dur_ns = e.start.saturating_sub(self.t0).saturating_sub(r.start_ns);
        r.result = e.ret;
        let ready = if r.handle.is_some() {
            self.order.reaped(thread, r)
        } else {
            self.order.withdrawn(thread, r.start_ns)
        };
        self.send(thread, &ready);
    }

    fn open(&mut self, e: &RawEvent, r: &mut Record) -> Option<()> {
        let named = self.resolve(e.base_dev, e.base_ino, e.path.as_deref());
        if e.ret >= 0 {
            let inode = (e.dev, e.ino);
            if self.index.get(inode).is_none() {
                // A new file (or one moved in): an inode number seen before was freed and
                // reused, by this file or, when it is outside the roots, by another one.
                self.files.remove(&inode);
                self.index.insert(inode, named?, false, None);
            }
            let file = self.file_id(inode)?;
            r.handle = Some(self.handle_id(file, e.flags, false)?);
            let known = self.index.get(inode)?.clone();
            r.arg = u64::from(self.path_id(&known.loc, known.is_dir)?);
        } else {
            r.arg = u64::from(self.path_id(&named?, false)?);
        }
        // The file's f_flags (the handle's) no longer hold how it was opened: the call's do.
        r.arg2 = u64::from(e.arg & CREATION_FLAGS);
        r.offset = 0;
        r.len = 0;
        Some(())
    }

    fn rename(&mut self, e: &RawEvent, r: &mut Record) -> Option<()> {
        let from = self.resolve(e.base_dev, e.base_ino, e.path.as_deref());
        let to = self.resolve(e.base2_dev, e.base2_ino, e.path2.as_deref());
        if e.ret == 0 {
            match (&from, &to) {
                (Some(f), Some(t)) => self.index.rename(f, t),
                (Some(f), None) => self.index.remove(f),
                (None, Some(t)) => self.index_new(t),
                (None, None) => {}
            }
        }
        let (from, to) = (from?, to?);
        let is_dir = (self.index.absolute(&to)).is_some_and(|p| p.is_dir());
        r.arg = u64::from(self.path_id(&from, is_dir)?);
        r.arg2 = u64::from(self.path_id(&to, is_dir)?);
        (r.offset, r.len) = (0, 0);
        Some(())
    }

    fn namespace(&mut self, e: &RawEvent, op: OpCode, r: &mut Record) -> Option<()> {
        let loc = self.resolve(e.base_dev, e.base_ino, e.path.as_deref())?;
        if e.ret == 0 {
            match op {
                OpCode::Mkdir => {
                    // A new inode: a number seen before was freed and is reused by this one.
                    self.index_new(&loc);
                    if let Some(inode) = self.index.inode_at(&loc) {
                        self.files.remove(&inode);
                    }
                }
                _ => self.index.remove(&loc),
            }
        }
        r.arg = u64::from(self.path_id(&loc, op != OpCode::Unlink)?);
        (r.offset, r.len) = (0, 0);
        Some(())
    }

    /// Indexes what is now at `loc` (a directory made, a file moved in from outside).
    fn index_new(&mut self, loc: &Loc) {
        let Some(path) = self.index.absolute(loc) else {
            return;
        };
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return;
        };
        let dev = self.index.root_dev(loc.root);
        let ino = std::os::unix::fs::MetadataExt::ino(&meta);
        self.index
            .insert((dev, ino), loc.clone(), meta.is_dir(), None);
    }

    fn on_handle(&mut self, e: &RawEvent, op: OpCode, r: &mut Record) -> Option<()> {
        let Some(file) = self.file_id((e.dev, e.ino)) else {
            // A file of a traced file system the index cannot place: outside --under, or a
            // file whose open was lost. Either way named, never silently gone.
            *self.uncovered.entry(UNPLACED).or_default() += 1;
            return None;
        };
        r.handle = Some(self.handle_id(file, e.flags, true)?);
        if matches!(
            op,
            OpCode::Close | OpCode::Fsync | OpCode::Fdatasync | OpCode::Syncfs
        ) {
            (r.offset, r.len) = (0, 0);
        }
        Some(())
    }

    /// A named instant, `t` in monotonic nanoseconds.
    pub fn mark(&mut self, t: u64, name: &str) {
        let mark = Mark {
            t_ns: t.saturating_sub(self.t0),
            name: name.to_string(),
        };
        let r = self.sink.mark(mark);
        self.io(r);
    }

    /// Calls on traced files that a replay does not make, by name.
    pub fn uncovered(&self) -> Vec<(String, u64)> {
        (self.uncovered.iter())
            .map(|(k, v)| (k.to_string(), *v))
            .collect()
    }

    /// Sends the footer (with each file's size now) and says what failed on the way.
    pub fn finish(mut self, mut footer: Footer) -> Result<(), String> {
        footer.lost.unfinished_at_end += self.pending.len() as u64 + self.unreaped;
        for (thread, records) in self.order.drain() {
            self.send(thread, &records);
        }
        footer.ops = self.ops;
        footer.uncovered = self.uncovered();
        // An inode number freed and given to a new file is that file's now: only the last
        // file seen on an inode can have a size at the end (the earlier ones are gone).
        footer.end_sizes = (self.file_list.iter())
            .map(|(inode, id)| {
                let current = self.files.get(inode) == Some(id);
                (*id, current.then(|| self.size_now(*inode)).flatten())
            })
            .collect();
        let r = self.sink.finish(footer);
        self.io(r);
        self.error.map_or(Ok(()), Err)
    }

    fn size_now(&self, inode: Inode) -> Option<u64> {
        let path = self.index.absolute(&self.index.get(inode)?.loc)?;
        let meta = std::fs::symlink_metadata(path).ok()?;
        (std::os::unix::fs::MetadataExt::ino(&meta) == inode.1).then_some(meta.len())
    }
}

/// What pairs an asynchronous call's submission with its end: an io_uring request's kernel
/// address is unique on the machine, but an AIO iocb's is a user address, unique only in its
/// process (forked processes have the same layout), so the process is part of the tag (the
/// reaper is of the submitter's process: a context belongs to one address space).
fn async_tag(e: &RawEvent) -> (u32, u64) {
    if e.code == IO_SUBMIT || IO_REAPED.contains(&e.code) {
        (e.tgid, e.base_ino)
    } else {
        (0, e.base_ino)
    }
}

/// What a submission record asks for: an AIO iocb's opcode (0 PREAD, 1 PWRITE, 2 FSYNC,
/// 3 FDSYNC) or an io_uring request's kind (1 read, 2 write, 3 fsync, 4 fdatasync).
fn async_op(e: &RawEvent) -> Option<OpCode> {
    let kind = match e.code {
        IO_SUBMIT => e.arg + 1,
        URING_SUBMIT => e.arg,
        _ => return None,
    };
    Some(match kind {
        1 => OpCode::Read,
        2 => OpCode::Write,
        3 => OpCode::Fsync,
        _ => OpCode::Fdatasync,
    })
}

#[cfg(test)]
mod tests;
