//! Write logs whose process was killed. The FUSE daemon runs in the run's own process, and the
//! run's stack sits on loop devices over its mount: after a kill -9, the loop devices' pending
//! writes wait for answers from a daemon that is gone, while the dying process cannot finish
//! exiting until they are answered (a zombie whose open files, ledger locks included, are
//! never released). `bakeoff cleanup` aborts such a mount's FUSE connection first
//! (`/sys/fs/fuse/connections/N/abort`): the waits fail, the process ends, its ledgers become
//! stale and are replayed as any other.

use crate::exec::Exec;
use std::path::{Path, PathBuf};

/// The file-system name a recorder's mount carries, with its process's id.
pub fn fs_name(pid: u32) -> String {
    format!("{FS_NAME_PREFIX}{pid}")
}

const FS_NAME_PREFIX: &str = "bakeoff-writelog-";
const FS_TYPE: &str = "fuse.bakeoff-writelog";
const CONNECTIONS: &str = "/sys/fs/fuse/connections";

/// A write log's mount as `/proc/self/mountinfo` shows it.
#[derive(Debug, PartialEq, Eq)]
pub struct LogMount {
    /// Where it is mounted.
    pub mountpoint: PathBuf,
    /// The FUSE connection's number (the mount's minor device number).
    pub connection: u32,
    /// The process serving it.
    pub pid: u32,
}

/// The write logs' mounts among the lines of a `mountinfo` file.
pub fn parse_mountinfo(text: &str) -> Vec<LogMount> {
    (bakeoff_probe::parse_mountinfo(text).into_iter())
        .filter(|m| m.fstype == FS_TYPE)
        .filter_map(|m| {
            let pid = m.source.strip_prefix(FS_NAME_PREFIX)?.parse().ok()?;
            Some(LogMount {
                mountpoint: PathBuf::from(m.mount_point),
                connection: m.minor,
                pid,
            })
        })
        .collect()
}

/// Whether the process `pid` has ended: gone, or a zombie (`Z`, or `X` dead).
fn ended(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    matches!(state, Some("Z" | "X"))
}

/// Aborts the FUSE connection of every write log whose process has ended (see the module),
/// mounting the FUSE control file system where it is missing; returns what was aborted.
pub fn abort_orphaned(exec: &mut Exec) -> Result<Vec<LogMount>, String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
    let orphans: Vec<LogMount> = (parse_mountinfo(&info).into_iter())
        .filter(|m| m.pid != std::process::id() && ended(m.pid))
        .collect();
    if orphans.is_empty() {
        return Ok(orphans);
    }
    if !Path::new(CONNECTIONS)
        .join(orphans[0].connection.to_string())
        .exists()
    {
        exec.run("mount", &["-t", "fusectl", "fusectl", CONNECTIONS])
            .map_err(|e| format!("mounting the FUSE control file system on {CONNECTIONS}: {e}"))?;
    }
    for m in &orphans {
        let abort = Path::new(CONNECTIONS)
            .join(m.connection.to_string())
            .join("abort");
        std::fs::write(&abort, b"1").map_err(|e| {
            format!(
                "{}: {e} (the write log at {} of ended process {})",
                abort.display(),
                m.mountpoint.display(),
                m.pid
            )
        })?;
    }
    Ok(orphans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_write_log_mounts_are_read_with_their_connection_and_process() {
        let info = "\
43 27 0:39 / /var/tmp/bakeoff/write-log-16038/fuse rw,nosuid,nodev,noexec,relatime - fuse.bakeoff-writelog bakeoff-writelog-16038 rw,user_id=0,group_id=0
44 27 7:0 / /var/tmp/bakeoff/ext4-16038-0/mnt rw,relatime - ext4 /dev/loop0 rw
45 27 0:40 / /tmp/a\\040b shared:7 - fuse.bakeoff-writelog bakeoff-writelog-9 rw
46 27 0:41 / /tmp/old - fuse.bakeoff-writelog bakeoff-writelog rw
47 27 0:42 / /mnt/other - fuse.sshfs bakeoff-writelog-3 rw
";
        let found = parse_mountinfo(info);
        assert_eq!(
            found,
            vec![
                LogMount {
                    mountpoint: "/var/tmp/bakeoff/write-log-16038/fuse".into(),
                    connection: 39,
                    pid: 16038,
                },
                LogMount {
                    mountpoint: "/tmp/a b".into(),
                    connection: 40,
                    pid: 9,
                },
            ]
        );
    }

    #[test]
    fn a_live_process_has_not_ended_and_a_missing_one_has() {
        assert!(!ended(std::process::id()));
        assert!(ended(u32::MAX - 1));
    }
}
