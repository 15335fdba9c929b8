//! How large each loop device of a stack is (`--size`, or `auto`: sized to the dataset), and
//! whether the stack type and the images directory can take devices of that size: the checks
//! [`super::stack`] makes before anything is built.

use super::free_bytes;
use crate::cli::{LoopSize, StackOpts};
use crate::exit::{clip, failure, Code, Failure};
use bakeoff_core::units::format_bytes;
use bakeoff_stack::fs::{device_for, mkfs_bytes, rewrite_room, size_limits, Room};
use bakeoff_stack::StackSpec;

/// A study's `size` (the text its file or the command line gave), parsed once for its runs;
/// `what` names where it was written.
pub fn loop_size(what: &str, text: &str) -> Result<LoopSize, Failure> {
    LoopSize::parse(text).map_err(|m| crate::exit::bad_value(what, text, &m))
}

/// Bytes of each loop device of `spec`: its own `size=`, else `--size`, else (`auto`) what
/// holds the dataset by the driver's capacity model (over the data devices its profile or
/// layout gives), with a copy-on-write type's room for rewrites (`rewrite_room`), at least
/// 1 GiB and the type's smallest.
pub fn device_size(spec: &StackSpec, opts: &StackOpts, dataset: u64) -> Result<u64, Failure> {
    Ok(match spec.size.or(opts.size.bytes()) {
        Some(size) => size,
        None => device_for(spec, dataset + rewrite_room(spec, dataset), AUTO_FLOOR),
    })
}

/// What a database run's stack is checked (and, `auto`, sized) for, and a warning when it is
/// smaller than the run may need. `load` is what must fit (the loaded data); `room` what the
/// run may need (the load, what the run adds, the WAL it keeps: a bound, not a need). Loop
/// devices of `auto` size are sized for `room`; a size the user gave (or tmpfs's, or devices
/// given) is checked against `load` only, with the warning when it holds less than `room`.
pub fn db_stack_bytes(
    spec: &StackSpec,
    opts: &StackOpts,
    load: u64,
    room: u64,
) -> (u64, Option<String>) {
    let fixed = spec.size.or(opts.size.bytes());
    if spec.backing_devices() > 0 && opts.devices.is_empty() && fixed.is_none() {
        return (room, None);
    }
    let holds = match (bakeoff_stack::fs::room(spec), fixed) {
        (Room::Memory(size), _) => size,
        (_, Some(per)) if opts.devices.is_empty() => bakeoff_stack::fs::capacity(spec, per),
        _ => return (load, None),
    };
    let warning = (holds < room).then(|| {
        format!(
            "stack {} holds about {} for data; the run may need up to {} (the dry run's \
             `room`): if it fills, the database stops with \"No space left on device\" (leave \
             --size auto, or raise it)",
            clip(&spec.text),
            format_bytes(holds),
            format_bytes(room)
        )
    });
    (load, warning)
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
                "not enough space for the loop images under {}: the run writes up to {}{}, {} are \
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
