//! Lays out the dataset: the data files (or device regions) filled with the same pseudo-random
//! bytes for the same seed on every target, written in parallel 1 MiB chunks, synced, and reused
//! when a directory already holds an identical layout (recorded in a manifest). Directory
//! trees for file operations are laid out by [`tree`], each client's copy by [`clients`].

mod clients;
mod tree;

pub use clients::client_dir;
pub use tree::{plan_trees, tree_root};

use crate::buffers::{fill, AlignedBuf};
use bakeoff_core::fileop::TreeSpec;
use bakeoff_core::plan::Plan;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
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
    let flat: Vec<&Region> = (filesets.iter().zip(&plan.filesets))
        .filter(|(_, f)| f.tree.is_none())
        .flat_map(|(r, _)| r)
        .collect();
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
    if reusable(plan, dir, &flat) {
        let repaired = tree_job(0).repair()?;
        return Ok(Dataset {
            filesets,
            reused: true,
            written_bytes: repaired,
            elapsed: start.elapsed(),
            client_dirs: Vec::new(),
        });
    }
    remove_old(dir);
    check_space(dir, needed)?;
    let written =
        write_all(plan, &flat, needed, progress).and_then(|()| tree_job(flat_bytes).write());
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
    Ok(Dataset {
        filesets,
        reused: false,
        written_bytes: needed,
        elapsed: start.elapsed(),
        client_dirs: Vec::new(),
    })
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
    write_all(plan, &all, needed, progress)?;
    Ok(Dataset {
        filesets,
        reused: false,
        written_bytes: needed,
        elapsed: start.elapsed(),
        client_dirs: Vec::new(),
    })
}

/// The dataset of a layout that already exists (a client's, laid out by the parent): its
/// regions, without touching the target.
pub fn existing(plan: &Plan, target: &Target) -> Dataset {
    Dataset {
        filesets: regions(plan, target),
        reused: true,
        written_bytes: 0,
        elapsed: Duration::ZERO,
        client_dirs: Vec::new(),
    }
}

/// Removes the data files, trees and manifest bakeoff laid out in `dir` (those the manifest
/// lists), and every client's copy.
pub fn remove_dataset(dir: &Path) {
    remove_old(dir);
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

/// The seed of chunk `chunk` of region `region`: content depends only on the plan's seed.
fn chunk_seed(seed: u64, region: usize, chunk: u64) -> u64 {
    let mut x = seed
        ^ (region as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ chunk.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Generator threads fill chunks with their seeded bytes while one writer writes them in
/// order of arrival: generation overlaps writing, and no two threads contend for a file.
fn write_all(
    plan: &Plan,
    all: &[&Region],
    total: u64,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<(), LayoutError> {
    if all.is_empty() {
        return Ok(());
    }
    let chunks: Vec<(usize, u64)> = all
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.size.div_ceil(CHUNK)).map(move |c| (i, c)))
        .collect();
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let generators = cpus.saturating_sub(1).clamp(1, 3);
    let done = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Filled>(2 * generators);
        let mut returns = Vec::new();
        for g in 0..generators {
            let (ret_tx, ret_rx) = mpsc::channel::<AlignedBuf>();
            for _ in 0..2 {
                let _ = ret_tx.send(AlignedBuf::new(CHUNK as usize));
            }
            returns.push(ret_tx);
            let (full_tx, mine) = (full_tx.clone(), &chunks);
            s.spawn(move || generate(plan, all, mine, g, generators, &ret_rx, &full_tx));
        }
        drop(full_tx);
        let (done, abort) = (&done, &abort);
        let writer = s.spawn(move || write_chunks(all, full_rx, &returns, done, abort));
        while !writer.is_finished() {
            if !progress(done.load(Ordering::Relaxed), total) {
                abort.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        writer.join().expect("layout writer panicked")
    })?;
    progress(all.iter().map(|r| r.size).sum(), total);
    sync_and_drop(all)
}

fn open_for_layout(path: &Path) -> Result<File, LayoutError> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io_err("creating", path))
}

/// A filled chunk: generator, region, chunk index, bytes.
type Filled = (usize, usize, u64, AlignedBuf);

