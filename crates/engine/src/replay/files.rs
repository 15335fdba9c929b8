//! A replay thread's own descriptors: one per handle it uses, opened with the handle's
//! captured flags (`O_DIRECT`, `O_DSYNC`, `O_SYNC` kept; `O_APPEND` dropped, since every call is
//! replayed at its captured offset), at the captured open or, for a handle the thread found
//! open, before the run starts (a file that existed then) or at first use.

use super::state::Replay;
use bakeoff_core::plan::FlagRule;
use bakeoff_core::trace::{FileId, FileKind, HandleId, OpCode};
use rustix::fs::{Mode, OFlags};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;

/// Flags a replay keeps from the captured ones at every open.
const KEPT: u32 = (libc::O_DIRECT | libc::O_DSYNC | libc::O_SYNC) as u32;
/// Flags kept at a captured open only: they change the file, as the capture's open did.
pub const AT_OPEN: u32 = (libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC) as u32;

/// The open flags of handle `h`: at a captured open (`captured` holds that call's creation
/// flags, `O_CREAT`, `O_EXCL`, `O_TRUNC`), or to use it (`None`).
pub fn open_flags(state: &Replay, handle: HandleId, captured: Option<u64>) -> OFlags {
    let trace = &state.loaded.trace;
    let Some(h) = trace.handles.get(handle as usize) else {
        return OFlags::RDWR | OFlags::CLOEXEC;
    };
    let mut bits = h.flags & KEPT;
    if let Some(creation) = captured {
        bits |= (h.flags | creation as u32) & AT_OPEN;
    }
    if state.flags == FlagRule::NoDirect {
        bits &= !(libc::O_DIRECT as u32);
    }
    let is_dir = (trace.files.get(h.file as usize)).is_some_and(|f| f.kind == FileKind::Dir);
    let access = if is_dir {
        OFlags::RDONLY | OFlags::DIRECTORY
    } else {
        OFlags::RDWR
    };
    OFlags::from_bits_retain(bits) | access | OFlags::CLOEXEC
}

/// Opens `path` with `flags`.
pub fn open(path: &Path, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(path, flags, Mode::from_raw_mode(0o644))
}

/// One thread's descriptors, by handle (shared with its asynchronous calls' helpers).
pub struct Fds {
    fds: Vec<Option<Arc<OwnedFd>>>,
}

impl Fds {
    /// No descriptor open, for a trace of `handles` handles.
    pub fn new(handles: usize) -> Fds {
        Fds {
            fds: (0..handles).map(|_| None).collect(),
        }
    }

    /// The descriptor of `handle`, opened now at the file's current path if the thread has
    /// none.
    pub fn get(&mut self, state: &Replay, handle: HandleId) -> rustix::io::Result<&Arc<OwnedFd>> {
        let slot = (self.fds.get_mut(handle as usize)).ok_or(rustix::io::Errno::BADF)?;
        if slot.is_none() {
            let file = state.loaded.trace.handles[handle as usize].file;
            let path = state.current_path(file);
            *slot = Some(Arc::new(open(&path, open_flags(state, handle, None))?));
        }
        Ok(slot.as_ref().expect("opened above"))
    }

    /// Sets the descriptor of `handle` (a captured open), closing any it had.
    pub fn set(&mut self, handle: HandleId, fd: OwnedFd) {
        if let Some(slot) = self.fds.get_mut(handle as usize) {
            *slot = Some(Arc::new(fd));
        }
    }

    /// Closes the descriptor of `handle`; false if the thread had none.
    pub fn close(&mut self, handle: HandleId) -> bool {
        (self.fds.get_mut(handle as usize)).is_some_and(|slot| slot.take().is_some())
    }

    /// Opens, before the run starts, each handle `ops` use that the thread did not open itself
    /// first, if its file existed at the start.
    pub fn open_found(&mut self, state: &Replay, thread: usize) -> Result<(), (FileId, String)> {
        let trace = &state.loaded.trace;
        let mut seen = vec![false; self.fds.len()];
        for r in &state.loaded.trace.ops[thread] {
            let Some(h) = r.handle.filter(|h| (*h as usize) < seen.len()) else {
                continue;
            };
            if std::mem::replace(&mut seen[h as usize], true) || r.op == Some(OpCode::Open) {
                continue;
            }
            let file = trace.handles[h as usize].file;
            let exists = (trace.files.get(file as usize)).is_some_and(|f| f.start_size.is_some());
            if exists {
                self.get(state, h).map_err(|e| (file, e.to_string()))?;
            }
        }
        Ok(())
    }
}
