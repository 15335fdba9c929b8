//! Stacks with nothing to make: tmpfs (a mount), raw (the backing device itself), dir (an
//! existing directory).

use super::{mount, mount_options, Built};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::spec::StackSpec;

/// A tmpfs of the spec's size (default 1 GiB).
pub fn tmpfs(spec: &StackSpec, ctx: &mut Ctx) -> Result<Built, StackError> {
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
pub fn raw(backing: &[Backing]) -> Result<Built, StackError> {
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
pub fn dir(spec: &StackSpec) -> Result<Built, StackError> {
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
