//! `--mem-limit`: run the workload in a memory cgroup (v2 `memory.max`, or v1
//! `memory.limit_in_bytes`), so the page cache it may use is capped like the seed-002 study's
//! 1 GB. The cgroup is a child of the one bakeoff runs in; bakeoff moves itself in, and back out
//! at teardown.

use crate::error::StackError;
use crate::ledger::Ledger;
use crate::undo::Undo;
use std::path::{Path, PathBuf};

/// Where our memory cgroup lives and how its limit file is called.
fn parent_and_limit_file() -> Result<(PathBuf, &'static str), StackError> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let unified = Path::new("/sys/fs/cgroup/cgroup.controllers");
    if unified.exists() {
        let rel = own
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .unwrap_or("/");
        return Ok((
            Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/')),
            "memory.max",
        ));
    }
    let v1 = Path::new("/sys/fs/cgroup/memory");
    if v1.is_dir() {
        let rel = own
            .lines()
            .find_map(|l| {
                let mut f = l.splitn(3, ':');
                let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
                ctrl.split(',').any(|c| c == "memory").then_some(path)
            })
            .unwrap_or("/");
        return Ok((
            v1.join(rel.trim_start_matches('/')),
            "memory.limit_in_bytes",
        ));
    }
    Err(StackError::Environment(
        "--mem-limit needs a memory cgroup (cgroup v2, or v1 at /sys/fs/cgroup/memory)".into(),
    ))
}

/// Creates a cgroup limited to `bytes`, records its removal, and moves this process into it.
pub fn limit_memory(bytes: u64, name: &str, ledger: &mut Ledger) -> Result<PathBuf, StackError> {
    let (parent, limit_file) = parent_and_limit_file()?;
    let dir = parent.join(name);
    ledger.record(Undo::RemoveCgroup { path: dir.clone() })?;
    std::fs::create_dir(&dir).map_err(StackError::io("creating cgroup", &dir))?;
    let limit = dir.join(limit_file);
    std::fs::write(&limit, bytes.to_string()).map_err(StackError::io("setting", &limit))?;
    let procs = dir.join("cgroup.procs");
    std::fs::write(&procs, std::process::id().to_string())
        .map_err(StackError::io("joining", &procs))?;
    Ok(dir)
}

/// How many processes the kernel's OOM killer killed in the memory cgroup at `dir` (v2
/// `memory.events`, v1 `memory.oom_control`; 0 where neither says): the workload's processes,
/// which offer themselves first (`bakeoff_probe::WORKLOAD_OOM_SCORE_ADJ`).
pub fn oom_kills(dir: &Path) -> u64 {
    ["memory.events", "memory.oom_control"]
        .iter()
        .find_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .map_or(0, |text| parse_oom_kills(&text))
}

/// The `oom_kill N` line of a `memory.events` or `memory.oom_control` file.
pub fn parse_oom_kills(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oom_kills_are_read_from_either_cgroup_version() {
        let v2 = "low 0\nhigh 0\nmax 1207\noom 3\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(parse_oom_kills(v2), 2);
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
        assert_eq!(parse_oom_kills(v1), 1);
        assert_eq!(parse_oom_kills("oom 0\n"), 0);
        assert_eq!(parse_oom_kills(""), 0);
    }
}
