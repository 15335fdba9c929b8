//! Stacks with nothing to make: tmpfs (a mount), raw (the backing device itself), dir (an
//! existing directory).

use super::driver::{no_devices, Built, Driver, Room};
use super::shared::{first_missing, mount, mount_options};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::StackSpec;
use bakeoff_core::job::KeyDoc;
use std::path::PathBuf;
use std::sync::Arc;

/// A tmpfs's size unless its spec says.
const TMPFS_SIZE: u64 = 1 << 30;

/// tmpfs's hooks.
pub const TMPFS: Driver = Driver {
    common: &["size", "mount"],
    roles: no_devices,
    room: |spec| Room::Memory(spec.size.unwrap_or(TMPFS_SIZE)),
    mount_type: Some("tmpfs"),
    ..Driver::basic("tmpfs", tmpfs)
};

/// raw's hooks.
pub const RAW: Driver = Driver {
    common: &["size", "offset"],
    block_device: true,
    space: super::space::none,
    missing_tool: || first_missing(&[("losetup", "util-linux")]),
    ..Driver::basic("raw", raw)
};

/// dir's hooks; its key parsed is the directory's path, a `PathBuf`.
pub const DIR: Driver = Driver {
    needs_root: false,
    keys: &[KeyDoc {
        key: "path",
        default: "-",
        help: "the existing directory to run in (also written dir=/srv/data)",
    }],
    check: |spec| match spec.options.get("path") {
        Some(p) if !p.is_empty() => Ok(Arc::new(PathBuf::from(p))),
        _ => Err("dir needs a path: dir=/srv/data".into()),
    },
    roles: no_devices,
    room: |spec| Room::Directory(spec.typed::<PathBuf>().clone()),
    ..Driver::basic("dir", dir)
};

/// A tmpfs of the spec's size (default [`TMPFS_SIZE`]).
fn tmpfs(spec: &StackSpec, _: &mut [Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let mut options = format!("size={}", spec.size.unwrap_or(TMPFS_SIZE));
    if let Some(o) = &spec.mount {
        options = format!("{options},{o}");
    }
    let mnt = mount(ctx, &mut [], "tmpfs", "tmpfs", Some(&options))?;
    let mut built = Built {
        target: mnt.clone(),
        backend: "kernel".into(),
        ..Built::default()
    };
    if let Some(o) = mount_options(&mnt) {
        built.properties.insert("mount_options".into(), o);
    }
    Ok(built)
}

/// The backing device itself, for the workload to own (the Oracle ASM analogue).
fn raw(_: &StackSpec, backing: &mut [Backing], _: &mut Ctx) -> Result<Built, StackError> {
    let mut built = Built {
        target: backing[0].device().into(),
        backend: "block device".into(),
        redundancy: Some(1.0),
        ..Built::default()
    };
    built
        .properties
        .insert("size_bytes".into(), backing[0].info.size_bytes.to_string());
    Ok(built)
}

/// An existing directory; nothing is provisioned or torn down.
fn dir(spec: &StackSpec, _: &mut [Backing], _: &mut Ctx) -> Result<Built, StackError> {
    let path = spec.typed::<PathBuf>().clone();
    if !path.is_dir() {
        return Err(StackError::Environment(format!(
            "dir={} is not an existing directory",
            path.display()
        )));
    }
    Ok(Built {
        target: path,
        backend: "existing directory".into(),
        ..Built::default()
    })
}
