//! One driver per stack kind: make the file system or pool on the backing devices, mount it,
//! read back what was built, make it cold before a run, check its health; its own spec keys.
//! Adding a file system is a file here with its [`Driver`] and a line in [`DRIVERS`].

mod btrfs;
pub mod capacity;
mod extfs;
pub mod limits;
mod simple;
pub(crate) mod space;
mod xfs;
pub mod zfs;

use crate::backing::{hand_over, Backing, Ctx};
use crate::daemon::Daemon;
use crate::error::StackError;
use crate::exec::{Cmd, Exec, MKFS_TIMEOUT};
use crate::spec::{StackKind, StackSpec};
use crate::undo::Undo;
use bakeoff_core::job::KeyDoc;
use bakeoff_core::phaserecord::SpaceRecord;
use bakeoff_core::record::StackInfo;
use limits::SizeLimits;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a driver built.
#[derive(Clone, Debug, Default)]
pub struct Built {
    /// Where the workload runs: a mount point or a raw device.
    pub target: PathBuf,
    /// The target is a block device.
    pub is_device: bool,
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

/// A stack type, fio style: a table of what it is and its hooks: its keys, how it is built on
/// its backing devices, made cold before a run and checked for health. [`crate::Stack`] and
/// [`crate::spec`] call them and have no per-type branches.
pub struct Driver {
    /// The type's name in specs (`ext4`).
    pub name: &'static str,
    /// Building it needs root (loop devices, mkfs, mount).
    pub needs_root: bool,
    /// Which of the common keys ([`crate::spec::COMMON_KEYS`]) it takes.
    pub common: &'static [&'static str],
    /// Its own keys, documented; kept as written in [`StackSpec::options`].
    pub keys: &'static [KeyDoc],
    /// Checks its own keys' values and the rules between keys (`layout=mirror` needs two
    /// devices): the reason if the spec cannot be built.
    pub check: fn(&StackSpec) -> Result<(), String>,
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
    /// keeps, over the data devices its profile or layout gives (see [`capacity`]).
    pub capacity: fn(&StackSpec, u64) -> u64,
    /// Bytes its mkfs allocates in a sparse image of a device of that size (inode tables,
    /// journal), besides the data.
    pub mkfs_bytes: fn(u64) -> u64,
    /// The kernel file-system type whose parser checks `mount=` before anything is built;
    /// `None` where the driver checks its options itself (ZFS) or takes none.
    pub mount_type: Option<&'static str>,
}

impl Driver {
    /// The type `name` built by `build`, with what most types share: it needs root, takes none
    /// of the common keys and no keys of its own, has a data device per `devices=`, needs no
    /// tool, has nothing to do before a cold run or for its health, and reads its space back
    /// with `df`. A driver changes what
    /// differs (`Driver { common: KERNEL_KEYS, ..Driver::basic("ext4", build) }`).
    pub const fn basic(
        name: &'static str,
        build: fn(&StackSpec, &mut [Backing], &mut Ctx) -> Result<Built, StackError>,
    ) -> Driver {
        Driver {
            name,
            needs_root: true,
            common: &[],
            keys: &[],
            check: no_rules,
            roles: data_devices,
            missing_tool: || None,
            build,
            prepare_cold: nothing,
            health: nothing,
            space: space::df,
            size_limits: |_| SizeLimits::NONE,
            capacity: capacity::whole,
            mkfs_bytes: |_| 0,
            mount_type: None,
        }
    }
}

/// The common keys kernel file systems on loop or user devices take.
pub(crate) const KERNEL_KEYS: &[&str] = &["size", "devices", "mkfs", "mount", "offset"];

/// Every stack type, in the order `bakeoff stack list` shows them: one line per type.
pub static DRIVERS: [&Driver; 7] = [
    &simple::RAW,
    &extfs::DRIVER,
    &xfs::DRIVER,
    &btrfs::DRIVER,
    &zfs::DRIVER,
    &simple::TMPFS,
    &simple::DIR,
];

/// For the hooks of types that have nothing to do there.
pub(crate) fn nothing(_: &StackInfo, _: &mut Exec) -> Result<(), StackError> {
    Ok(())
}

/// The check of types whose only keys are common ones (checked by the spec itself).
pub(crate) fn no_rules(_: &StackSpec) -> Result<(), String> {
    Ok(())
}

/// One data device per `devices=`.
pub(crate) fn data_devices(spec: &StackSpec) -> Vec<&'static str> {
    vec!["data"; spec.devices as usize]
}

/// No backing devices (tmpfs, dir).
pub(crate) fn no_devices(_: &StackSpec) -> Vec<&'static str> {
    Vec::new()
}

/// The first of `tools` (tool, package) that is not installed.
pub(crate) fn first_missing(
    tools: &[(&'static str, &'static str)],
) -> Option<(&'static str, &'static str)> {
    tools
        .iter()
        .find(|(tool, _)| !crate::exec::installed(tool))
        .copied()
}

/// Builds `spec` on `backing`.
pub fn build(
    spec: &StackSpec,
    backing: &mut [Backing],
    ctx: &mut Ctx,
) -> Result<Built, StackError> {
    (spec.kind.driver().build)(spec, backing, ctx)
}

