//! A ZFS crash state brought back as after an outage: the pool imported from the state's
//! devices (ZFS's own recovery: the newest uberblock whose tree checks out, then the intent log
//! replayed when the dataset mounts), scrubbed, and `zpool status -x` read back. There is no
//! journal to replay by a mount and no offline check: a pool that does not import is damaged,
//! and a scrub that finds checksum errors in what the uberblock points to is damage too (after
//! a power cut a copy-on-write pool should have none, whatever it lost).
//!
//! The state's devices are found through a directory of links to them (`zpool import -d`), so
//! no other pool on the machine is looked at; the pool imports under an alternate root (`-R`),
//! so its dataset mounts below the caller's directory, at the path the run's stack had.
//! zfs-fuse serves the checks ([`serve`]): the run's daemon went with its stack, so usually a
//! daemon of their own, or one they share with other runs asking for the same settings.

use super::dataset;
use crate::daemon::Daemon;
use crate::error::StackError;
use crate::exec::{Cmd, Exec};
use crate::fs::check::{first_lines, FsCheck};
use crate::ledger::Ledger;
use crate::undo::{perform, Undo};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

/// The name the checks use the shared zfs-fuse under.
const CHECKS: &str = "crash-states";
/// How long a scrub may take on a benchmark-sized pool.
const SCRUB_TIMEOUT: Duration = Duration::from_secs(600);

/// A state's pool, imported, and where its dataset is mounted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The pool's name (the run's).
    pub pool: String,
    /// Where its dataset is mounted: the run's mount point under the alternate root.
    pub mount: PathBuf,
    /// The directories the import made below the alternate root, the deepest last.
    made: Vec<PathBuf>,
    /// The directory of links to the state's devices.
    links: PathBuf,
}

/// The zfs-fuse daemon the checks need (started, or shared with another run; `dir` is made and
/// recorded here), unless the OpenZFS kernel module serves pools; end it with [`stop_serving`].
pub fn serve(
    dir: &Path,
    ledger: &mut Ledger,
    exec: &mut Exec,
) -> Result<Option<Daemon>, StackError> {
    if super::openzfs_loaded() {
        return Ok(None);
    }
    ledger.record(Undo::RemoveDirAndFiles {
        path: dir.to_path_buf(),
    })?;
    std::fs::create_dir_all(dir).map_err(StackError::io("creating", dir))?;
    let spec =
        crate::spec::StackSpec::parse("zfs").map_err(|e| StackError::Environment(e.to_string()))?;
    let z = super::spec::ZfsSpec::of(&spec).map_err(StackError::Environment)?;
    let mut ctx = crate::backing::Ctx {
        ledger,
        exec,
        dir: dir.to_path_buf(),
        name: CHECKS.into(),
        wait: None,
    };
    Ok(super::fuse::start(&z, &mut ctx, &[])?.daemon)
}

/// Ends what [`serve`] started: the checks leave the zfs-fuse they used, which stops unless
/// another run (or stack of this run) still uses it.
pub fn stop_serving(daemon: &Daemon, exec: &mut Exec) -> Result<(), StackError> {
    super::fuse::leave(CHECKS, &daemon.info.exe, exec)
}