fn generate(
    plan: &Plan,
    all: &[&Region],
    chunks: &[(usize, u64)],
    g: usize,
    generators: usize,
    empty: &mpsc::Receiver<AlignedBuf>,
    full: &mpsc::SyncSender<Filled>,
) {
    for &(ri, c) in chunks.iter().skip(g).step_by(generators) {
        let Ok(mut buf) = empty.recv() else { return };
        let len = CHUNK.min(all[ri].size - c * CHUNK) as usize;
        let mut rng = fastrand::Rng::with_seed(chunk_seed(plan.seed, ri, c));
        fill(&mut buf.as_mut_slice()[..len], &mut rng, plan.compress_pct);
        if full.send((g, ri, c, buf)).is_err() {
            return; // the writer stopped
        }
    }
}

fn write_chunks(
    all: &[&Region],
    full: mpsc::Receiver<Filled>,
    returns: &[mpsc::Sender<AlignedBuf>],
    done: &AtomicU64,
    abort: &AtomicBool,
) -> Result<(), LayoutError> {
    let mut files: Vec<Option<File>> = (0..all.len()).map(|_| None).collect();
    for (g, ri, c, buf) in full {
        if abort.load(Ordering::Relaxed) {
            return Err(LayoutError::Interrupted);
        }
        let region = all[ri];
        if files[ri].is_none() {
            files[ri] = Some(open_for_layout(&region.path)?);
        }
        let file = files[ri].as_ref().expect("opened above");
        let len = CHUNK.min(region.size - c * CHUNK) as usize;
        file.write_all_at(&buf.as_slice()[..len], region.base + c * CHUNK)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ENOSPC) {
                    let needed = all.iter().map(|r| r.size).sum();
                    let available = done.load(Ordering::Relaxed);
                    LayoutError::NoSpace {
                        path: region.path.clone(),
                        needed,
                        available,
                    }
                } else {
                    io_err("writing", &region.path)(e)
                }
            })?;
        done.fetch_add(len as u64, Ordering::Relaxed);
        let _ = returns[g].send(buf);
    }
    Ok(())
}

/// Syncs every file and asks the kernel to drop its clean pages, so the run starts cold.
fn sync_and_drop(all: &[&Region]) -> Result<(), LayoutError> {
    let mut seen = std::collections::BTreeSet::new();
    for r in all {
        if !seen.insert(r.path.clone()) {
            continue;
        }
        let f = File::options()
            .write(true)
            .open(&r.path)
            .map_err(io_err("opening", &r.path))?;
        f.sync_data().map_err(io_err("syncing", &r.path))?;
        let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_core::settings::Settings;
    use bakeoff_core::workload::builtin;

    fn plan(set: &str) -> Plan {
        builtin("randread")
            .unwrap()
            .plan(&Settings::parse_set(set).unwrap())
            .unwrap()
    }

    #[test]
    fn same_seed_same_bytes_and_reuse() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let p = plan("size=3m,nrfiles=2,seed=9");
        let da = lay_out(&p, &Target::Directory(a.path().into()), &|_, _| true).unwrap();
        lay_out(&p, &Target::Directory(b.path().into()), &|_, _| true).unwrap();
        assert!(!da.reused);
        for i in 0..2 {
            let name = format!("bakeoff-data.{i}");
            let x = std::fs::read(a.path().join(&name)).unwrap();
            assert_eq!(x.len(), 3 * 512 * 1024);
            assert_eq!(x, std::fs::read(b.path().join(&name)).unwrap());
        }
        let again = lay_out(&p, &Target::Directory(a.path().into()), &|_, _| true).unwrap();
        assert!(again.reused);
        let other = lay_out(
            &plan("size=2m,seed=9"),
            &Target::Directory(a.path().into()),
            &|_, _| true,
        )
        .unwrap();
        assert!(!other.reused);
        assert!(
            !a.path().join("bakeoff-data.1").exists(),
            "the old layout's files are removed"
        );
        remove_dataset(a.path());
        assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
    }

    #[test]
    fn no_space_is_reported_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan("size=1000t");
        let err = lay_out(&p, &Target::Directory(dir.path().into()), &|_, _| true).unwrap_err();
        assert!(err.to_string().contains("not enough space"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
