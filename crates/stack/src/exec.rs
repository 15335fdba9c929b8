//! Every external command goes through here: the safety gate's probes, mkfs, mount, zpool, the
//! daemons' start and stop, teardown. Each runs with stdin closed (mkfs must never ask, and must
//! never be answered: the safety gate decides before it runs), the C locale (its output is
//! parsed), a time limit (a hung daemon must not block teardown forever), optionally as another
//! user, and leaves a record (argv, exit status, time, stderr) for the run record's provenance.

use crate::error::StackError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use bakeoff_core::record::CommandRecord;

/// Time limit of a command unless it says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Time limit of the safety gate's probes and health checks: a stopped daemon or a dying disk
/// must refuse or fail quickly, not hang.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
/// Time limit of mkfs: writing every inode table of a large real disk takes minutes.
pub const MKFS_TIMEOUT: Duration = Duration::from_secs(3600);
/// Between SIGTERM to a command that ran out of time and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// A user and group to run a command as (a database server runs as `postgres`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunAs {
    /// User id.
    pub uid: u32,
    /// Group id (supplementary groups are dropped).
    pub gid: u32,
}

/// A command to run: program, arguments, time limit, user, extra environment.
#[derive(Clone, Debug)]
pub struct Cmd {
    program: String,
    args: Vec<String>,
    timeout: Duration,
    user: Option<RunAs>,
    env: Vec<(String, String)>,
}

impl Cmd {
    /// `program args`, within [`DEFAULT_TIMEOUT`], as the current user.
    pub fn new(program: &str, args: &[&str]) -> Cmd {
        Cmd {
            program: program.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            timeout: DEFAULT_TIMEOUT,
            user: None,
            env: Vec::new(),
        }
    }

    /// With this time limit: past it, the command's process group gets SIGTERM, then SIGKILL.
    pub fn timeout(mut self, limit: Duration) -> Cmd {
        self.timeout = limit;
        self
    }

    /// Run as `user` (needs root): `initdb` and `pg_ctl` refuse to run as root.
    pub fn user(mut self, user: Option<RunAs>) -> Cmd {
        self.user = user;
        self
    }

    /// With `key=value` in its environment (besides `LC_ALL=C`).
    pub fn env(mut self, key: &str, value: &str) -> Cmd {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Program and arguments.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// What a command did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Exit code; `None` if a signal ended it (or we did, at its time limit).
    pub status: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error, trimmed.
    pub stderr: String,
    /// It ran out of time and was killed.
    pub timed_out: bool,
    /// It was stopped because the caller's stop flag was raised (Ctrl-C).
    pub stopped: bool,
}

impl Outcome {
    /// Exit code 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// `exit 3`, `killed by a signal`, `timed out and was killed`.
    pub fn describe(&self) -> String {
        match (self.status, self.timed_out) {
            _ if self.stopped => "stopped on request".into(),
            (_, true) => "timed out and was killed".into(),
            (Some(c), _) => format!("exit {c}"),
            (None, _) => "killed by a signal".into(),
        }
    }
}

/// [`Outcome::describe`] with the time limit a command ran out of.
fn describe(out: &Outcome, cmd: &Cmd) -> String {
    if out.timed_out {
        let limit = cmd.timeout.as_secs_f64();
        return format!("timed out after {limit:.1} s and was killed");
    }
    out.describe()
}

/// Runs commands and keeps their records.
#[derive(Clone, Debug, Default)]
pub struct Exec {
    /// Everything run so far, in order.
    pub log: Vec<CommandRecord>,
}

impl Exec {
    /// Runs `cmd` whatever its exit status; an error only if it could not be started.
    pub fn output(&mut self, cmd: &Cmd) -> Result<Outcome, StackError> {
        self.output_until(cmd, &AtomicBool::new(false))
    }

