//! Lays out the dataset: the data files (or device regions) filled with the same pseudo-random
//! bytes for the same seed on every target, written in parallel 1 MiB chunks, synced, and reused
//! when a directory already holds an identical layout (recorded in a manifest). Directory
//! trees for file operations are laid out by [`tree`], each client's copy by [`clients`].

mod clients;
mod flat;
mod replay;
mod tree;

pub use clients::client_dir;
pub use tree::{plan_trees, tree_root};

use bakeoff_core::fileop::TreeSpec;
use bakeoff_core::plan::{Algorithm, BlockGrid, Plan};
use flat::write_all;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes written per chunk.
const CHUNK: u64 = 1 << 20;
/// File name of the manifest in a target directory.
pub const MANIFEST: &str = ".bakeoff-dataset.json";

/// Where the data lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Files inside this directory.
    Directory(PathBuf),
    /// Regions of this block device.
    Device(PathBuf),
}

impl Target {
    /// The path given.
    pub fn path(&self) -> &Path {
        match self {
            Target::Directory(p) | Target::Device(p) => p,
        }
    }

    /// The directory, if the target is one.
    pub fn directory(&self) -> Option<&Path> {
        match self {
            Target::Directory(p) => Some(p),
            Target::Device(_) => None,
        }
    }
}

/// One data file, or one region of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// File or device path.
    pub path: PathBuf,
    /// Byte offset of the region inside `path` (0 for files).
    pub base: u64,
    /// Bytes.
    pub size: u64,
}

/// The laid-out dataset.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Regions per fileset, in plan order.
    pub filesets: Vec<Vec<Region>>,
    /// An identical existing layout was reused.
    pub reused: bool,
    /// Bytes written now.
    pub written_bytes: u64,
    /// Time spent writing and syncing.
    pub elapsed: Duration,
    /// With `clients=N`: each client's directory (its copy of the filesets), in client order.
    pub client_dirs: Vec<PathBuf>,
}

impl Dataset {
    /// A layout of `filesets` on one target that wrote `written_bytes` since `start`.
    fn one(
        filesets: Vec<Vec<Region>>,
        reused: bool,
        written_bytes: u64,
        start: Instant,
    ) -> Dataset {
        Dataset {
            filesets,
            reused,
            written_bytes,
            elapsed: start.elapsed(),
            client_dirs: Vec::new(),
        }
    }
}

/// Why the layout failed.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// Not enough free space.
    #[error("not enough space in {path}: the dataset needs {needed} bytes, {available} are available (lower size/data_size or free space)")]
    NoSpace {
        path: PathBuf,
        needed: u64,
        available: u64,
    },
    /// The device is smaller than the dataset.
    #[error("{path} holds {size} bytes, the dataset needs {needed} (lower size/data_size)")]
    DeviceTooSmall {
        path: PathBuf,
        needed: u64,
        size: u64,
    },
    /// Stopped by an interrupt; files written so far were removed.
    #[error("interrupted while laying out the dataset; the partial files were removed")]
    Interrupted,
    /// The plan needs a directory (a file system) and the target is a block device.
    #[error("{what} needs a directory target (a file system), and {path} is a block device (use a file-system stack or a directory)")]
    NeedsDirectory { what: String, path: PathBuf },
    /// The plan asks for something this layout cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// An I/O error.
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

pub(crate) fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> LayoutError + 'a {
    move |source| LayoutError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Manifest {
    schema_version: u32,
    seed: u64,
    compress_pct: u8,
    filesets: Vec<(String, u32, u64)>,
    /// The filesets that are directory trees, with their shape.
    #[serde(default)]
    trees: Vec<(String, TreeSpec)>,
    /// `verify=`: the blocks carry headers (such a layout is never reused, and a run without
    /// verify lays out anew rather than reuse it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    verify: Option<Algorithm>,
}

