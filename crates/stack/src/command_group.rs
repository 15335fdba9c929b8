//! A cgroup v2 for each command bakeoff runs on a stack (`bakeoff exec`, a recipe's phases):
//! its `cpu.stat` counts the user and system CPU of the whole command tree (a build forks
//! thousands of processes; a daemonised grandchild is counted too), and `cgroup.kill` stops the
//! whole tree at once: on Ctrl-C, at a timeout, and in `bakeoff cleanup` after a `kill -9`.
//!
//! It is made below the cgroup bakeoff runs in, so a `--mem-limit` applies to the commands: on a
//! unified (v2) hierarchy bakeoff's memory cgroup is their parent; on a hybrid one (v1
//! controllers, v2 at `/sys/fs/cgroup/unified`) every child inherits bakeoff's v1 memory cgroup.
//! `cpu.stat`'s usage counters exist in every v2 cgroup, whether or not the cpu controller is
//! enabled, so nothing needs enabling.

use crate::error::StackError;
use rustix::process::{kill_process, Pid, Signal};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A command tree's cgroup.
#[derive(Debug)]
pub struct CommandGroup {
    path: PathBuf,
}

/// The cgroup v2 this process is in, on the unified hierarchy (`/sys/fs/cgroup`, or
/// `/sys/fs/cgroup/unified` on a hybrid system); `None` without cgroup v2.
pub fn own_v2_cgroup() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .iter()
        .map(|root| Path::new(root).join(rel.trim_start_matches('/')))
        .find(|dir| dir.join("cgroup.procs").exists() && dir.join("cpu.stat").exists())
}

impl CommandGroup {
    /// The cgroup at `path`, which the caller has recorded in a ledger
    /// ([`crate::undo::entry::Undo::KillCgroup`]) and which must not exist yet.
    /// `None` where this process may not make cgroups (not root): the caller then measures
    /// with `getrusage`.
    pub(crate) fn create(path: PathBuf) -> Result<Option<CommandGroup>, StackError> {
        match std::fs::create_dir(&path) {
            Ok(()) => Ok(Some(CommandGroup { path })),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EACCES | libc::EPERM | libc::EROFS)
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(StackError::io("creating cgroup", &path)(e)),
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `argv` run so that it starts inside the cgroup: a shell writes its own pid into
    /// `cgroup.procs`, then execs `argv`, so that no child can be forked outside it first.
    /// It also raises its `oom_score_adj` to [`bakeoff_probe::WORKLOAD_OOM_SCORE_ADJ`]: under a
    /// memory limit the command, not bakeoff, is what the OOM killer should take.
    pub fn wrap(&self, argv: &[String]) -> Vec<String> {
        let mut wrapped = vec![
            "/bin/sh".to_string(),
            "-c".into(),
            format!(
                r#"echo $$ > "$0" && {{ echo {} > /proc/self/oom_score_adj; }} 2>/dev/null; exec "$@""#,
                bakeoff_probe::WORKLOAD_OOM_SCORE_ADJ
            ),
            self.path
                .join("cgroup.procs")
                .to_string_lossy()
                .into_owned(),
        ];
        wrapped.extend(argv.iter().cloned());
        wrapped
    }

    /// User and system CPU of everything that ran in it so far, in microseconds.
    pub fn cpu_us(&self) -> Result<(u64, u64), StackError> {
        let stat = self.path.join("cpu.stat");
        let text = std::fs::read_to_string(&stat).map_err(StackError::io("reading", &stat))?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
        };
        match (field("user_usec "), field("system_usec ")) {
            (Some(u), Some(s)) => Ok((u, s)),
            _ => Err(StackError::Environment(format!(
                "{} has no user_usec and system_usec",
                stat.display()
            ))),
        }
    }

    /// True while a process of the tree still runs.
    pub fn populated(&self) -> bool {
        !pids(&self.path).is_empty()
    }

    /// Kills every process in it and waits until they are gone.
    pub fn kill(&self) -> Result<(), String> {
        kill_all(&self.path)
    }

    /// Kills what is left in it and removes it.
    pub fn remove(self) -> Result<(), String> {
        kill_and_remove(&self.path)
    }
}

fn pids(dir: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    text.split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// SIGKILLs every process of the cgroup at `dir` (through `cgroup.kill` where the kernel has
/// it, 5.14+) until none is left; gone already is fine.
fn kill_all(dir: &Path) -> Result<(), String> {
    let start = Instant::now();
    while dir.exists() && !pids(dir).is_empty() {
        if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
            // No cgroup.kill: one by one, again until a fork in between has nothing left.
            for pid in pids(dir).into_iter().filter_map(Pid::from_raw) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
        if start.elapsed() > Duration::from_secs(10) {
            return Err(format!(
                "the processes of cgroup {} did not die: {:?}",
                dir.display(),
                pids(dir)
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// [`kill_all`], then removes the cgroup (retried while the kernel still counts dying tasks).
pub(crate) fn kill_and_remove(dir: &Path) -> Result<(), String> {
    kill_all(dir)?;
    let start = Instant::now();
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if start.elapsed() > Duration::from_secs(5) => {
                return Err(format!("removing cgroup {}: {e}", dir.display()))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::StackSpec;
    use crate::stack::{Options, Stack};
    use std::process::Command;

    #[test]
    fn a_tree_is_counted_whole_and_killed_whole_and_teardown_removes_its_cgroup() {
        let root = rustix::process::geteuid().is_root();
        let v2 = super::own_v2_cgroup().is_some();
        if !bakeoff_testkit::require(root && v2, "root and cgroup v2") {
            return;
        }
        let scratch = tempfile::tempdir().unwrap();
        std::env::set_var("BAKEOFF_STATE_DIR", scratch.path().join("state"));
        let spec = StackSpec::parse(&format!("dir={}", scratch.path().display())).unwrap();
        let opts = Options {
            images: scratch.path().join("images"),
            ..Options::default()
        };
        let mut stack = Stack::create(&spec, &opts).unwrap();
        let group = stack.command_group("t").unwrap().unwrap();
        // A grandchild burns CPU after its parent exited; another is left sleeping.
        let script = "(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done) & wait; sleep 600 &";
        let argv = ["/bin/sh".to_string(), "-c".into(), script.into()];
        let status = Command::new(&group.wrap(&argv)[0])
            .args(&group.wrap(&argv)[1..])
            .status()
            .unwrap();
        assert!(status.success());
        let (user, _) = group.cpu_us().unwrap();
        assert!(user > 50_000, "the grandchild's loop is counted: {user} us");
        assert!(
            group.populated(),
            "the sleeping grandchild is in the cgroup"
        );
        group.kill().unwrap();
        assert!(!group.populated());
        let path = group.path().to_path_buf();
        assert!(path.exists());
        stack.destroy().unwrap();
        assert!(!path.exists(), "teardown replays the recorded undo");
    }
}