    /// [`Exec::output`], stopping the command (SIGTERM, then SIGKILL, to its process group)
    /// as soon as `stop` is raised: a long-running tool under a Ctrl-C.
    pub fn output_until(&mut self, cmd: &Cmd, stop: &AtomicBool) -> Result<Outcome, StackError> {
        let start = Instant::now();
        let result = spawn_and_wait(cmd, stop);
        let ms = start.elapsed().as_millis() as u64;
        let argv = cmd.argv();
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                let stderr = e.to_string();
                self.log.push(CommandRecord {
                    argv: argv.clone(),
                    status: None,
                    ms,
                    stderr: stderr.clone(),
                });
                return Err(StackError::Command {
                    argv: argv.join(" "),
                    status: "not started".into(),
                    stderr,
                });
            }
        };
        let mut stderr = out.stderr.clone();
        if out.timed_out {
            stderr = format!("{stderr} (bakeoff: {})", describe(&out, cmd));
        }
        stderr.truncate(2000);
        self.log.push(CommandRecord {
            argv,
            status: out.status,
            ms,
            stderr,
        });
        Ok(out)
    }

    /// Runs `cmd`, returning stdout; a non-zero exit is an error carrying stderr.
    pub fn run_cmd(&mut self, cmd: &Cmd) -> Result<String, StackError> {
        let out = self.output(cmd)?;
        if !out.success() {
            // The message keeps the first lines; the record keeps all of stderr.
            let brief: Vec<&str> = out
                .stderr
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(2)
                .collect();
            return Err(StackError::Command {
                argv: cmd.argv().join(" "),
                status: describe(&out, cmd),
                stderr: brief.join(" / "),
            });
        }
        Ok(out.stdout)
    }

    /// Runs `program args` with the defaults, returning stdout; see [`Exec::run_cmd`].
    pub fn run(&mut self, program: &str, args: &[&str]) -> Result<String, StackError> {
        self.run_cmd(&Cmd::new(program, args))
    }

    /// Runs `program args`, retrying for up to `limit` while it fails with "busy": zfs-fuse
    /// releases a dataset a moment after its files are closed (later still after O_DIRECT
    /// opens through FUSE), so an export or destroy right after I/O can find it busy.
    pub fn run_retrying_busy(
        &mut self,
        program: &str,
        args: &[&str],
        limit: std::time::Duration,
    ) -> Result<String, StackError> {
        let start = std::time::Instant::now();
        loop {
            match self.run(program, args) {
                Err(e) if e.to_string().contains("busy") && start.elapsed() < limit => {
                    std::thread::sleep(std::time::Duration::from_millis(250))
                }
                other => return other,
            }
        }
    }

    /// Runs a command whose failure is expected or harmless (teardown of what may be gone).
    pub fn try_run(&mut self, program: &str, args: &[&str]) -> bool {
        self.run(program, args).is_ok()
    }

    /// The first line a tool prints for its version (`mkfs.xfs -V`), if it runs.
    pub fn version_of(&mut self, program: &str, args: &[&str]) -> Option<String> {
        let out = self
            .output(&Cmd::new(program, args).timeout(PROBE_TIMEOUT))
            .ok()?;
        let text = if out.stdout.trim().is_empty() {
            &out.stderr
        } else {
            &out.stdout
        };
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    }
}

/// Spawns `cmd` in its own process group with output to unnamed temporary files (a daemon that
/// forks keeps them open: pipes would never reach end-of-file), and waits within its limit.
fn spawn_and_wait(cmd: &Cmd, stop: &AtomicBool) -> std::io::Result<Outcome> {
    let (mut out, mut err) = (tempfile::tempfile()?, tempfile::tempfile()?);
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .env("LC_ALL", "C")
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(err.try_clone()?)
        .process_group(0);
    if let Some(user) = cmd.user {
        command.uid(user.uid).gid(user.gid);
    }
    let mut child = command.spawn()?;
    let deadline = Instant::now() + cmd.timeout;
    let (status, ended) = match wait_until(&mut child, deadline, stop)? {
        Some(status) => (status, false),
        None => (stop_group(&mut child)?, true),
    };
    let stopped = ended && stop.load(Ordering::Relaxed);
    Ok(Outcome {
        status: status.code(),
        stdout: read_all(&mut out)?,
        stderr: read_all(&mut err)?.trim().to_string(),
        timed_out: ended && !stopped,
        stopped,
    })
}

