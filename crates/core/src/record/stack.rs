//! How the stack a run measured was built: its devices, daemons, properties and the commands
//! that made it.

use serde::{Deserialize, Serialize};

/// One external command run while provisioning a stack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandRecord {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Exit code, or `None` if killed by a signal or not started.
    pub status: Option<i32>,
    /// Wall time.
    pub ms: u64,
    /// Standard error, trimmed to 2000 bytes.
    pub stderr: String,
}

/// A device a stack was built on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackingInfo {
    /// Device path (`/dev/loop3`, or the user's device).
    pub device: String,
    /// The sparse image behind a loop device.
    pub image: Option<String>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Loop direct-I/O state, for loop devices.
    pub loop_dio: Option<bool>,
    /// Byte offset of the loop device inside its image (a misaligned partition).
    pub offset_bytes: u64,
    /// Role: `data` or `log`.
    pub role: String,
    /// Signatures found on a user's device and wiped (`wipefs -a`) before building, with the
    /// user's confirmation (`--destroy-data-on`); empty for loop devices and blank devices.
    #[serde(default)]
    pub wiped_signatures: Vec<String>,
}

/// A daemon a stack owns (zfs-fuse; a database server): its CPU is the stack's daemons' CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonInfo {
    /// What it is (`zfs-fuse`, `postgres`).
    pub name: String,
    /// Process id.
    pub pid: i32,
    /// Executable, as `/proc/PID/exe` shows it.
    pub exe: String,
    /// Command line it was started with (program first).
    pub args: Vec<String>,
}

/// How a stack was built: enough to rebuild it and to know what was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackInfo {
    /// Name (`bakeoff stack destroy NAME`).
    pub name: String,
    /// The spec as given.
    pub spec: String,
    /// Kind (`ext4`, `zfs`, ...).
    pub kind: String,
    /// Implementation, e.g. `zfs-fuse 0.7.0` or `kernel`.
    pub backend: String,
    /// Where the workload runs: the mount point or the raw device.
    pub target: String,
    /// Devices it sits on.
    pub backing: Vec<BackingInfo>,
    /// Properties read back from the built stack (`recordsize`, `block_size`, mount options, ...).
    pub properties: std::collections::BTreeMap<String, String>,
    /// Versions of the tools used (mkfs, zfs).
    pub tool_versions: std::collections::BTreeMap<String, String>,
    /// Every command run, in order.
    pub commands: Vec<CommandRecord>,
    /// Whether the run started with cold caches (sync, drop caches, pool re-import).
    pub cold: Option<bool>,
    /// The memory limit the run had, if any.
    pub mem_limit_bytes: Option<u64>,
    /// Daemons the stack owns (zfs-fuse), with their pids.
    #[serde(default)]
    pub daemons: Vec<DaemonInfo>,
    /// Bytes the devices store per byte of data because of the layout's mirroring or parity,
    /// read back from the built stack (`zpool status`, `btrfs filesystem df`): 1 for a single
    /// device or a stripe, n for a mirror of n, 2 for RAID 1+0 and btrfs raid1/raid10/dup,
    /// n/(n-1) for raidz of n; `None` where unknown (tmpfs, an existing directory, mixed vdevs).
    #[serde(default)]
    pub redundancy: Option<f64>,
}
