//! What a case left, scoped to what its own bakeoff process made, so that the other lane's tests
//! running beside it are never taken for leaks: loop devices over its images (and their
//! read-only flags), mounts under its images directory (FUSE ones included), processes whose
//! command line, working directory or open files are under it (servers, `exec` commands, the
//! run itself), database socket directories, cgroups and tracefs instances named for its
//! stacks (`KIND-PID-N`), ledgers and images. `zfs-fuse` daemons are machine-wide: they are
//! looked at only in the cases that hold the ZFS lock.

use bakeoff_testkit::walk;
use std::path::Path;

/// Where a case's bakeoff keeps what it makes, and the process that made it.
pub struct Scope<'a> {
    pub images: &'a Path,
    pub state: &'a Path,
    pub pid: u32,
    pub zfs: bool,
}

impl Scope<'_> {
    /// Everything left, one line each; empty when nothing is.
    pub fn leftovers(&self) -> Vec<String> {
        let mut left = self.loops();
        left.extend(self.mounts());
        left.extend(self.processes());
        left.extend(self.named_for_pid());
        if self.zfs {
            let daemons = zfs_daemons();
            if !daemons.is_empty() {
                left.extend(self.pools());
            }
            left.extend(daemons);
        }
        for dir in ["ledger", "stacks"] {
            left.extend(
                walk(&self.state.join(dir))
                    .into_iter()
                    .map(|p| format!("ledger: {}", p.display())),
            );
        }
        left.extend(
            walk(self.images)
                .into_iter()
                .map(|p| format!("file: {}", p.display())),
        );
        left
    }

    fn root(&self) -> String {
        self.images.to_string_lossy().into_owned()
    }

    /// Loop devices over our images, and the read-only flag of any of them.
    fn loops(&self) -> Vec<String> {
        let mut left = Vec::new();
        let Ok(entries) = std::fs::read_dir("/sys/block") else {
            return left;
        };
        for e in entries.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let backing = std::fs::read_to_string(e.path().join("loop/backing_file"));
            let Ok(backing) = backing else { continue };
            if !backing.starts_with(&self.root()) {
                continue;
            }
            left.push(format!("loop device: {name} over {}", backing.trim()));
            let ro = std::fs::read_to_string(e.path().join("ro"));
            if ro.is_ok_and(|r| r.trim() == "1") {
                left.push(format!("read-only flag: {name}"));
            }
        }
        left
    }

    /// Mounts under our images directory, of any type (zfs-fuse's datasets are FUSE mounts).
    fn mounts(&self) -> Vec<String> {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        (mounts.lines())
            .filter(|l| l.contains(&self.root()))
            .map(|l| format!("mount: {l}"))
            .collect()
    }

    /// Processes (besides this test) that run from, name or hold open anything under our
    /// images, or are the case's bakeoff itself: a server, an `exec` command, a client.
    fn processes(&self) -> Vec<String> {
        let root = self.root();
        let me = std::process::id().to_string();
        let mut left = Vec::new();
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return left;
        };
        for p in procs.filter_map(|e| e.ok()) {
            let pid = p.file_name().to_string_lossy().into_owned();
            if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me || zombie(&pid) {
                continue;
            }
            let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let cwd = std::fs::read_link(p.path().join("cwd")).unwrap_or_default();
            let holds = std::fs::read_dir(p.path().join("fd")).ok().and_then(|fds| {
                fds.filter_map(|f| std::fs::read_link(f.ok()?.path()).ok())
                    .find(|t| t.starts_with(&root))
            });
            let why = if pid == self.pid.to_string() {
                Some("the case's bakeoff still runs".to_string())
            } else if cmdline.contains(&root) {
                Some("its command line names the images".to_string())
            } else if cwd.starts_with(&root) {
                Some(format!("runs in {}", cwd.display()))
            } else {
                holds.map(|t| format!("holds {} open", t.display()))
            };
            if let Some(why) = why {
                left.push(format!("process {pid} ({}): {why}", cmdline.trim()));
            }
        }
        left
    }

    /// ZFS pools of this pid's stacks (`bk_zfs-PID-N`), asked of a running zfs-fuse.
    fn pools(&self) -> Vec<String> {
        let mark = format!("-{}-", self.pid);
        let out = std::process::Command::new("zpool")
            .args(["list", "-H", "-o", "name"])
            .output();
        let names = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        (names.unwrap_or_default().lines())
            .filter(|n| n.starts_with("bk_") && n.contains(&mark))
            .map(|n| format!("zfs pool: {n}"))
            .collect()
    }

    /// Cgroups, tracefs instances and socket directories named for this pid's stacks.
    fn named_for_pid(&self) -> Vec<String> {
        let stack_mark = format!("-{}-", self.pid);
        let mut left = Vec::new();
        for dir in cgroup_dirs(Path::new("/sys/fs/cgroup"), 6) {
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with("bakeoff-") && name.contains(&stack_mark) {
                left.push(format!("cgroup: {}", dir.display()));
            }
        }
        let instance = format!("bakeoff-{}-", self.pid);
        for base in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            let Ok(entries) = std::fs::read_dir(Path::new(base).join("instances")) else {
                continue;
            };
            for e in entries.filter_map(|e| e.ok()) {
                if e.file_name().to_string_lossy().starts_with(&instance) {
                    left.push(format!("tracefs instance: {}", e.path().display()));
                }
            }
        }
        for e in std::fs::read_dir("/tmp").into_iter().flatten() {
            let Ok(e) = e else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            let db = name.starts_with("bakeoff-pg-") || name.starts_with("bakeoff-my-");
            if db && name.contains(&stack_mark) {
                left.push(format!("socket directory: {}", e.path().display()));
            }
        }
        left
    }
}

fn zombie(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    (stat.rsplit(')').next())
        .and_then(|rest| rest.split_whitespace().next())
        .is_none_or(|state| state == "Z" || state == "X")
}

/// The directories of the cgroup tree, `depth` levels down.
fn cgroup_dirs(dir: &Path, depth: u32) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    if depth == 0 {
        return found;
    }
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(cgroup_dirs(&e.path(), depth - 1));
            found.push(e.path());
        }
    }
    found
}

/// Live `zfs-fuse` daemons: with the ZFS lock held, no other test's may run.
fn zfs_daemons() -> Vec<String> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .filter_map(|e| e.ok())
        .filter_map(|p| {
            let pid = p.file_name().to_string_lossy().into_owned();
            let comm = std::fs::read_to_string(p.path().join("comm")).ok()?;
            (comm.trim() == "zfs-fuse" && !zombie(&pid)).then(|| format!("zfs-fuse daemon {pid}"))
        })
        .collect()
}
