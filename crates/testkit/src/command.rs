//! Running the system tools a test sets its scene up with.

use std::path::PathBuf;
use std::process::{Child, Command};

/// Runs `program` with `args`, which must succeed; its stdout, trimmed. Panics with its stderr.
pub fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Runs a cleanup command: a failure is reported, not raised (the test may be unwinding).
pub fn quiet(program: &str, args: &[&str]) {
    match Command::new(program).args(args).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => eprintln!("{program} {args:?}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("{program}: {e}"),
    }
}

/// Whether `program` runs and succeeds (a tool is installed, a path is a mount point).
pub fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Where `program` is on `PATH`.
pub fn which(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

/// A child process the test started, killed and reaped on drop (also when an assertion failed).
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
