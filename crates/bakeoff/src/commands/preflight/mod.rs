//! What a run checks before it touches anything, and all that `--dry-run` does: one code path,
//! so a dry run says ok exactly when the real run would start (as fio's `--parse-only` does),
//! and fails otherwise with the exit code the run would give.

mod sizing;

use crate::cli::StackOpts;
use crate::exit::{clip, clip_in, failure, stack_failure, Code, Failure};
use bakeoff_core::units::{format_bytes, parse_size};
use bakeoff_core::Plan;
use bakeoff_engine::{LayoutError, Target};
use bakeoff_stack::fs::{capacity, check_mount, missing_tool, room, size_limits, Room};
use bakeoff_stack::gate::{self, Claim};
use bakeoff_stack::{StackError, StackSpec};
pub use sizing::{db_stack_bytes, device_size, loop_size};
use sizing::{images_room, within_limits};
use std::path::{Path, PathBuf};

/// A size given on the command line or in a study, in bytes.
pub fn size(flag: &str, text: &str) -> Result<u64, Failure> {
    parse_size(text).map_err(|m| crate::exit::bad_value(flag, text, &m))
}

/// A stack spec, or a usage error quoting at most 200 characters of it.
pub fn spec(text: &str) -> Result<StackSpec, Failure> {
    StackSpec::parse_arg(text).map_err(|e| failure(Code::Usage, clip_in(&e.to_string(), text)))
}

/// `path`, or its nearest ancestor that exists (`.` for a relative path none of whose parts
/// does): where a directory bakeoff will create is going to live.
pub fn nearest_existing(path: &Path) -> &Path {
    let mut at = path;
    while !at.exists() {
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    at
}

/// The nearest existing ancestor of `path` (the run creates the rest) and its free bytes.
pub fn free_bytes(path: &Path) -> Result<(PathBuf, u64), Failure> {
    let at = nearest_existing(path);
    let vfs = rustix::fs::statvfs(at).map_err(|e| {
        failure(
            Code::Environment,
            format!("checking free space of {}: {e}", at.display()),
        )
    })?;
    Ok((at.to_path_buf(), vfs.f_bavail.saturating_mul(vfs.f_frsize)))
}

/// Bytes of the files under `path` (itself, if a file), not following symbolic links.
fn bytes_under(path: &Path) -> u64 {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| bytes_under(&e.path()))
            .sum(),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// Room for a dataset of `needed` bytes in `dir`: bakeoff's data files, trees, client copies
/// and MPI ranks' directories already there count as free, since the layout reuses or
/// replaces them.
pub fn room_in_directory(dir: &Path, needed: u64) -> Result<(), Failure> {
    let (_, free) = free_bytes(dir)?;
    let ours: u64 = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let copy = (name
                .strip_prefix("client-")
                .or_else(|| name.strip_prefix("rank-")))
            .map(str::parse::<u32>);
            name.starts_with("bakeoff-") || matches!(copy, Some(Ok(_)))
        })
        .map(|e| bytes_under(&e.path()))
        .sum();
    let available = free.saturating_add(ours);
    if needed > available {
        let e = LayoutError::NoSpace {
            path: dir.to_path_buf(),
            needed,
            available,
        };
        return Err(failure(Code::Environment, e));
    }
    Ok(())
}

/// The run target: an existing writable directory with room for the dataset, or a loop device
/// that passes the safety gate and holds it. The claim on a device must be held for the run.
pub fn target(path: &Path, plan: &Plan) -> Result<(Target, Option<Claim>), Failure> {
    let (target, claim) = crate::target_check::check(path)?;
    if let (Target::Device(dev), Some(what)) = (&target, needs_file_system(plan)) {
        let e = LayoutError::NeedsDirectory {
            what,
            path: dev.clone(),
        };
        return Err(failure(Code::Usage, e));
    }
    match (&target, &claim) {
        (Target::Directory(dir), _) => room_in_directory(dir, plan.dataset_bytes())?,
        (Target::Device(dev), Some(claim)) => {
            let end = bakeoff_engine::layout::regions(plan, &target)
                .iter()
                .flatten()
                .map(|r| r.base + r.size)
                .max()
                .unwrap_or(0);
            if end > claim.size_bytes {
                let e = LayoutError::DeviceTooSmall {
                    path: dev.clone(),
                    needed: end,
                    size: claim.size_bytes,
                };
                return Err(failure(Code::Environment, e));
            }
        }
        (Target::Device(_), None) => {}
    }
    Ok((target, claim))
}