/// Imports the one pool on `devices` with `root` as its alternate root; its dataset was mounted
/// at `origin` in the run, so it mounts at `root/origin`. `Ok(Err(why))` when the state's pool
/// does not come back (no pool found, the import refused): damage. Every directory, the pool
/// and the mount are in `ledger` before they exist.
pub fn import(
    devices: &[PathBuf],
    root: &Path,
    origin: &Path,
    ledger: &mut Ledger,
    exec: &mut Exec,
) -> Result<Result<Imported, String>, StackError> {
    std::fs::create_dir_all(root).map_err(StackError::io("creating", root))?;
    let links = link_devices(devices, root, ledger)?;
    let links_arg = links.to_string_lossy().into_owned();
    let listing = exec.output(&Cmd::new("zpool", &["import", "-d", &links_arg]))?;
    let pools = importable(&listing.stdout);
    let (pool, id) = match pools.as_slice() {
        [one] => one.clone(),
        [] => {
            remove_links(&links, exec)?;
            let said = first_lines(&format!("{}\n{}", listing.stdout, listing.stderr), 1);
            return Ok(Err(format!(
                "no pool found on the state's devices ({said})"
            )));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(n, _)| n.as_str()).collect();
            return Err(StackError::Environment(format!(
                "the state's devices hold {} pools ({}), expected one",
                many.len(),
                names.join(", ")
            )));
        }
    };
    let mount = under(root, origin);
    let made = dirs_between(root, &mount);
    for dir in &made {
        ledger.record(Undo::RemoveDir { path: dir.clone() })?;
    }
    ledger.record(Undo::DestroyPool { name: pool.clone() })?;
    let root_arg = root.to_string_lossy().into_owned();
    let args = [
        "import",
        "-d",
        &links_arg,
        "-f",
        "-o",
        "cachefile=none",
        "-R",
        &root_arg,
        &id,
    ];
    let out = exec.output(&Cmd::new("zpool", &args))?;
    let imported = Imported {
        pool,
        mount: mount.clone(),
        made,
        links,
    };
    if out.status != Some(0) {
        remove_made(&imported, exec)?;
        return Ok(Err(format!(
            "zpool import: {}",
            first_lines(&out.stderr, 1)
        )));
    }
    ledger.record(Undo::Unmount {
        path: mount.clone(),
    })?;
    if let Err(e) = super::wait_mounted(&mount) {
        export(&imported, exec)?;
        let ds = dataset(&imported.pool);
        return Ok(Err(format!("{ds} imported but not mounted: {e}")));
    }
    Ok(Ok(imported))
}

