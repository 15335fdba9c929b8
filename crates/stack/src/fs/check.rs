//! A file system's own check, read-only, on its unmounted devices: what a crash state is put
//! through before anything mounts it for a database (`e2fsck -fn`, `xfs_repair -n`,
//! `btrfs check --readonly`). Journaling file systems replay their log when mounted, and their
//! checks refuse or report the unreplayed log as damage, so a caller mounts and unmounts a
//! crash state once first (the kernel's recovery), then checks.

use crate::error::StackError;
use crate::exec::{Cmd, Exec};
use std::path::PathBuf;
use std::time::Duration;

/// How long a check may take on a benchmark-sized device.
const CHECK_TIMEOUT: Duration = Duration::from_secs(600);

/// What a file system's check said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsCheck {
    /// The command that checked (`e2fsck -fn /dev/loop3`).
    pub command: String,
    /// It found nothing to repair.
    pub clean: bool,
    /// Its first lines about what it found (empty when clean).
    pub found: String,
}

/// A type's check: its devices (the data devices first, as built), unmounted.
pub type CheckFn = fn(&[PathBuf], &mut Exec) -> Result<FsCheck, StackError>;

/// How a crash state of a type is brought back and checked, as after an outage.
#[derive(Clone, Copy, Debug)]
pub enum StateChecking {
    /// A kernel file system: mounted as its `mount_type` (the kernel replays its journal),
    /// unmounted, checked read-only by this, then mounted again for the database.
    Kernel(CheckFn),
    /// A ZFS pool: imported from the state's devices (its own recovery: the newest valid
    /// uberblock, then the intent log when the dataset mounts), scrubbed, read back by
    /// `zpool status -x` ([`crate::fs::zfs::state`]).
    Pool,
}

/// ext4: `e2fsck -fn` (forced, answering no): exit 0 is clean, 4 is damage left uncorrected,
/// 12 damage it could not go past (no root directory: "Cannot proceed").
pub fn ext4(devices: &[PathBuf], exec: &mut Exec) -> Result<FsCheck, StackError> {
    run("e2fsck", &["-f", "-n"], devices, exec, &[0], &[4, 12])
}

/// xfs: `xfs_repair -n` (no modify): exit 0 is clean, 1 is damage found.
pub fn xfs(devices: &[PathBuf], exec: &mut Exec) -> Result<FsCheck, StackError> {
    run("xfs_repair", &["-n"], devices, exec, &[0], &[1])
}

/// btrfs: `btrfs check --readonly` on the first device (it finds the others by scanning):
/// exit 0 is clean, 1 is damage found.
pub fn btrfs(devices: &[PathBuf], exec: &mut Exec) -> Result<FsCheck, StackError> {
    let scan = Cmd::new("btrfs", &["device", "scan"]);
    let _ = exec.output(&scan);
    run(
        "btrfs",
        &["check", "--readonly"],
        &devices[..devices.len().min(1)],
        exec,
        &[0],
        &[1],
    )
}

/// Runs `program args device` for the first device; exit codes in `clean` or `damaged` are
/// answers, any other is the check failing (a device it cannot read, a missing tool).
fn run(
    program: &str,
    args: &[&str],
    devices: &[PathBuf],
    exec: &mut Exec,
    clean: &[i32],
    damaged: &[i32],
) -> Result<FsCheck, StackError> {
    let Some(device) = devices.first() else {
        return Err(StackError::Environment(format!(
            "{program}: no device to check"
        )));
    };
    let device = device.to_string_lossy().into_owned();
    let mut argv: Vec<&str> = args.to_vec();
    argv.push(&device);
    let cmd = Cmd::new(program, &argv).timeout(CHECK_TIMEOUT);
    let out = exec.output(&cmd)?;
    let command = cmd.argv().join(" ");
    match out.status {
        Some(code) if clean.contains(&code) => Ok(FsCheck {
            command,
            clean: true,
            found: String::new(),
        }),
        Some(code) if damaged.contains(&code) => Ok(FsCheck {
            command,
            clean: false,
            found: findings(&format!("{}\n{}", out.stdout, out.stderr), 6),
        }),
        _ => Err(StackError::Command {
            argv: command,
            status: out.describe(),
            stderr: first_lines(&out.stderr, 2),
        }),
    }
}

/// The first `n` lines of a check's output that say what it found, leaving out its progress
/// (`Phase 3 - ...`, `Pass 1: ...`, `[2/7] checking extents`, its version line).
fn findings(text: &str, n: usize) -> String {
    const PROGRESS: [&str; 8] = [
        "Phase ",
        "Pass ",
        "- ",
        "[",
        "No modify flag",
        "e2fsck ",
        "Opening ",
        "Checking ",
    ];
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !PROGRESS.iter().any(|p| l.starts_with(p)))
        .take(n)
        .collect();
    lines.join(" / ")
}

/// The first `n` non-empty lines of `text`, joined by " / ".
pub(crate) fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(n)
        .collect();
    lines.join(" / ")
}

#[cfg(test)]
mod tests {
    use super::{findings, first_lines};

    #[test]
    fn findings_keep_their_first_lines() {
        assert_eq!(first_lines("\n a \n\nb\nc\n", 2), "a / b");
        assert_eq!(first_lines("", 3), "");
    }

    #[test]
    fn findings_leave_out_progress() {
        let xfs = "Phase 1 - find and verify superblock...\n        - zero log...\n\
                   imap claims a free inode 128 is in use, would correct imap\n\
                   Phase 4 - check for duplicate blocks...\nroot inode would be lost\n";
        assert_eq!(
            findings(xfs, 6),
            "imap claims a free inode 128 is in use, would correct imap / root inode would be lost"
        );
    }
}
