//! How large each loop device of a stack is (`--size`, or `auto`: sized to the dataset), and
//! whether the stack type and the images directory can take devices of that size: the checks
//! [`super::preflight::stack`] makes before anything is built.

use super::preflight::{free_bytes, size};
use crate::cli::StackOpts;
use crate::exit::{clip, failure, Code, Failure};
use bakeoff_core::units::format_bytes;
use bakeoff_stack::fs::{device_for, mkfs_bytes, size_limits};
use bakeoff_stack::StackSpec;

/// `--size` (or a study's `size`): `auto` (`None`: sized to the dataset, see [`device_size`])
/// or bytes.
pub fn loop_size(flag: &str, text: &str) -> Result<Option<u64>, Failure> {
    match text {
        "auto" => Ok(None),
        _ => size(flag, text).map(Some),
    }
}

/// Bytes of each loop device of `spec`: its own `size=`, else `--size`, else (`auto`) what
/// holds the dataset by the driver's capacity model (over the data devices its profile or
/// layout gives), at least 1 GiB and the type's smallest.
pub fn device_size(spec: &StackSpec, opts: &StackOpts, dataset: u64) -> Result<u64, Failure> {
    let given = loop_size("--size", &opts.size)?;
    Ok(match spec.size.or(given) {
        Some(size) => size,
        None => device_for(spec, dataset, AUTO_FLOOR),
    })
}

/// An `auto` stack is at least this large: room for a workload's scratch files and logs.
const AUTO_FLOOR: u64 = 1 << 30;

/// Refuses (usage) a device size the stack type cannot be built on: below what its mkfs
/// accepts or above what it supports.
pub fn within_limits(spec: &StackSpec, per: u64) -> Result<(), Failure> {
    match size_limits(spec).refuse(per) {
        Some(why) => Err(failure(
            Code::Usage,
            format!(
                "stack {}: {why} (choose another --size, or size= in the spec)",
                clip(&spec.text)
            ),
        )),
        None => Ok(()),
    }
}

/// Room under `--images` for what the sparse loop images will really hold: the dataset and
/// what mkfs allocates in each (ext4's inode tables and journal, xfs's log); and images of
/// `per` bytes (plus the spec's offset) are files the file system there can hold, tried on a
/// sparse file that is removed at once.
pub fn images_room(
    spec: &StackSpec,
    opts: &StackOpts,
    dataset: u64,
    per: u64,
) -> Result<(), Failure> {
    let (at, free) = free_bytes(&opts.images)?;
    let mkfs = mkfs_bytes(spec, per).saturating_mul(u64::from(spec.backing_devices()));
    let needed = dataset.saturating_add(mkfs);
    if needed > free {
        return Err(failure(
            Code::Environment,
            format!(
                "not enough space for the loop images under {}: the dataset writes {}{}, {} are \
                 free on {} (free some space, choose --images DIR or a smaller --size)",
                opts.images.display(),
                format_bytes(dataset),
                if mkfs > 0 {
                    format!(
                        " and mkfs allocates about {} in the images of {}",
                        format_bytes(mkfs),
                        clip(&spec.text)
                    )
                } else {
                    String::new()
                },
                format_bytes(free),
                at.display()
            ),
        ));
    }
    let image = per.saturating_add(spec.offset);
    let probe = tempfile::Builder::new()
        .prefix(".bakeoff-size-")
        .tempfile_in(&at)
        .map_err(|e| {
            failure(
                Code::Environment,
                format!("trying an image in {}: {e}", at.display()),
            )
        })?;
    if let Err(e) = probe.as_file().set_len(image) {
        return Err(failure(
            Code::Environment,
            format!(
                "stack {}: the file system of {} cannot hold an image of {} ({e}): choose a \
                 smaller --size or --images on another file system",
                clip(&spec.text),
                at.display(),
                format_bytes(image)
            ),
        ));
    }
    Ok(())
}