impl Manifest {
    fn of(plan: &Plan) -> Manifest {
        Manifest {
            schema_version: 1,
            seed: plan.seed,
            compress_pct: plan.compress_pct,
            filesets: plan
                .filesets
                .iter()
                .map(|f| (f.name.clone(), f.nrfiles, f.file_size))
                .collect(),
            trees: plan
                .filesets
                .iter()
                .filter_map(|f| Some((f.name.clone(), f.tree.clone()?)))
                .collect(),
            verify: plan.verify,
        }
    }
}

/// The regions the plan needs on `target` (no I/O). A tree fileset is one region: its root
/// directory (of size 0; its files are the tree's).
pub fn regions(plan: &Plan, target: &Target) -> Vec<Vec<Region>> {
    let mut base = 0u64;
    plan.filesets
        .iter()
        .map(|fs| {
            if fs.tree.is_some() {
                return vec![Region {
                    path: tree_root(target.path(), &fs.name),
                    base: 0,
                    size: 0,
                }];
            }
            (0..fs.nrfiles)
                .map(|i| match target {
                    Target::Directory(dir) => Region {
                        path: dir.join(format!("bakeoff-{}.{i}", fs.name)),
                        base: 0,
                        size: fs.file_size,
                    },
                    Target::Device(dev) => {
                        let r = Region {
                            path: dev.clone(),
                            base,
                            size: fs.file_size,
                        };
                        base += fs.file_size.div_ceil(CHUNK) * CHUNK;
                        r
                    }
                })
                .collect()
        })
        .collect()
}