/// What in `plan` needs a file system rather than a block device: tree filesets (file steps
/// create and delete files) and client processes (each has a directory of its own).
pub fn needs_file_system(plan: &Plan) -> Option<String> {
    if plan.replay.is_some() {
        return Some(format!(
            "replaying trace {} (its files and directories)",
            plan.workload
        ));
    }
    if let Some(f) = plan.filesets.iter().find(|f| f.tree.is_some()) {
        return Some(format!(
            "fileset '{}' (a directory tree for file steps)",
            f.name
        ));
    }
    (plan.clients > 0).then(|| {
        format!(
            "clients={} (each client's files in a directory)",
            plan.clients
        )
    })
}

/// Refuses a stack that is a block device (`raw`) for a plan that needs a file system, and a
/// separate log stack for client processes (each keeps all its files in its own directory).
pub fn file_system_for(plan: &Plan, spec: &StackSpec, log_stack: bool) -> Result<(), Failure> {
    if log_stack && plan.clients > 0 {
        return Err(failure(
            Code::Usage,
            format!(
                "clients={} puts all of each client's files in a directory of its own: a \
                 separate log stack is not supported with clients (drop --log-stack or clients)",
                plan.clients
            ),
        ));
    }
    match needs_file_system(plan) {
        Some(what) if !spec.kind.holds_files() => Err(failure(
            Code::Usage,
            format!("{what} needs a file system, and a raw stack is a block device (use ext4, xfs, btrfs, zfs or tmpfs)"),
        )),
        _ => Ok(()),
    }
}

/// What building `spec` and laying out `dataset` bytes on it needs from this machine: its
/// tools, root, mount options the kernel takes, a writable ledger and images directory, device
/// sizes the type can be built on, the `--device`s named in `--destroy-data-on` and through the
/// safety gate, room for what the loop images will hold, and a stack large enough for the
/// dataset: by the driver's capacity model (what its file system keeps, over the data devices
/// its profile or layout gives), with the rule the run applies to the built stack's exact room.
pub fn stack(spec: &StackSpec, opts: &StackOpts, dataset: u64) -> Result<(), Failure> {
    check_device_flags(opts)?;
    let per = device_size(spec, opts, dataset)?;
    let no_devices = spec.backing_devices() == 0;
    if no_devices && !opts.devices.is_empty() {
        return Err(failure(
            Code::Usage,
            format!(
                "--device does not apply to {} stacks, which use no block device",
                spec.kind.name()
            ),
        ));
    }
    if let Some((tool, package)) = missing_tool(spec.kind) {
        return Err(stack_failure(StackError::Missing {
            kind: spec.kind.name(),
            tool,
            package,
        }));
    }
    if spec.kind.needs_root() && !rustix::process::geteuid().is_root() {
        return Err(failure(
            Code::Environment,
            format!(
                "building {} needs root (loop devices, mkfs, mount): run as root or with sudo",
                clip(&spec.text)
            ),
        ));
    }
    let note = check_mount(spec)
        .map_err(|m| failure(Code::Usage, format!("stack {}: {m}", clip(&spec.text))))?;
    if let Some(note) = note {
        eprintln!("bakeoff: note: stack {}: {note}", clip(&spec.text));
    }
    ledger_writable()?;
    // Every stack keeps its mount point (or its name, for dir=) under --images.
    creatable(&opts.images, "the images directory", "choose --images DIR")?;
    let (room, how) = match room(spec) {
        Room::Directory(dir) => {
            if !dir.is_dir() {
                return Err(stack_failure(StackError::Environment(format!(
                    "dir={} is not an existing directory",
                    clip(&dir.display().to_string())
                ))));
            }
            return room_in_directory(&dir, dataset);
        }
        Room::Memory(size) => (size, "tmpfs size".to_string()),
        Room::Devices if !opts.devices.is_empty() => devices(spec, opts)?,
        Room::Devices => {
            within_limits(spec, per)?;
            images_room(spec, opts, dataset, per)?;
            (capacity(spec, per), devices_text(spec.devices, Some(per)))
        }
    };
    if dataset > room {
        return Err(failure(
            Code::Environment,
            format!(
                "stack {} holds about {} for data ({how}, less what its file system keeps), \
                 the dataset needs {dataset} bytes ({}): {} or lower the dataset",
                clip(&spec.text),
                format_bytes(room),
                format_bytes(dataset),
                if opts.devices.is_empty() {
                    "raise --size (or size= in the spec)"
                } else {
                    "give larger devices"
                }
            ),
        ));
    }
    Ok(())
}

/// "2 devices of 1 GiB", "1 device given".
fn devices_text(n: u32, each: Option<u64>) -> String {
    let noun = if n == 1 { "device" } else { "devices" };
    match each {
        Some(size) => format!("{n} {noun} of {}", format_bytes(size)),
        None => format!("{n} {noun} given"),
    }
}