/// The child's exit status, or `None` at `deadline` or once `stop` is raised. Polls from 1 ms
/// up to 50 ms, so quick commands (most of them) cost no more than they take.
fn wait_until(
    child: &mut std::process::Child,
    deadline: Instant,
    stop: &AtomicBool,
) -> std::io::Result<Option<ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// SIGTERM to the child's process group, SIGKILL after a grace period; its exit status.
fn stop_group(child: &mut std::process::Child) -> std::io::Result<ExitStatus> {
    use rustix::process::{kill_process_group, Pid, Signal};
    let group = Pid::from_raw(child.id() as i32);
    if let Some(g) = group {
        let _ = kill_process_group(g, Signal::TERM);
    }
    let never = AtomicBool::new(false);
    if let Some(status) = wait_until(child, Instant::now() + KILL_GRACE, &never)? {
        return Ok(status);
    }
    if let Some(g) = group {
        let _ = kill_process_group(g, Signal::KILL);
    }
    child.wait()
}

fn read_all(file: &mut File) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// True if `program` is on the PATH (or an absolute path that exists).
pub fn installed(program: &str) -> bool {
    let found = |dir: &std::path::Path| dir.join(program).is_file();
    if program.contains('/') {
        return std::path::Path::new(program).is_file();
    }
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| found(&d)))
        || ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
            .iter()
            .any(|d| found(std::path::Path::new(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_commands_and_failures() {
        let mut exec = Exec::default();
        assert_eq!(exec.run("echo", &["hi"]).unwrap(), "hi\n");
        let err = exec
            .run("sh", &["-c", "echo nope >&2; exit 3"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("exit 3") && err.contains("nope"), "{err}");
        assert_eq!(exec.log.len(), 2);
        assert_eq!(exec.log[1].status, Some(3));
        assert!(exec.run("/nonexistent/tool", &[]).is_err());
        assert_eq!(
            exec.log.len(),
            3,
            "a command that did not start is recorded"
        );
        assert!(installed("sh") && !installed("no-such-tool-here"));
        let v = exec.version_of("sh", &["-c", "echo v1.2 >&2; exit 1"]);
        assert!(v.unwrap().contains("v1.2"));
        assert_eq!(exec.log.len(), 4, "version probes are recorded too");
    }

    #[test]
    fn every_command_gets_the_c_locale_a_closed_stdin_and_an_environment() {
        let mut exec = Exec::default();
        let env = Cmd::new("sh", &["-c", "echo $LC_ALL $EXTRA; cat"]).env("EXTRA", "x");
        assert_eq!(exec.run_cmd(&env).unwrap(), "C x\n");
    }

    #[test]
    fn a_command_past_its_limit_is_killed_with_its_children() {
        let mut exec = Exec::default();
        let start = Instant::now();
        // The shell ignores SIGTERM: only the SIGKILL after the grace period ends it.
        let hung = Cmd::new("sh", &["-c", "trap '' TERM; sleep 30 & wait"])
            .timeout(Duration::from_millis(200));
        let err = exec.run_cmd(&hung).unwrap_err().to_string();
        let took = start.elapsed();
        assert!(err.contains("timed out after 0.2 s"), "{err}");
        assert!(took < Duration::from_secs(10), "took {took:?}");
        assert_eq!(exec.log[0].status, None);
        assert!(exec.log[0].stderr.contains("timed out"));
        // A daemon that forks and keeps its output open does not hold us up.
        let forks = Cmd::new("sh", &["-c", "(sleep 5 &) ; echo started"]);
        let start = Instant::now();
        assert_eq!(exec.run_cmd(&forks).unwrap(), "started\n");
        assert!(start.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_command_runs_as_the_user_given() {
        if !rustix::process::geteuid().is_root() {
            // Only root can switch users: CI runs as root, so there this must not skip.
            assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "needs root");
            return;
        }
        let nobody = RunAs {
            uid: 65534,
            gid: 65534,
        };
        let mut exec = Exec::default();
        let out = exec.run_cmd(&Cmd::new("id", &["-u"]).user(Some(nobody)));
        assert_eq!(out.unwrap().trim(), "65534");
        let groups = exec.run_cmd(&Cmd::new("id", &["-G"]).user(Some(nobody)));
        assert_eq!(
            groups.unwrap().trim(),
            "65534",
            "supplementary groups dropped"
        );
    }
}