/// Lays out the dataset, reporting progress as (bytes done, bytes total) from this thread;
/// `progress` returning false (an interrupt) stops the layout. With `clients=N`, every client
/// gets its own copy in its own directory.
pub fn lay_out(
    plan: &Plan,
    target: &Target,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<Dataset, LayoutError> {
    if plan.replay.is_some() {
        return replay::lay_out_replay(plan, target, progress);
    }
    if plan.clients > 0 {
        return clients::lay_out_clients(plan, target, progress);
    }
    if let Target::Directory(dir) = target {
        clients::remove_client_dirs(dir, 0);
    }
    lay_out_one(plan, target, progress)
}

/// Lays out one copy of the filesets of `plan` on `target`.
fn lay_out_one(
    plan: &Plan,
    target: &Target,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<Dataset, LayoutError> {
    let filesets = regions(plan, target);
    let (flat, grids) = flat_regions(plan, &filesets);
    let trees = plan_trees(plan);
    let flat_bytes: u64 = flat.iter().map(|r| r.size).sum();
    let needed = flat_bytes + tree::initial_bytes(&trees);
    let dir = match target {
        Target::Directory(dir) => dir,
        Target::Device(dev) => {
            if let Some(f) = plan.filesets.iter().find(|f| f.tree.is_some()) {
                return Err(LayoutError::NeedsDirectory {
                    what: format!("fileset '{}' (a directory tree for file steps)", f.name),
                    path: dev.clone(),
                });
            }
            return lay_out_device(plan, target, filesets, progress);
        }
    };
    let start = Instant::now();
    let tree_job = |offset: u64| tree::TreeJob {
        plan,
        dir,
        trees: &trees,
        progress,
        offset,
        total: needed,
    };
    // A verified layout is never reused: its blocks hold the generations of the run that
    // wrote them, which a new run's table does not know.
    if plan.verify.is_none() && reusable(plan, dir, &flat) {
        let repaired = tree_job(0).repair()?;
        return Ok(Dataset::one(filesets, true, repaired, start));
    }
    remove_old(dir);
    check_space(dir, needed)?;
    let written = write_all(plan, &flat, &grids, needed, progress)
        .and_then(|()| tree_job(flat_bytes).write());
    if let Err(e) = written {
        flat.iter()
            .for_each(|r| drop(std::fs::remove_file(&r.path)));
        trees
            .iter()
            .zip(&plan.filesets)
            .filter(|(t, _)| t.is_some())
            .for_each(|(_, f)| {
                drop(std::fs::remove_dir_all(tree_root(dir, &f.name)));
            });
        return Err(e);
    }
    let text = serde_json::to_string_pretty(&Manifest::of(plan)).expect("manifest serialises");
    let path = dir.join(MANIFEST);
    std::fs::write(&path, text).map_err(io_err("writing", &path))?;
    Ok(Dataset::one(filesets, false, needed, start))
}

/// The regions of the flat filesets (not trees), each with its fileset's verified blocks.
fn flat_regions<'a>(
    plan: &Plan,
    filesets: &'a [Vec<Region>],
) -> (Vec<&'a Region>, Vec<Option<BlockGrid>>) {
    (filesets.iter().zip(&plan.filesets))
        .filter(|(_, f)| f.tree.is_none())
        .flat_map(|(regions, f)| regions.iter().map(move |r| (r, f.verify)))
        .unzip()
}

/// Refuses a layout of `needed` bytes that `dir`'s file system has no room for.
fn check_space(dir: &Path, needed: u64) -> Result<(), LayoutError> {
    let vfs =
        rustix::fs::statvfs(dir).map_err(|e| io_err("checking free space of", dir)(e.into()))?;
    let available = vfs.f_bavail.saturating_mul(vfs.f_frsize);
    if needed > available {
        return Err(LayoutError::NoSpace {
            path: dir.to_path_buf(),
            needed,
            available,
        });
    }
    Ok(())
}

/// Lays out the regions of a block device.
fn lay_out_device(
    plan: &Plan,
    target: &Target,
    filesets: Vec<Vec<Region>>,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<Dataset, LayoutError> {
    let all: Vec<&Region> = filesets.iter().flatten().collect();
    let needed: u64 = all.iter().map(|r| r.size).sum();
    let size = device_size(target.path())?;
    let end = all.iter().map(|r| r.base + r.size).max().unwrap_or(0);
    if end > size {
        return Err(LayoutError::DeviceTooSmall {
            path: target.path().into(),
            needed: end,
            size,
        });
    }
    let start = Instant::now();
    let (_, grids) = flat_regions(plan, &filesets);
    write_all(plan, &all, &grids, needed, progress)?;
    Ok(Dataset::one(filesets, false, needed, start))
}

/// The dataset of a layout that already exists (a client's, laid out by the parent): its
/// regions, without touching the target.
pub fn existing(plan: &Plan, target: &Target) -> Dataset {
    Dataset::one(regions(plan, target), true, 0, Instant::now())
}

/// Removes the data files, trees and manifest bakeoff laid out in `dir` (those the manifest
/// lists), every client's copy and a replay's files.
pub fn remove_dataset(dir: &Path) {
    remove_old(dir);
    replay::remove_replay(dir);
    clients::remove_client_dirs(dir, 0);
}

fn reusable(plan: &Plan, dir: &Path, all: &[&Region]) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join(MANIFEST)) else {
        return false;
    };
    let Ok(old) = serde_json::from_str::<Manifest>(&text) else {
        return false;
    };
    old == Manifest::of(plan)
        && all.iter().all(|r| {
            std::fs::metadata(&r.path)
                .map(|m| m.len() == r.size)
                .unwrap_or(false)
        })
}

pub(crate) fn remove_old(dir: &Path) {
    let manifest = dir.join(MANIFEST);
    if let Ok(old) =
        std::fs::read_to_string(&manifest).map(|t| serde_json::from_str::<Manifest>(&t))
    {
        // The manifest goes first so a half-removed layout is never taken as complete.
        let _ = std::fs::remove_file(&manifest);
        if let Ok(old) = old {
            for (name, _) in &old.trees {
                let _ = std::fs::remove_dir_all(tree_root(dir, name));
            }
            let flat = old
                .filesets
                .iter()
                .filter(|(name, _, _)| !old.trees.iter().any(|(tree, _)| tree == name));
            for (name, n, _) in flat {
                for i in 0..*n {
                    let _ = std::fs::remove_file(dir.join(format!("bakeoff-{name}.{i}")));
                }
            }
        }
    }
}

fn device_size(path: &Path) -> Result<u64, LayoutError> {
    use std::io::Seek;
    let mut f = File::open(path).map_err(io_err("opening", path))?;
    f.seek(std::io::SeekFrom::End(0))
        .map_err(io_err("sizing", path))
}

#[cfg(test)]
mod tests;