/// The user's devices: as many as the spec needs, each named in `--destroy-data-on` (by
/// device number, so any alias counts) and through the safety gate. Their data capacity, by
/// the smallest data device (a mirror holds no more).
fn devices(spec: &StackSpec, opts: &StackOpts) -> Result<(u64, String), Failure> {
    let n = spec.backing_devices() as usize;
    if opts.devices.len() != n {
        return Err(stack_failure(StackError::Environment(format!(
            "{} needs {n} device(s), {} were given with --device",
            clip(&spec.text),
            opts.devices.len()
        ))));
    }
    let rdev = |p: &Path| rustix::fs::stat(p).ok().map(|s| s.st_rdev);
    let mut smallest: Option<u64> = None;
    for (i, d) in opts.devices.iter().enumerate() {
        if let Err(e) = rustix::fs::stat(d) {
            return Err(failure(
                Code::Environment,
                format!("--device {}: {e}", clip(&d.display().to_string())),
            ));
        }
        let paired =
            rdev(d).is_some_and(|r| opts.destroy_data_on.iter().any(|p| rdev(p) == Some(r)));
        if !paired {
            return Err(stack_failure(StackError::Refused {
                device: clip(&d.display().to_string()),
                reason: "a --device is used only when --destroy-data-on names the same device"
                    .into(),
            }));
        }
        // Released at once: the build claims it again, after checking it again.
        let claim = gate::check(d, &opts.destroy_data_on).map_err(stack_failure)?;
        if let Some(why) = size_limits(spec).refuse(claim.size_bytes) {
            return Err(failure(
                Code::Environment,
                format!(
                    "stack {}: --device {}: {why}",
                    clip(&spec.text),
                    clip(&d.display().to_string())
                ),
            ));
        }
        let is_log = spec.roles().get(i) == Some(&"log");
        if !is_log {
            smallest = Some(smallest.map_or(claim.size_bytes, |s| s.min(claim.size_bytes)));
        }
    }
    let held = capacity(spec, smallest.unwrap_or(0));
    Ok((held, devices_text(spec.devices, None)))
}

/// Checks that `path` (a directory the run will create) can be created: in its nearest
/// existing ancestor, a temporary directory is made and removed. Returns that ancestor and
/// its free bytes.
fn creatable(path: &Path, what: &str, advice: &str) -> Result<(PathBuf, u64), Failure> {
    let (at, free) = free_bytes(path)?;
    tempfile::Builder::new()
        .prefix(".bakeoff-check-")
        .tempdir_in(&at)
        .map_err(|e| {
            // An output the user named that cannot be created: usage (exit 2), like a bad key.
            failure(
                Code::Usage,
                format!(
                    "cannot create {what} {} in {}: {} ({advice})",
                    clip(&path.display().to_string()),
                    at.display(),
                    std::io::Error::from(e.kind())
                ),
            )
        })?;
    Ok((at, free))
}

/// The ledger every stack is recorded in before it is built can be written.
fn ledger_writable() -> Result<(), Failure> {
    let dir = bakeoff_stack::ledger::state_dir().join("ledger");
    creatable(
        &dir,
        "the stack ledger",
        "run as root, or set BAKEOFF_STATE_DIR to a writable directory",
    )?;
    Ok(())
}

/// Room under the results directory for `runs` run records of about `per_run` bytes each.
pub fn results_room(out: &Path, runs: usize, per_run: u64) -> Result<(), Failure> {
    let (at, free) = creatable(out, "the results directory", "choose another --out")?;
    let needed = per_run.saturating_mul(runs as u64);
    if needed > free {
        return Err(failure(
            Code::Environment,
            format!(
                "not enough space for the results under {}: {runs} run records need about {}, {} are free \
                 (free some space or choose another --out)",
                at.display(),
                format_bytes(needed),
                format_bytes(free)
            ),
        ));
    }
    Ok(())
}

/// Refuses a `--destroy-data-on` that confirms no `--device`: ignoring it would let a user
/// believe the device was used (or protected) when the stack went on loop devices.
pub fn check_device_flags(opts: &StackOpts) -> Result<(), Failure> {
    let rdev = |p: &std::path::Path| rustix::fs::stat(p).ok().map(|s| s.st_rdev);
    let devices: Vec<_> = opts.devices.iter().map(|d| rdev(d)).collect();
    for d in &opts.destroy_data_on {
        let named = match rdev(d) {
            Some(r) => devices.contains(&Some(r)),
            None => opts.devices.contains(d),
        };
        if !named {
            let d = crate::exit::clip(&d.display().to_string());
            return Err(failure(
                Code::Usage,
                format!(
                    "--destroy-data-on {d} confirms a --device, and no --device names it: \
                     add --device {d} to build on it, or drop --destroy-data-on"
                ),
            ));
        }
    }
    Ok(())
}
