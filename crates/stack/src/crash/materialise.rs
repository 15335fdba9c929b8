//! Turning a crash state into image files: a copy of each image's durable part (the base with
//! every change up to its last flush applied) with the persisted writes applied on top.
//!
//! The durable part is kept in a working copy per image that only moves forward through the
//! log, so states taken in order of their crash points (or of their flushes) read the log once;
//! a state behind the working copy rebuilds it from the base. Each state costs one copy of
//! each image (reflinked where the file system allows, else sparse) and its pending writes.

use super::{CrashState, LogIndex, Part};
use crate::error::StackError;
use crate::writelog::{copy_image, Op};
use rustix::fs::FallocateFlags;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What the images held when logging began.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    /// Nothing: fresh sparse images of the sizes the log's header gives (a recorder started
    /// before mkfs).
    Zeros,
    /// Copies in this directory, named as the log names the images (what
    /// [`crate::writelog::Recorder::checkpoint`] makes, or copies taken before the recorder
    /// started).
    Dir(PathBuf),
}

/// Makes crash states of one log into image files.
pub struct Materialiser<'a> {
    index: &'a LogIndex,
    log: File,
    base: Base,
    scratch: PathBuf,
    /// Each image's changes, as record numbers in order.
    changes: Vec<Vec<u64>>,
    /// How far each working copy is: the last record applied, `None` for the base itself.
    applied: Vec<Option<u64>>,
    buf: Vec<u8>,
}

impl<'a> Materialiser<'a> {
    /// Prepares working copies of the base in `scratch` (an existing directory the caller
    /// owns; the copies are removed on drop).
    pub fn new(index: &'a LogIndex, base: Base, scratch: &Path) -> Result<Self, StackError> {
        let log = File::open(&index.path).map_err(StackError::io("opening", &index.path))?;
        let mut changes = vec![Vec::new(); index.images.len()];
        for e in index.entries.iter().filter(|e| e.op != Op::Flush) {
            changes[e.image as usize].push(e.seq);
        }
        let mut me = Materialiser {
            index,
            log,
            base,
            scratch: scratch.to_path_buf(),
            changes,
            applied: vec![None; index.images.len()],
            buf: Vec::new(),
        };
        for image in 0..index.images.len() {
            me.reset(image)?;
        }
        Ok(me)
    }

    /// Writes `state`'s images into `dir` (an existing directory), named as the log names
    /// them; returns their paths in the log's order.
    pub fn materialise(
        &mut self,
        state: &CrashState,
        dir: &Path,
    ) -> Result<Vec<PathBuf>, StackError> {
        let mut made = Vec::new();
        for (image, wanted) in state.images.iter().enumerate() {
            self.advance(image, wanted.durable_through)?;
            let to = dir.join(&self.index.images[image].name);
            copy_image(&self.working(image), &to)?;
            let file = OpenOptions::new()
                .write(true)
                .open(&to)
                .map_err(StackError::io("opening the crash state", &to))?;
            for p in &wanted.persisted {
                match &p.torn {
                    None => self.apply(&file, &to, p.seq, None)?,
                    Some(parts) => {
                        for &part in parts {
                            self.apply(&file, &to, p.seq, Some(part))?;
                        }
                    }
                }
            }
            made.push(to);
        }
        Ok(made)
    }

    fn working(&self, image: usize) -> PathBuf {
        let name = &self.index.images[image].name;
        self.scratch.join(format!("durable-{name}"))
    }

    /// Starts image `image`'s working copy again from the base.
    fn reset(&mut self, image: usize) -> Result<(), StackError> {
        let path = self.working(image);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(StackError::io("removing", &path)(e));
            }
            _ => {}
        }
        match &self.base {
            Base::Dir(dir) => {
                copy_image(&dir.join(&self.index.images[image].name), &path)?;
            }
            Base::Zeros => {
                let file = File::create(&path).map_err(StackError::io("creating", &path))?;
                file.set_len(self.index.images[image].size_bytes)
                    .map_err(StackError::io("sizing", &path))?;
            }
        }
        self.applied[image] = None;
        Ok(())
    }

    /// Applies image `image`'s changes up to record `through` to its working copy.
    fn advance(&mut self, image: usize, through: Option<u64>) -> Result<(), StackError> {
        if through < self.applied[image] {
            self.reset(image)?;
        }
        let Some(through) = through else {
            return Ok(());
        };
        let path = self.working(image);
        let file = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(StackError::io("opening", &path))?;
        let changes = std::mem::take(&mut self.changes[image]);
        let done = self.applied[image].map_or(0, |a| changes.partition_point(|&s| s <= a));
        let upto = changes.partition_point(|&s| s <= through);
        let result = changes[done..upto]
            .iter()
            .try_for_each(|&seq| self.apply(&file, &path, seq, None));
        self.changes[image] = changes;
        result?;
        self.applied[image] = Some(through);
        Ok(())
    }

    /// Applies record `seq` (or `part` of it) to `file`.
    fn apply(
        &mut self,
        file: &File,
        path: &Path,
        seq: u64,
        part: Option<Part>,
    ) -> Result<(), StackError> {
        let entry = self.index.entries[seq as usize];
        let (offset, len) = LogIndex::range(&entry).unwrap_or((0, 0));
        let Part { at, len } = part.unwrap_or(Part { at: 0, len });
        match entry.op {
            Op::Write { data_at, .. } => {
                self.buf.resize(len as usize, 0);
                self.log
                    .read_exact_at(&mut self.buf, data_at + at)
                    .map_err(StackError::io("reading the write log", &self.index.path))?;
                file.write_all_at(&self.buf, offset + at)
                    .map_err(StackError::io("writing the crash state", path))?;
            }
            Op::Zero { .. } => {
                let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
                rustix::fs::fallocate(file, flags, offset + at, len)
                    .map_err(|e| StackError::io("zeroing a range of", path)(e.into()))?;
            }
            Op::Flush => {}
        }
        Ok(())
    }
}

impl Drop for Materialiser<'_> {
    fn drop(&mut self) {
        for image in 0..self.index.images.len() {
            let _ = std::fs::remove_file(self.working(image));
        }
    }
}
