//! The files of a replayed trace, as they were when its capture started: its directories, and
//! each file that existed then at its start size (seeded incompressible bytes, synced, dropped
//! from the cache, like every other layout), under `<target>/bakeoff-replay/<root>/`. A layout
//! of the same capture is repaired rather than rewritten: what the previous replay made at the
//! trace's paths (created, renamed to) is removed, and only files missing or of another size
//! are written again.

use super::flat::write_all;
use super::{check_space, io_err, Dataset, LayoutError, Region, Target};
use crate::replay::cache::require;
use crate::replay::paths::{replay_dir, resolve, root_dirs};
use bakeoff_core::plan::Plan;
use bakeoff_core::trace::{FileKind, Trace};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The manifest in the replay directory.
const MANIFEST: &str = ".bakeoff-replay.json";

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Manifest {
    schema_version: u32,
    capture_id: String,
}

/// Lays out the files `plan`'s trace starts with (see the module's documentation). The
/// dataset has one fileset of one region: the replay directory.
pub(super) fn lay_out_replay(
    plan: &Plan,
    target: &Target,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<Dataset, LayoutError> {
    let replay = plan.replay.as_ref().expect("a replay plan");
    let Target::Directory(target_dir) = target else {
        return Err(LayoutError::NeedsDirectory {
            what: format!("replaying trace {}", plan.workload),
            path: target.path().to_path_buf(),
        });
    };
    let loaded = require(replay).map_err(LayoutError::Unsupported)?;
    let trace = &loaded.trace;
    let dir = replay_dir(target_dir);
    let paths = resolve(trace, &dir).map_err(LayoutError::Unsupported)?;
    let start = Instant::now();
    let manifest = Manifest {
        schema_version: 1,
        capture_id: replay.capture_id.clone(),
    };
    let same = std::fs::read_to_string(dir.join(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
        .is_some_and(|m| m == manifest);
    if !same && dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io_err("removing the old replay layout", &dir))?;
    }
    let roots: Vec<PathBuf> = std::iter::once(dir.clone())
        .chain(root_dirs(trace, &dir))
        .collect();
    for root in &roots {
        std::fs::create_dir_all(root).map_err(io_err("creating", root))?;
    }
    remove_created(trace, &paths, &roots)?;
    let rewrite = start_files(trace, &paths)?;
    let bytes: u64 = rewrite.iter().map(|r| r.size).sum();
    check_space(
        &dir,
        bytes + replay.peak_bytes.saturating_sub(replay.layout_bytes),
    )?;
    let refs: Vec<&Region> = rewrite.iter().collect();
    write_all(plan, &refs, &[], bytes, progress)?;
    let text = serde_json::to_string_pretty(&manifest).expect("manifest serialises");
    let path = dir.join(MANIFEST);
    std::fs::write(&path, text).map_err(io_err("writing", &path))?;
    let region = Region {
        path: dir,
        base: 0,
        size: replay.layout_bytes,
    };
    Ok(Dataset::one(vec![vec![region]], same, bytes, start))
}

/// Removes what a previous replay made: whatever is at a path of the trace that nothing had
/// at the capture's start (a file it created, a rename's new name, a directory it made),
/// deepest first. A path that existed then, or holds something that did, is kept.
fn remove_created(trace: &Trace, paths: &[PathBuf], roots: &[PathBuf]) -> Result<(), LayoutError> {
    let at_start = (trace.files.iter())
        .filter(|f| f.start_size.is_some())
        .filter_map(|f| paths.get(f.path as usize));
    let kept: HashSet<&Path> = (at_start.flat_map(|p| p.ancestors()))
        .chain(roots.iter().flat_map(|p| p.ancestors()))
        .collect();
    let mut made: Vec<&PathBuf> = (paths.iter())
        .filter(|p| !kept.contains(p.as_path()))
        .collect();
    made.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for path in made {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let done = match meta.is_dir() {
            true => std::fs::remove_dir_all(path),
            false => std::fs::remove_file(path),
        };
        remove_if_there(done, path)?;
    }
    Ok(())
}

fn remove_if_there(done: std::io::Result<()>, path: &Path) -> Result<(), LayoutError> {
    match done {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err("removing", path)(e)),
        _ => Ok(()),
    }
}

/// Makes the directories that existed at the start, and each file that did at its start size:
/// a file of the right size is kept, any other is made empty and returned to be written.
fn start_files(trace: &Trace, paths: &[PathBuf]) -> Result<Vec<Region>, LayoutError> {
    let mut rewrite = Vec::new();
    for f in &trace.files {
        let (Some(size), Some(path)) = (f.start_size, paths.get(f.path as usize)) else {
            continue;
        };
        if f.kind == FileKind::Dir {
            std::fs::create_dir_all(path).map_err(io_err("creating", path))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_err("creating", parent))?;
        }
        let kept = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == size);
        if kept {
            continue;
        }
        let file = std::fs::File::create(path).map_err(io_err("creating", path))?;
        drop(file);
        if size > 0 {
            rewrite.push(Region {
                path: path.clone(),
                base: 0,
                size,
            });
        }
    }
    Ok(rewrite)
}

/// Removes the replay directory of `dir`, if there is one.
pub(super) fn remove_replay(dir: &Path) {
    let _ = std::fs::remove_dir_all(replay_dir(dir));
}
