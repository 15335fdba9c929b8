//! The gate's checks that ask tools (reliability plan §6.1): membership of an imported ZFS pool
//! (`zpool status`) and signatures on the device (`blkid`, `wipefs`), each probe through the
//! recorded runner within [`PROBE_TIMEOUT`].

use super::{block_rdev, node_rdev, Target};
use crate::exec::{Cmd, Exec, Outcome, PROBE_TIMEOUT};
use std::fs;
use std::path::{Path, PathBuf};

/// Imported pools' vdevs. zfs-fuse opens vdevs without `O_EXCL`, so only this finds them.
pub(super) fn zfs(t: &Target, exec: &mut Exec) -> Result<(), String> {
    let Some(status) = zpool_status(exec)? else {
        return Ok(());
    };
    let (mut pool, mut config) = (String::new(), false);
    for line in status.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        match first {
            "pool:" => (pool, config) = (line.trim()[5..].trim().to_string(), false),
            "config:" => config = true,
            "errors:" => config = false,
            _ if config && !first.is_empty() => {
                // An absolute path (-P) replaces "/dev" in the join.
                let path = Path::new("/dev").join(first);
                if let Some(dev) = node_rdev(&path.to_string_lossy()) {
                    t.says(dev, || format!("member of ZFS pool {pool}"))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `zpool status` output, or `None` when no pool can be imported (no zpool, no zfs-fuse
/// daemon, no ZFS module). Retried: a zfs-fuse daemon shutting down aborts it (SIGABRT,
/// "Connection reset by peer") for a moment; a failure that lasts refuses.
fn zpool_status(exec: &mut Exec) -> Result<Option<String>, String> {
    if !crate::exec::installed("zpool") {
        return Ok(None);
    }
    let none = ["zfs-fuse daemon is running", "modules are not loaded"];
    let mut attempts = 0;
    loop {
        let mut out = probe(exec, "zpool", &["status", "-P"])?;
        if !out.success() && out.stderr.contains("invalid option") {
            out = probe(exec, "zpool", &["status"])?; // zfs-fuse has no -P; it prints names under /dev
        }
        if out.success() {
            return Ok(Some(out.stdout));
        }
        if none.iter().any(|n| out.stderr.contains(n)) {
            return Ok(None);
        }
        attempts += 1;
        if attempts == 5 {
            return Err(failed("zpool status", &out));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Any file system, partition table, RAID, swap, LVM, crypto or ZFS signature refuses unless
/// the device (by number) is in `destroy_ok`; returns the signatures found.
pub(super) fn signatures(
    t: &Target,
    destroy_ok: &[PathBuf],
    exec: &mut Exec,
) -> Result<Vec<String>, String> {
    let path = t.path.to_string_lossy();
    let mut found = blkid_types(&path, exec)?;
    for ty in wipefs_types(&path, exec)? {
        if !found.iter().any(|f| f.eq_ignore_ascii_case(&ty)) {
            found.push(ty);
        }
    }
    // "ambivalent" says only that there are several: named by wipefs, it adds nothing.
    if found.len() > 1 {
        found.retain(|f| f != AMBIVALENT);
    }
    let listed = |p: &PathBuf| fs::canonicalize(p).ok().and_then(|p| block_rdev(&p));
    let allowed = destroy_ok
        .iter()
        .any(|p| listed(p) == Some(t.related[0].rdev));
    if found.is_empty() || allowed {
        return Ok(found);
    }
    let what = match found.as_slice() {
        [one] if one.starts_with(['a', 'e', 'i', 'o', 'u', 'x', 'L']) => format!("an {one}"),
        [one] => format!("a {one}"),
        many => many.join(", "),
    };
    let s = if found.len() > 1 { "s" } else { "" };
    Err(format!(
        "carries {what} signature{s}: name it in --destroy-data-on to overwrite"
    ))
}

/// What blkid's exit 8 is recorded as when wipefs names nothing more.
const AMBIVALENT: &str = "ambivalent (several file systems, says blkid)";

/// libblkid's low-level probe (superblocks and partition tables); exit 2 is "nothing", exit 8
/// "ambivalent" (several signatures: wipefs names them).
fn blkid_types(path: &str, exec: &mut Exec) -> Result<Vec<String>, String> {
    let out = probe(exec, "blkid", &["-p", "-o", "export", path])?;
    match out.status {
        Some(2) => Ok(Vec::new()),
        Some(8) => Ok(vec![AMBIVALENT.to_string()]),
        Some(0) => Ok(out
            .stdout
            .lines()
            .filter_map(|l| l.split_once('='))
            .filter(|(k, _)| *k == "TYPE" || *k == "PTTYPE")
            .map(|(_, v)| v.to_string())
            .collect()),
        _ => Err(failed("blkid", &out)),
    }
}

/// wipefs lists every signature, also the backup ones at the end of the device.
fn wipefs_types(path: &str, exec: &mut Exec) -> Result<Vec<String>, String> {
    let list = ["--no-act", "--noheadings", "--output", "TYPE", path];
    let out = probe(exec, "wipefs", &list)?;
    if !out.success() {
        return Err(failed("wipefs", &out));
    }
    Ok(out.stdout.split_whitespace().map(str::to_string).collect())
}

/// Runs a probe within [`PROBE_TIMEOUT`]: a hung probe (a stopped zfs-fuse, a dying disk) must
/// refuse, not hang the gate.
fn probe(exec: &mut Exec, program: &str, args: &[&str]) -> Result<Outcome, String> {
    let cmd = Cmd::new(program, args).timeout(PROBE_TIMEOUT);
    exec.output(&cmd).map_err(|e| e.to_string())
}

/// A probe's failure with its stderr.
fn failed(program: &str, out: &Outcome) -> String {
    let (status, err) = (out.describe(), out.stderr.trim());
    format!("probe `{program}` failed ({status}): {err}")
}
