//! One driver per stack kind: make the file system or pool on the backing devices, mount it,
//! read back what was built, make it cold before a run, check its health; its own spec keys.
//! Adding a file system is a file here with its [`Driver`] and a line in [`DRIVERS`], the
//! registry: a [`StackKind`] is a place in it, and what it is (name, keys, hooks) is asked here.

pub mod btrfs;
pub mod capacity;
pub mod check;
mod driver;
mod extfs;
pub mod limits;
mod shared;
mod simple;
pub(crate) mod space;
mod xfs;
pub mod zfs;

pub use self::driver::{Built, Driver, Room};

use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::{StackKind, StackSpec, COMMON_KEYS};
use bakeoff_core::job::KeyDoc;
use limits::SizeLimits;
use std::fmt;

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

impl StackKind {
    /// Every kind, in the order `bakeoff stack list` shows them.
    pub fn all() -> impl Iterator<Item = StackKind> {
        (0..DRIVERS.len()).map(StackKind)
    }

    /// The kind named `name` in specs.
    pub fn named(name: &str) -> Option<StackKind> {
        StackKind::all().find(|k| k.name() == name)
    }

    /// The name in specs.
    pub fn name(self) -> &'static str {
        self.driver().name
    }

    /// Its driver.
    pub fn driver(self) -> &'static Driver {
        DRIVERS[self.0]
    }

    /// Building it needs root (loop devices, mkfs, mount): every kind but `dir`.
    pub fn needs_root(self) -> bool {
        self.driver().needs_root
    }

    /// It holds files (a file system, a directory): every kind but `raw`, a block device.
    pub fn holds_files(self) -> bool {
        !self.driver().block_device
    }

    /// Every key it accepts, documented: the common ones it takes, then its own.
    pub fn keys(self) -> Vec<&'static KeyDoc> {
        let common = COMMON_KEYS
            .iter()
            .filter(|k| self.driver().common.contains(&k.key));
        common.chain(self.driver().keys).collect()
    }

    /// It takes `key`, common or its own.
    pub(crate) fn accepts(self, key: &str) -> bool {
        self.driver().common.contains(&key) || self.driver().keys.iter().any(|k| k.key == key)
    }

    /// The names of every kind, for messages.
    pub(crate) fn names() -> String {
        let names: Vec<&str> = StackKind::all().map(StackKind::name).collect();
        names.join(", ")
    }
}

impl fmt::Debug for StackKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
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

/// Where `spec` keeps its data, known before it is built.
pub fn room(spec: &StackSpec) -> Room {
    (spec.kind.driver().room)(spec)
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
/// `spec` holds `data` bytes by [`capacity()`].
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

/// Free room `--size auto` leaves beyond `data` on a copy-on-write type (btrfs, ZFS): half the
/// data, at least 256 MiB. Its rewrites take new blocks until a transaction commits (btrfs
/// every 30 s, ZFS every 5 s), and its metadata grows as the data fragments: slob over 4 GiB on
/// btrfs with 30 MiB to spare ran out of space in its first run (2026-11-28).
pub fn rewrite_room(spec: &StackSpec, data: u64) -> u64 {
    match spec.kind.driver().copy_on_write {
        true => (data / 2).max(256 << 20),
        false => 0,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_type_is_comes_from_its_drivers_capabilities() {
        let parse = |text: &str| StackSpec::parse(text).unwrap();
        let devices: Vec<&str> = StackKind::all()
            .filter(|k| !k.holds_files())
            .map(StackKind::name)
            .collect();
        assert_eq!(devices, ["raw"]);
        assert_eq!(room(&parse("tmpfs")), Room::Memory(1 << 30));
        assert_eq!(room(&parse("tmpfs:size=64m")), Room::Memory(64 << 20));
        let dir = room(&parse("dir=/srv/data"));
        assert_eq!(dir, Room::Directory("/srv/data".into()));
        for text in ["raw", "ext4", "xfs", "btrfs:devices=2", "zfs:log=1"] {
            assert_eq!(room(&parse(text)), Room::Devices, "{text}");
        }
    }
}
