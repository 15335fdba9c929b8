//! What a stack type is: its [`Driver`] (its keys and its hooks) and what its build returns
//! ([`Built`]); the defaults most types share ([`Driver::basic`]).

use super::limits::SizeLimits;
use crate::backing::{Backing, Ctx};
use crate::daemon::Daemon;
use crate::error::StackError;
use crate::exec::Exec;
use crate::spec::{Parsed, StackSpec};
use bakeoff_core::job::KeyDoc;
use bakeoff_core::phaserecord::SpaceRecord;
use bakeoff_core::record::StackInfo;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a driver built.
#[derive(Clone, Debug, Default)]
pub struct Built {
    /// Where the workload runs: a mount point or a raw device.
    pub target: PathBuf,
    /// Implementation (`kernel`, `zfs-fuse 0.7.0`, `OpenZFS 2.2.0`).
    pub backend: String,
    /// Properties read back.
    pub properties: BTreeMap<String, String>,
    /// Tool versions.
    pub versions: BTreeMap<String, String>,
    /// Daemons started for the stack (zfs-fuse).
    pub daemons: Vec<Daemon>,
    /// Bytes the devices store per byte of data, from what was read back (see
    /// [`StackInfo::redundancy`]).
    pub redundancy: Option<f64>,
}

/// Where a stack keeps its data, known before it is built: what a dry run checks for room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Room {
    /// Its backing devices (loop images or the user's), of which its file system keeps
    /// [`Driver::capacity`] for data.
    Devices,
    /// Memory, this many bytes (tmpfs's size).
    Memory(u64),
    /// An existing directory: what its file system has free.
    Directory(PathBuf),
}

/// A stack type, fio style: a table of what it is and its hooks: its keys, how it is built on
/// its backing devices, made cold before a run and checked for health. The stack and the spec's
/// parser call them and have no per-type branches.
pub struct Driver {
    /// The type's name in specs (`ext4`).
    pub name: &'static str,
    /// Building it needs root (loop devices, mkfs, mount).
    pub needs_root: bool,
    /// The workload runs on the backing device itself (raw): no file system, so no files.
    pub block_device: bool,
    /// Where its data goes, known before it is built: backing devices (whose room its
    /// `capacity` says), memory or an existing directory.
    pub room: fn(&StackSpec) -> Room,
    /// Which of the common keys ([`COMMON_KEYS`](crate::spec::COMMON_KEYS)) it takes.
    pub common: &'static [&'static str],
    /// Its own keys, documented; kept as written in [`StackSpec::options`] and, parsed by
    /// `check`, in [`StackSpec::typed`].
    pub keys: &'static [KeyDoc],
    /// Checks its own keys' values and the rules between keys (`layout=mirror` needs two
    /// devices) and parses them into the value its other hooks read ([`StackSpec::typed`]); the
    /// reason if the spec cannot be built.
    pub check: fn(&StackSpec) -> Result<Parsed, String>,
    /// The role of each backing device (`data`, `log`); none for types without devices.
    pub roles: fn(&StackSpec) -> Vec<&'static str>,
    /// The tool it lacks here and the Debian package that has it; `None` if it can be built.
    pub missing_tool: fn() -> Option<(&'static str, &'static str)>,
    /// Makes the file system or pool on the backing devices, mounts it, reads back what was
    /// built.
    pub build: fn(&StackSpec, &mut [Backing], &mut Ctx) -> Result<Built, StackError>,
    /// What the next run needs to start cold besides the page-cache drop every stack gets
    /// (ZFS: export and re-import the pool, so the ARC starts cold).
    pub prepare_cold: fn(&StackInfo, &mut Exec) -> Result<(), StackError>,
    /// Whether the stack can serve I/O, besides its daemons running (ZFS: the pool is ONLINE).
    pub health: fn(&StackInfo, &mut Exec) -> Result<(), StackError>,
    /// Space use and compression of the file system mounted at the path, read back after a
    /// run of phases (`df` unless the type knows better); `None` for a raw device.
    pub space: fn(&StackInfo, &Path, &mut Exec) -> Result<Option<SpaceRecord>, StackError>,
    /// The device sizes it can be built on.
    pub size_limits: fn(&StackSpec) -> SizeLimits,
    /// Bytes the built stack holds for data (`statvfs`'s available bytes, which the run
    /// checks once built) on backing devices of that many bytes each: what its file system
    /// keeps, over the data devices its profile or layout gives (see [`capacity`](mod@super::capacity)).
    pub capacity: fn(&StackSpec, u64) -> u64,
    /// Bytes its mkfs allocates in a sparse image of a device of that size (inode tables,
    /// journal), besides the data.
    pub mkfs_bytes: fn(u64) -> u64,
    /// The kernel file-system type whose parser checks `mount=` before anything is built;
    /// `None` where the driver checks its options itself (ZFS) or takes none.
    pub mount_type: Option<&'static str>,
    /// How a crash state of it is brought back and checked (`e2fsck -fn` of its unmounted
    /// devices, a ZFS pool's import and scrub); `None` where its states cannot be checked.
    pub crash_state: Option<super::check::StateChecking>,
    /// It writes a block's new version elsewhere and frees the old one only when a
    /// transaction commits (btrfs, ZFS): a workload that rewrites its data needs free room
    /// beyond the data, so `--size auto` leaves it some.
    pub copy_on_write: bool,
}

impl Driver {
    /// The type `name` built by `build`, with what most types share: it needs root, holds a
    /// file system on its backing devices, takes none of the common keys and no keys of its
    /// own, has a data device per `devices=`, needs no tool, has nothing to do before a cold
    /// run or for its health, and reads its space back with `df`. A driver changes what
    /// differs (`Driver { common: KERNEL_KEYS, ..Driver::basic("ext4", build) }`).
    pub const fn basic(
        name: &'static str,
        build: fn(&StackSpec, &mut [Backing], &mut Ctx) -> Result<Built, StackError>,
    ) -> Driver {
        Driver {
            name,
            needs_root: true,
            block_device: false,
            room: |_| Room::Devices,
            common: &[],
            keys: &[],
            check: no_rules,
            roles: data_devices,
            missing_tool: || None,
            build,
            prepare_cold: nothing,
            health: nothing,
            space: super::space::df,
            size_limits: |_| SizeLimits::NONE,
            capacity: super::capacity::whole,
            mkfs_bytes: |_| 0,
            mount_type: None,
            crash_state: None,
            copy_on_write: false,
        }
    }
}

/// The common keys kernel file systems on loop or user devices take.
pub(crate) const KERNEL_KEYS: &[&str] = &["size", "devices", "mkfs", "mount", "offset"];

/// For the hooks of types that have nothing to do there.
pub(crate) fn nothing(_: &StackInfo, _: &mut Exec) -> Result<(), StackError> {
    Ok(())
}

/// The check of types whose only keys are common ones (checked by the spec itself).
pub(crate) fn no_rules(_: &StackSpec) -> Result<Parsed, String> {
    Ok(Arc::new(()))
}

/// One data device per `devices=`.
pub(crate) fn data_devices(spec: &StackSpec) -> Vec<&'static str> {
    vec!["data"; spec.devices as usize]
}

/// No backing devices (tmpfs, dir).
pub(crate) fn no_devices(_: &StackSpec) -> Vec<&'static str> {
    Vec::new()
}
