//! Tree filesets on a directory: every directory of the plan's [`Tree`], and the files that
//! exist before the run, of their planned sizes, filled with bytes that depend only on the
//! seed. A run changes a tree (creates, deletes, appends, renames); reusing it brings it back
//! to the plan: missing files rewritten, wrong sizes rewritten, files the plan says do not exist
//! removed.

use super::{io_err, LayoutError};
use crate::buffers::fill;
use bakeoff_core::fileop::Tree;
use bakeoff_core::plan::Plan;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Largest write while laying out a file.
const CHUNK: usize = 1 << 20;

/// The root directory of tree fileset `name` in `dir`.
pub fn tree_root(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("bakeoff-{name}"))
}

/// The trees of `plan`, per fileset (`None` for a flat fileset): what the layout writes and
/// every worker starts from.
pub fn plan_trees(plan: &Plan) -> Vec<Option<Tree>> {
    plan.filesets
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let spec = f.tree.as_ref()?;
            Some(Tree::of(
                spec,
                f.nrfiles,
                f.file_size,
                tree_seed(plan.seed, i),
            ))
        })
        .collect()
}

/// The seed of fileset `i`'s tree (sizes and which files exist).
fn tree_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x94D0_49BB_1331_11EB)
}

/// The seed of the contents of file `file` of fileset `fileset`.
fn content_seed(seed: u64, fileset: usize, file: u32) -> u64 {
    tree_seed(seed, fileset) ^ u64::from(file).wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// Bytes of the files that exist before the run, over every tree.
pub(super) fn initial_bytes(trees: &[Option<Tree>]) -> u64 {
    trees.iter().flatten().map(Tree::initial_bytes).sum()
}

/// What laying out or repairing trees needs.
pub(super) struct TreeJob<'a> {
    pub plan: &'a Plan,
    pub dir: &'a Path,
    pub trees: &'a [Option<Tree>],
    /// Called with (bytes done, total): false stops the layout (an interrupt).
    pub progress: &'a dyn Fn(u64, u64) -> bool,
    /// Bytes of the layout done before the trees, and of the whole layout.
    pub offset: u64,
    pub total: u64,
}

impl TreeJob<'_> {
    /// Writes every tree from scratch (its root must not exist); returns the bytes written.
    pub fn write(&self) -> Result<u64, LayoutError> {
        self.each_file(&mut |path, exists, _| Ok(exists.then_some(path)))
    }

    /// Brings every tree back to its planned state; returns the bytes rewritten.
    pub fn repair(&self) -> Result<u64, LayoutError> {
        self.each_file(&mut |path, exists, size| {
            let found = std::fs::symlink_metadata(&path).ok().map(|m| m.len());
            match (exists, found) {
                (true, Some(len)) if len == size => Ok(None),
                (true, _) => Ok(Some(path)),
                (false, Some(_)) => {
                    std::fs::remove_file(&path).map_err(io_err("removing", &path))?;
                    Ok(None)
                }
                (false, None) => Ok(None),
            }
        })
    }

    /// Creates every directory, then asks `decide(path, planned to exist, planned size)`
    /// which files to (re)write, writes them, syncs the file system and drops them from the
    /// page cache so the run starts cold.
    fn each_file(
        &self,
        decide: &mut dyn FnMut(PathBuf, bool, u64) -> Result<Option<PathBuf>, LayoutError>,
    ) -> Result<u64, LayoutError> {
        let mut buf = vec![0u8; CHUNK];
        let mut written = 0u64;
        let mut touched = Vec::new();
        for (fi, tree) in self.trees.iter().enumerate() {
            let Some(tree) = tree else { continue };
            let root = tree_root(self.dir, &self.plan.filesets[fi].name);
            for d in &tree.dirs {
                let path = root.join(d);
                std::fs::create_dir_all(&path).map_err(io_err("creating directory", &path))?;
            }
            for (i, file) in tree.files.iter().enumerate() {
                let path = root.join(tree.file_path(i as u32));
                let Some(path) = decide(path, file.exists, file.size)? else {
                    continue;
                };
                let seed = content_seed(self.plan.seed, fi, i as u32);
                write_file(&path, file.size, seed, self.plan.compress_pct, &mut buf)?;
                written += file.size;
                touched.push(path);
                if !(self.progress)(self.offset + written, self.total) {
                    return Err(LayoutError::Interrupted);
                }
            }
        }
        sync_and_drop(self.dir, &touched)?;
        Ok(written)
    }
}

/// Writes `size` seeded bytes to `path`, replacing what was there.
fn write_file(
    path: &Path,
    size: u64,
    seed: u64,
    compress_pct: u8,
    buf: &mut [u8],
) -> Result<(), LayoutError> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(io_err("creating", path))?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut left = size;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        fill(&mut buf[..n], &mut rng, compress_pct);
        f.write_all(&buf[..n]).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOSPC) {
                LayoutError::NoSpace {
                    path: path.to_path_buf(),
                    needed: size,
                    available: size - left,
                }
            } else {
                io_err("writing", path)(e)
            }
        })?;
        left -= n as u64;
    }
    Ok(())
}

/// One `syncfs` for the whole file system (thousands of small files: far cheaper than an fsync
/// each), then each written file dropped from the page cache.
fn sync_and_drop(dir: &Path, files: &[PathBuf]) -> Result<(), LayoutError> {
    if files.is_empty() {
        return Ok(());
    }
    let d = File::open(dir).map_err(io_err("opening", dir))?;
    rustix::fs::syncfs(&d).map_err(|e| io_err("syncing the file system of", dir)(e.into()))?;
    for path in files {
        if let Ok(f) = File::open(path) {
            let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
        }
    }
    Ok(())
}
