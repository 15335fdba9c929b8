//! Stacks with nothing to make: tmpfs (a mount), raw (the backing device itself), dir (an
//! existing directory).

use super::{first_missing, mount, mount_options, nothing, Built, Driver};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::StackSpec;

/// tmpfs's hooks.
pub const TMPFS: Driver = Driver {
    missing_tool: || None,
    build: tmpfs,
    prepare_cold: nothing,
    health: nothing,
};

/// raw's hooks.
pub const RAW: Driver = Driver {
    missing_tool: || first_missing(&[("losetup", "util-linux")]),
    build: raw,
    prepare_cold: nothing,
    health: nothing,
};

/// dir's hooks.
pub const DIR: Driver = Driver {
    missing_tool: || None,
    build: dir,
    prepare_cold: nothing,
    health: nothing,
};

/// A tmpfs of the spec's size (default 1 GiB).
fn tmpfs(spec: &StackSpec, _: &mut [Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let mut options = format!("size={}", spec.size.unwrap_or(1 << 30));
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
        is_device: true,
        backend: "block device".into(),
        ..Built::default()
    };
    built
        .properties
        .insert("size_bytes".into(), backing[0].info.size_bytes.to_string());
    Ok(built)
}

/// An existing directory; nothing is provisioned or torn down.
fn dir(spec: &StackSpec, _: &mut [Backing], _: &mut Ctx) -> Result<Built, StackError> {
    let path = spec.path.clone().expect("spec checked: dir has a path");
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
