//! Whose calls and which file systems: the processes a capture starts from (a pid and its
//! descendants, a cgroup's members) and the superblocks that hold the traced directories.

use crate::parse::{parse_mountinfo, MountEntry, ProcStat};
use bakeoff_core::trace::RootInfo;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Whose calls are captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// These processes and their descendants, followed through fork.
    Pids(Vec<u32>),
    /// Every process this process starts after `start()`, and theirs; not this process.
    ChildrenOfSelf,
    /// The members of a cgroup (`cgroup.procs`, v1 or v2) when the capture starts, and their
    /// descendants from then on.
    Cgroup(PathBuf),
}

impl Filter {
    /// How the provenance names it.
    pub fn describe(&self) -> String {
        match self {
            Filter::Pids(pids) => {
                let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
                format!("pid {}", pids.join(","))
            }
            Filter::ChildrenOfSelf => "command".to_string(),
            Filter::Cgroup(path) => format!("cgroup {}", path.display()),
        }
    }
}

/// `pids` and every descendant of theirs in `procs`.
pub fn with_descendants(pids: &[u32], procs: &[ProcStat]) -> BTreeSet<u32> {
    let mut set: BTreeSet<u32> = pids.iter().copied().collect();
    loop {
        let before = set.len();
        for p in procs {
            if set.contains(&p.ppid) {
                set.insert(p.pid);
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// The processes a capture starts with (`ChildrenOfSelf`: none; its kernel side follows this
/// process's forks).
pub fn seed(filter: &Filter) -> Result<BTreeSet<u32>, String> {
    match filter {
        Filter::Pids(pids) => {
            for pid in pids {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    return Err(format!(
                        "no process {pid} to capture (/proc/{pid} is missing)"
                    ));
                }
            }
            Ok(with_descendants(pids, &crate::read::processes()))
        }
        Filter::ChildrenOfSelf => Ok(BTreeSet::new()),
        Filter::Cgroup(dir) => {
            let file = dir.join("cgroup.procs");
            let text = std::fs::read_to_string(&file).map_err(|e| {
                format!(
                    "cannot read {} (is {} a cgroup?): {e}",
                    file.display(),
                    dir.display()
                )
            })?;
            let pids: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
            Ok(with_descendants(&pids, &crate::read::processes()))
        }
    }
}

/// The kernel's encoding of a superblock dev (`MKDEV`: `major << 20 | minor`).
pub fn kernel_dev(major: u32, minor: u32) -> u32 {
    (major << 20) | (minor & 0xfffff)
}

/// The mount that holds `dir` (absolute, canonical): the last mounted of the longest mount
/// point that is a prefix of it.
pub fn mount_of<'a>(dir: &Path, mounts: &'a [MountEntry]) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if !dir.starts_with(&m.mount_point) {
            continue;
        }
        if best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len()) {
            best = Some(m);
        }
    }
    best
}

/// Each traced directory: canonical path, superblock dev, and what the provenance says of it.
pub fn roots(under: &[(String, PathBuf)]) -> Result<Vec<(u32, PathBuf, RootInfo)>, String> {
    if under.is_empty() {
        return Err("nothing to capture: give at least one directory (--under)".to_string());
    }
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let mounts = parse_mountinfo(&text);
    let mut out = Vec::new();
    for (name, dir) in under {
        let canon = dir.canonicalize().map_err(|e| {
            format!(
                "cannot capture under {}: {e} (give an existing directory)",
                dir.display()
            )
        })?;
        if !canon.is_dir() {
            return Err(format!(
                "cannot capture under {}: not a directory",
                dir.display()
            ));
        }
        let m = mount_of(&canon, &mounts)
            .ok_or_else(|| format!("no mount holds {} in /proc/self/mountinfo", canon.display()))?;
        let info = RootInfo {
            name: name.clone(),
            path: canon.display().to_string(),
            fs_type: m.fstype.clone(),
            mount_options: join_options(&m.options, &m.super_options),
        };
        out.push((kernel_dev(m.major, m.minor), canon, info));
    }
    Ok(out)
}

fn join_options(mount: &str, sb: &str) -> String {
    let mut all: Vec<&str> = mount.split(',').filter(|o| !o.is_empty()).collect();
    for o in sb.split(',') {
        if !o.is_empty() && !all.contains(&o) {
            all.push(o);
        }
    }
    all.join(",")
}

/// Anonymous and shared memory of `pids` (`RssAnon` + `RssShmem` of `/proc/<pid>/status`);
/// shared pages of several processes count once per process.
pub fn app_memory(pids: &BTreeSet<u32>) -> u64 {
    pids.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .map(|status| status_kib(&status, "RssAnon:") + status_kib(&status, "RssShmem:"))
        .sum::<u64>()
        * 1024
}

fn status_kib(status: &str, key: &str) -> u64 {
    (status.lines())
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(pid: u32, ppid: u32) -> ProcStat {
        let text = format!("{pid} (x) S {ppid} 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0");
        crate::parse::parse_pid_stat(&text).unwrap()
    }

    #[test]
    fn descendants_are_found_at_any_depth() {
        let procs = [
            proc(1, 0),
            proc(10, 1),
            proc(12, 11),
            proc(11, 10),
            proc(20, 1),
        ];
        let set = with_descendants(&[10], &procs);
        assert_eq!(set.into_iter().collect::<Vec<_>>(), vec![10, 11, 12]);
    }

    #[test]
    fn the_innermost_mount_holds_a_directory() {
        let m = |point: &str, minor| MountEntry {
            mount_point: point.into(),
            major: 7,
            minor,
            ..MountEntry::default()
        };
        let mounts = [m("/", 0), m("/mnt", 1), m("/mnt/a", 2), m("/mnt", 3)];
        assert_eq!(mount_of(Path::new("/mnt/a/b"), &mounts).unwrap().minor, 2);
        assert_eq!(mount_of(Path::new("/mnt/ab"), &mounts).unwrap().minor, 3);
        assert_eq!(mount_of(Path::new("/var"), &mounts).unwrap().minor, 0);
        assert_eq!(kernel_dev(253, 1), (253 << 20) | 1);
    }

    #[test]
    fn status_memory_is_read_in_kib() {
        let status = "Name:\tpostgres\nRssAnon:\t   100 kB\nRssFile:\t 5 kB\nRssShmem:\t  20 kB\n";
        assert_eq!(
            status_kib(status, "RssAnon:") + status_kib(status, "RssShmem:"),
            120
        );
    }
}