/// The tool `kind` lacks here and the Debian package that has it; `None` if it can be built.
pub fn missing_tool(kind: StackKind) -> Option<(&'static str, &'static str)> {
    (kind.driver().missing_tool)()
}

/// The device sizes `spec` can be built on.
pub fn size_limits(spec: &StackSpec) -> SizeLimits {
    (spec.kind.driver().size_limits)(spec)
}

/// Bytes `spec` built on backing devices of `per` bytes each holds for data, by its driver's
/// model (which errs low by at most [`capacity::TOLERANCE`]).
pub fn capacity(spec: &StackSpec, per: u64) -> u64 {
    (spec.kind.driver().capacity)(spec, per)
}

/// The smallest device size (whole MiB, at least `floor` and the type's smallest) on which
/// `spec` holds `data` bytes by [`capacity`].
pub fn device_for(spec: &StackSpec, data: u64, floor: u64) -> u64 {
    const MIB: u64 = 1 << 20;
    let limits = size_limits(spec);
    let low = floor.max(limits.min_bytes).div_ceil(MIB);
    let holds = |mib: u64| capacity(spec, mib.saturating_mul(MIB)) >= data;
    if holds(low) {
        return low * MIB;
    }
    // Each model keeps less than half of a large enough device beyond a fixed amount.
    let mut high = low
        .max(data.div_ceil(MIB))
        .saturating_mul(2)
        .saturating_add(4096);
    while !holds(high) && high < u64::MAX / MIB / 2 {
        high *= 2;
    }
    let mut low = low;
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if holds(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high * MIB
}

/// Bytes the mkfs of `spec` allocates in a sparse image of a `size`-byte device.
pub fn mkfs_bytes(spec: &StackSpec, size: u64) -> u64 {
    (spec.kind.driver().mkfs_bytes)(size)
}

/// Checks the spec's `mount=` options against the kernel (see
/// [`limits::check_mount_options`]), for types that mount a kernel file system: the kernel's
/// refusal, or a note if it could not be asked.
pub fn check_mount(spec: &StackSpec) -> Result<Option<String>, String> {
    match (spec.kind.driver().mount_type, spec.mount.as_deref()) {
        (Some(fstype), Some(options)) => limits::check_mount_options(fstype, options),
        _ => Ok(None),
    }
}

/// Runs mkfs (`tool args`) on the devices among `backing`, handing our claims on the user's
/// devices over to it (see [`hand_over`]), within [`MKFS_TIMEOUT`].
pub(crate) fn mkfs(
    ctx: &mut Ctx,
    backing: &mut [Backing],
    tool: &str,
    args: &[&str],
) -> Result<(), StackError> {
    let cmd = Cmd::new(tool, args).timeout(MKFS_TIMEOUT);
    hand_over(backing, ctx.exec, |exec| exec.run_cmd(&cmd))?;
    Ok(())
}

/// Creates `dir/mnt` and mounts `source` there, recording both undos first. The user's devices
/// among `backing` are released to the mount, which claims them itself.
pub(crate) fn mount(
    ctx: &mut Ctx,
    backing: &mut [Backing],
    source: &str,
    fstype: &str,
    options: Option<&str>,
) -> Result<PathBuf, StackError> {
    let mnt = ctx.dir.join("mnt");
    ctx.ledger.record(Undo::RemoveDir { path: mnt.clone() })?;
    std::fs::create_dir_all(&mnt).map_err(StackError::io("creating mount point", &mnt))?;
    ctx.ledger.record(Undo::Unmount { path: mnt.clone() })?;
    let m = mnt.to_string_lossy().to_string();
    let mut args = vec!["-t", fstype];
    if let Some(o) = options {
        args.extend(["-o", o]);
    }
    args.extend([source, &m]);
    crate::backing::release(backing);
    ctx.exec.run("mount", &args)?;
    Ok(mnt)
}

/// A kernel file system mounted at `mnt`: adds the mount options the kernel reports and the
/// version of the mkfs `tool` (printed by `tool version_arg`) to what the driver read back,
/// `properties` and `redundancy`.
pub(crate) fn kernel_fs(
    exec: &mut Exec,
    mnt: PathBuf,
    mut properties: BTreeMap<String, String>,
    redundancy: Option<f64>,
    tool: &str,
    version_arg: &str,
) -> Built {
    if let Some(o) = mount_options(&mnt) {
        properties.insert("mount_options".into(), o);
    }
    let versions = exec
        .version_of(tool, &[version_arg])
        .map(|v| (tool.to_string(), v))
        .into_iter()
        .collect();
    Built {
        target: mnt,
        is_device: false,
        backend: "kernel".into(),
        properties,
        versions,
        daemons: Vec::new(),
        redundancy,
    }
}

/// The mount options the kernel reports for `mnt`.
pub(crate) fn mount_options(mnt: &std::path::Path) -> Option<String> {
    let info = bakeoff_probe::target_info(mnt);
    info.mount_options
}

/// `key: value` lines (tune2fs -l) as a map, keys lower-cased with `_` for spaces.
pub(crate) fn colon_pairs(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            (
                k.trim().to_lowercase().replace(' ', "_"),
                v.trim().to_string(),
            )
        })
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .collect()
}