/// Scrubs the pool and reads `zpool status -x`: clean when it says the pool is healthy.
pub fn scrub(pool: &str, exec: &mut Exec) -> Result<FsCheck, StackError> {
    exec.run("zpool", &["scrub", pool])?;
    let start = Instant::now();
    while scrub_running(&exec.run("zpool", &["status", pool])?) {
        if start.elapsed() > SCRUB_TIMEOUT {
            return Err(StackError::Environment(format!(
                "the scrub of {pool} did not finish within {} s",
                SCRUB_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = exec.run("zpool", &["status", "-x", "-v", pool])?;
    let clean = status.contains("is healthy");
    Ok(FsCheck {
        command: format!("zpool scrub {pool}; zpool status -x -v {pool}"),
        clean,
        found: if clean {
            String::new()
        } else {
            status_findings(&status)
        },
    })
}

/// Exports the pool and removes the links and the directories its import made.
pub fn export(imported: &Imported, exec: &mut Exec) -> Result<(), StackError> {
    let busy = Duration::from_secs(20);
    exec.run_retrying_busy("zpool", &["export", &imported.pool], busy)?;
    remove_made(imported, exec)
}

/// Removes the directories an import made (those it made) and the links.
fn remove_made(imported: &Imported, exec: &mut Exec) -> Result<(), StackError> {
    for dir in imported.made.iter().rev() {
        match std::fs::remove_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(StackError::io("removing", dir)(e))
            }
            _ => {}
        }
    }
    remove_links(&imported.links, exec)
}

fn remove_links(links: &Path, exec: &mut Exec) -> Result<(), StackError> {
    let undo = Undo::RemoveDirAndFiles {
        path: links.to_path_buf(),
    };
    perform(&undo, exec).map_err(StackError::Environment)
}

/// A directory beside `root` of links `d0`, `d1` ... to the state's devices, recorded first.
fn link_devices(
    devices: &[PathBuf],
    root: &Path,
    ledger: &mut Ledger,
) -> Result<PathBuf, StackError> {
    let mut name = root.file_name().unwrap_or_default().to_os_string();
    name.push("-devices");
    let links = root.with_file_name(name);
    ledger.record(Undo::RemoveDirAndFiles {
        path: links.clone(),
    })?;
    std::fs::create_dir_all(&links).map_err(StackError::io("creating", &links))?;
    for (i, device) in devices.iter().enumerate() {
        let link = links.join(format!("d{i}"));
        std::os::unix::fs::symlink(device, &link).map_err(StackError::io("linking", &link))?;
    }
    Ok(links)
}

/// `origin` (absolute) below `root`.
fn under(root: &Path, origin: &Path) -> PathBuf {
    let relative: PathBuf = origin
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    root.join(relative)
}

/// The directories below `root` down to `path`, the shallowest first.
fn dirs_between(root: &Path, path: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = path
        .ancestors()
        .take_while(|p| *p != root && p.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

/// The pools `zpool import -d DIR` lists: name and numeric id.
fn importable(listing: &str) -> Vec<(String, String)> {
    let mut pools = Vec::new();
    let mut name = None;
    for line in listing.lines().map(str::trim) {
        if let Some(n) = line.strip_prefix("pool:") {
            name = Some(n.trim().to_string());
        } else if let (Some(id), Some(n)) = (line.strip_prefix("id:"), name.take()) {
            pools.push((n, id.trim().to_string()));
        }
    }
    pools
}

/// Whether `zpool status` says a scrub is still going.
fn scrub_running(status: &str) -> bool {
    status.lines().any(|l| l.contains("scrub in progress"))
}

/// What an unhealthy `zpool status -x -v` says: its state, status, scrub and errors lines, and
/// the devices with errors counted.
fn status_findings(status: &str) -> String {
    let lines: Vec<String> = status
        .lines()
        .map(str::trim)
        .filter(|l| {
            ["state:", "status:", "scrub:", "errors:"]
                .iter()
                .any(|p| l.starts_with(p))
                || device_with_errors(l)
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .take(6)
        .collect();
    lines.join(" / ")
}

/// A config line (`NAME STATE READ WRITE CKSUM`) with a non-zero error count.
fn device_with_errors(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() >= 5
        && words[2..5].iter().all(|w| w.parse::<u64>().is_ok())
        && words[2..5].iter().any(|w| *w != "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_each_pool_and_its_id() {
        let listing = "  pool: bk_zfs-1\n    id: 8607337629377104682\n state: ONLINE\n\
                       action: The pool can be imported using its name or numeric identifier.\n\
                       config:\n\n\tbk_zfs-1            ONLINE\n\t  /tmp/x/d0  ONLINE\n";
        assert_eq!(
            importable(listing),
            vec![("bk_zfs-1".to_string(), "8607337629377104682".to_string())]
        );
        assert!(importable("no pools available to import\n").is_empty());
    }

    #[test]
    fn a_scrub_with_repaired_checksums_is_damage_and_says_where() {
        let status = "  pool: p\n state: ONLINE\nstatus: One or more devices has experienced an \
            unrecoverable error.  An\n\tattempt was made to correct the error.\n scrub: scrub \
            completed after 0h0m with 0 errors on Sat Nov 28 02:29:30 2026\nconfig:\n\n\
            \tNAME               STATE     READ WRITE CKSUM\n\tp            ONLINE       0     0     0\n\
            \t  /tmp/zt/devs/d0  ONLINE       0     0    18  72K repaired\n\n\
            errors: No known data errors\n";
        let found = status_findings(status);
        assert!(found.contains("status: One or more devices"), "{found}");
        assert!(
            found.contains("/tmp/zt/devs/d0 ONLINE 0 0 18 72K repaired"),
            "{found}"
        );
        assert!(!found.contains("p ONLINE 0 0 0"), "{found}");
        assert!(scrub_running(
            " scrub: scrub in progress for 0h0m, 12.5% done"
        ));
        assert!(!scrub_running(status));
    }

    #[test]
    fn the_mount_goes_below_the_alternate_root_and_its_directories_are_known() {
        let root = Path::new("/var/tmp/w/mnt");
        let mount = under(root, Path::new("/var/tmp/bakeoff/zfs-1/mnt"));
        assert_eq!(mount, Path::new("/var/tmp/w/mnt/var/tmp/bakeoff/zfs-1/mnt"));
        let dirs = dirs_between(root, &mount);
        assert_eq!(
            dirs.first().map(PathBuf::as_path),
            Some(root.join("var").as_path())
        );
        assert_eq!(dirs.last(), Some(&mount));
        assert_eq!(dirs.len(), 5);
    }
}
