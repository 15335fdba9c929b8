//! Where a replay's files live: `<target>/bakeoff-replay/<root>/<path>`, one subtree per
//! captured root. Paths come from a trace file, so each is checked to stay inside its root.

use bakeoff_core::trace::Trace;
use std::path::{Path, PathBuf};

/// The directory under a target that holds every replay's files.
pub const DIR: &str = "bakeoff-replay";

/// The replay directory of a target directory.
pub fn replay_dir(target: &Path) -> PathBuf {
    target.join(DIR)
}

/// The directory of root `index`: its captured name (`data`, `log`) when that is a plain
/// name, else `root<index>`.
fn root_name(trace: &Trace, index: usize) -> String {
    let name = trace
        .provenance
        .roots
        .get(index)
        .map_or("", |r| r.name.as_str());
    let plain = !name.is_empty() && name != "." && name != ".." && !name.contains('/');
    if plain {
        name.to_string()
    } else {
        format!("root{index}")
    }
}

/// Every path of `trace` under `dir` (its [`replay_dir`]), by path id; an error names a path
/// that would leave its root (`..`, or an absolute path is taken as relative).
pub fn resolve(trace: &Trace, dir: &Path) -> Result<Vec<PathBuf>, String> {
    trace
        .paths
        .iter()
        .enumerate()
        .map(|(id, p)| {
            let mut out = dir.join(root_name(trace, usize::from(p.root)));
            for part in p.path.split('/').filter(|c| !c.is_empty() && *c != ".") {
                if part == ".." {
                    return Err(format!(
                        "path {id} of the trace ('{}') leaves its root with '..'",
                        p.path
                    ));
                }
                out.push(part);
            }
            Ok(out)
        })
        .collect()
}

/// The directory of every root the paths of `trace` use, under `dir`.
pub fn root_dirs(trace: &Trace, dir: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<u16> = trace.paths.iter().map(|p| p.root).collect();
    roots.sort_unstable();
    roots.dedup();
    (roots.into_iter())
        .map(|r| dir.join(root_name(trace, usize::from(r))))
        .collect()
}

/// Where a path id the trace does not define points: a name inside the replay directory
/// that no call creates, so a call on it fails (and its result differs) without touching
/// anything outside the replay.
pub fn unknown(dir: &Path, id: u32) -> PathBuf {
    dir.join(format!(".bakeoff-unknown-path-{id}"))
}
