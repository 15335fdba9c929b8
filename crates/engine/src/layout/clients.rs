//! `clients=N`: each client process works on its own copy of the filesets, laid out by the
//! parent in `client-<i>` under the target directory with the client's own seed (see
//! [`Plan::client_plan`]), each copy with its own manifest, so each is reused on its own.

use super::{lay_out_one, remove_old, Dataset, LayoutError, Target, MANIFEST};
use bakeoff_core::plan::Plan;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The directory of client `index` under `dir`.
pub fn client_dir(dir: &Path, index: u32) -> PathBuf {
    dir.join(format!("client-{index}"))
}

/// Lays out every client's copy; progress counts over all of them.
pub(super) fn lay_out_clients(
    plan: &Plan,
    target: &Target,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<Dataset, LayoutError> {
    let Target::Directory(dir) = target else {
        return Err(LayoutError::NeedsDirectory {
            what: format!(
                "clients={} (each client's files in its own directory)",
                plan.clients
            ),
            path: target.path().to_path_buf(),
        });
    };
    // A layout without clients at the top, or of more clients than now, is not this one.
    remove_old(dir);
    remove_client_dirs(dir, plan.clients);
    let start = Instant::now();
    let total = plan.dataset_bytes();
    let per_client = total / u64::from(plan.clients);
    let (mut reused, mut written, mut dirs) = (true, 0u64, Vec::new());
    let mut first = None;
    for c in 0..plan.clients {
        let sub = client_dir(dir, c);
        std::fs::create_dir_all(&sub).map_err(super::io_err("creating directory", &sub))?;
        let offset = per_client * u64::from(c);
        let d = lay_out_one(
            &plan.client_plan(c),
            &Target::Directory(sub.clone()),
            &|done, _| progress((offset + done).min(total), total),
        )?;
        reused &= d.reused;
        written += d.written_bytes;
        first.get_or_insert(d.filesets);
        dirs.push(sub);
    }
    Ok(Dataset {
        filesets: first.unwrap_or_default(),
        reused,
        written_bytes: written,
        elapsed: start.elapsed(),
        client_dirs: dirs,
    })
}

/// Removes the copies of clients `from` and above that bakeoff laid out in `dir` (a
/// `client-<i>` directory holding a manifest), and the directories if nothing else is in them.
pub(super) fn remove_client_dirs(dir: &Path, from: u32) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let index = name
            .to_str()
            .and_then(|n| n.strip_prefix("client-"))
            .and_then(|n| n.parse::<u32>().ok());
        let path = entry.path();
        if index.is_some_and(|i| i >= from) && path.join(MANIFEST).exists() {
            remove_old(&path);
            let _ = std::fs::remove_dir(&path);
        }
    }
}
