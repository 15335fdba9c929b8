//! Every external command goes through here: argv, exit status, time and stderr are recorded
//! for the run record's provenance, and stdin is closed (mkfs must never ask, and must never
//! be answered: the safety gate decides before it runs).

use crate::error::StackError;
use std::process::{Command, Stdio};
use std::time::Instant;

pub use bakeoff_core::record::CommandRecord;

/// Runs commands and keeps their records.
#[derive(Clone, Debug, Default)]
pub struct Exec {
    /// Everything run so far, in order.
    pub log: Vec<CommandRecord>,
}

impl Exec {
    /// Runs `program args`, returning stdout; a non-zero exit is an error carrying stderr.
    pub fn run(&mut self, program: &str, args: &[&str]) -> Result<String, StackError> {
        let argv: Vec<String> = std::iter::once(program)
            .chain(args.iter().copied())
            .map(str::to_string)
            .collect();
        let start = Instant::now();
        let out = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output();
        let ms = start.elapsed().as_millis() as u64;
        let joined = argv.join(" ");
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                self.log.push(CommandRecord {
                    argv,
                    status: None,
                    ms,
                    stderr: e.to_string(),
                });
                return Err(StackError::Command {
                    argv: joined,
                    status: "not started".into(),
                    stderr: e.to_string(),
                });
            }
        };
        let mut stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        stderr.truncate(2000);
        self.log.push(CommandRecord {
            argv,
            status: out.status.code(),
            ms,
            stderr: stderr.clone(),
        });
        if !out.status.success() {
            let status = out
                .status
                .code()
                .map_or("killed by a signal".into(), |c| format!("exit {c}"));
            // The message keeps the first lines; the record keeps all of stderr.
            let brief: Vec<&str> = stderr
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(2)
                .collect();
            return Err(StackError::Command {
                argv: joined,
                status,
                stderr: brief.join(" / "),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs a command whose failure is expected or harmless (teardown of what may be gone).
    pub fn try_run(&mut self, program: &str, args: &[&str]) -> bool {
        self.run(program, args).is_ok()
    }
}

/// The first line a tool prints for its version (`mkfs.xfs -V`), if it runs.
pub fn version_of(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
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
        assert!(installed("sh") && !installed("no-such-tool-here"));
        assert!(version_of("sh", &["-c", "echo v1.2"])
            .unwrap()
            .contains("v1.2"));
    }
}
