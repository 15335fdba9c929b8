//! How large each loop device of a stack is (`--size`, or `auto`: sized to the dataset), and
//! whether the stack type and the images directory can take devices of that size: the checks
//! [`super::preflight::stack`] makes before anything is built.

use super::preflight::free_bytes;
use crate::cli::StackOpts;
use crate::exit::{clip, failure, Code, Failure};
use bakeoff_core::units::{format_bytes, parse_size};
use bakeoff_stack::fs::{device_for, mkfs_bytes, size_limits, Room};
use bakeoff_stack::StackSpec;

/// `--size` (or a study's `size`), parsed once: `auto` (sized to the dataset, see
/// [`device_size`]) or bytes per device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoopSize {
    /// Each stack sized to hold its dataset.
    #[default]
    Auto,
    /// Each loop device this many bytes.
    Bytes(u64),
}

impl LoopSize {
    /// `auto` or a size (`1g`, `512m`): clap's value parser for `--size`.
    pub fn parse(text: &str) -> Result<LoopSize, String> {
        match text {
            "auto" => Ok(LoopSize::Auto),
            _ => parse_size(text).map(LoopSize::Bytes),
        }
    }

    /// The bytes given, or `None` for `auto`.
    pub fn bytes(self) -> Option<u64> {
        match self {
            LoopSize::Auto => None,
            LoopSize::Bytes(b) => Some(b),
        }
    }
}

/// clap's parser for `--size`: a bad value is echoed clipped, as every bad value is (clap's
/// own message would repeat all of it).
#[derive(Clone, Copy)]
pub struct LoopSizeParser;

impl clap::builder::TypedValueParser for LoopSizeParser {
    type Value = LoopSize;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<LoopSize, clap::Error> {
        let text = value.to_string_lossy();
        let flag = arg.map_or("--size".to_string(), |a| {
            format!("--{}", a.get_long().unwrap_or("size"))
        });
        LoopSize::parse(&text).map_err(|m| {
            let said = crate::exit::bad_value(&flag, &text, &m).error;
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{said}\n"))
                .with_cmd(cmd)
        })
    }
}

impl std::fmt::Display for LoopSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoopSize::Auto => f.write_str("auto"),
            LoopSize::Bytes(b) => write!(f, "{b}"),
        }
    }
}

/// A study's `size` (the text its file or the command line gave), parsed once for its runs;
/// `what` names where it was written.
pub fn loop_size(what: &str, text: &str) -> Result<LoopSize, Failure> {
    LoopSize::parse(text).map_err(|m| crate::exit::bad_value(what, text, &m))
}

/// Bytes of each loop device of `spec`: its own `size=`, else `--size`, else (`auto`) what
/// holds the dataset by the driver's capacity model (over the data devices its profile or
/// layout gives), at least 1 GiB and the type's smallest.
pub fn device_size(spec: &StackSpec, opts: &StackOpts, dataset: u64) -> Result<u64, Failure> {
    Ok(match spec.size.or(opts.size.bytes()) {
        Some(size) => size,
        None => device_for(spec, dataset, AUTO_FLOOR),
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

#[cfg(test)]
mod tests {
    use super::{LoopSize, LoopSizeParser};
    use clap::builder::TypedValueParser;

    #[test]
    fn size_is_parsed_once_into_auto_or_bytes() {
        let cmd = clap::Command::new("bakeoff");
        let parse = |t: &str| LoopSizeParser.parse_ref(&cmd, None, std::ffi::OsStr::new(t));
        assert_eq!(parse("auto").unwrap(), LoopSize::Auto);
        assert_eq!(parse("1g").unwrap(), LoopSize::Bytes(1 << 30));
        assert_eq!(LoopSize::Bytes(1 << 30).bytes(), Some(1 << 30));
        assert_eq!(
            LoopSize::parse(&LoopSize::Bytes(5).to_string()),
            Ok(LoopSize::Bytes(5))
        );
        let bad = parse("bogus").unwrap_err().to_string();
        assert!(bad.contains("--size: 'bogus' is not a size"), "{bad}");
    }
}
