//! Backing devices: loop devices over sparse images (direct I/O on, checked and recorded), or
//! the user's devices after the safety gate.

use crate::error::StackError;
use crate::exec::Exec;
use crate::ledger::Ledger;
use crate::spec::StackSpec;
use crate::undo::Undo;
use bakeoff_core::record::BackingInfo;
use std::path::{Path, PathBuf};

/// Everything a stack driver needs while building.
pub struct Ctx<'a> {
    /// Side effects go here first.
    pub ledger: &'a mut Ledger,
    /// Commands go through here.
    pub exec: &'a mut Exec,
    /// The stack's own directory (images, mount point, pid files).
    pub dir: PathBuf,
    /// The stack's name.
    pub name: String,
    /// Wait for another run's zfs-fuse to end instead of refusing, until this flag (Ctrl-C)
    /// is raised.
    pub wait: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Where backing devices come from.
#[derive(Clone, Debug, Default)]
pub struct BackingOptions {
    /// Bytes per loop image when the spec does not say.
    pub size: u64,
    /// Devices the user handed over (`--device`), used instead of loop devices.
    pub devices: Vec<PathBuf>,
    /// Devices the user confirmed may be overwritten (`--destroy-data-on`).
    pub destroy_data_on: Vec<PathBuf>,
    /// The write log's images this stack goes over (`--crash-states`).
    pub logged: Option<Logged>,
}

/// Images a write log serves (`crate::writelog`): `disk<first>.img`, `disk<first + 1>.img` ...
/// at `mount`, already made and sized by the recorder's owner, who removes them; the stack
/// only attaches its loop devices over them.
#[derive(Clone, Debug)]
pub struct Logged {
    /// The write log's mount.
    pub mount: PathBuf,
    /// The number of this stack's first image (a log stack's follow the data stack's: one log
    /// orders both stacks' writes, as one power cut hits both).
    pub first: usize,
}

/// A device a stack sits on.
#[derive(Debug)]
pub struct Backing {
    /// What was recorded about it.
    pub info: BackingInfo,
    /// Kept open exclusively for a user's device, so nobody mounts it meanwhile.
    pub claim: Option<crate::gate::Claim>,
}

impl Backing {
    /// `/dev/loop3` or the user's device.
    pub fn device(&self) -> &str {
        &self.info.device
    }
}

/// Attaches a loop device over a new sparse image of `size` bytes, starting `offset` bytes in.
pub fn loop_device(
    ctx: &mut Ctx,
    index: usize,
    size: u64,
    offset: u64,
    role: &str,
    logged: Option<&Logged>,
) -> Result<Backing, StackError> {
    let name = format!("disk{index}.img");
    let image = match logged {
        Some(log) => log.mount.join(format!("disk{}.img", log.first + index)),
        None => {
            let image = ctx.dir.join(&name);
            ctx.ledger.record(Undo::RemoveFile {
                path: image.clone(),
            })?;
            let f =
                std::fs::File::create(&image).map_err(StackError::io("creating image", &image))?;
            f.set_len(size + offset)
                .map_err(StackError::io("sizing image", &image))?;
            image
        }
    };
    ctx.ledger.record(Undo::DetachLoop {
        backing: image.clone(),
    })?;
    let img = image.to_string_lossy().to_string();
    let off = offset.to_string();
    let mut args = vec!["--find", "--show", "--direct-io=on"];
    if offset > 0 {
        args.extend(["--offset", &off]);
    }
    args.push(&img);
    let device = ctx.exec.run("losetup", &args)?.trim().to_string();
    let name = device.trim_start_matches("/dev/").to_string();
    let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio"))
        .is_ok_and(|d| d.trim() == "1");
    if !dio {
        eprintln!(
            "bakeoff: warning: loop direct I/O did not take effect on {device} (the file system under {} \
             may not support O_DIRECT): the host page cache will serve some reads",
            ctx.dir.display()
        );
    }
    Ok(Backing {
        info: BackingInfo {
            device,
            image: Some(img),
            size_bytes: size,
            loop_dio: Some(dio),
            offset_bytes: offset,
            role: role.to_string(),
            wiped_signatures: Vec::new(),
        },
        claim: None,
    })
}

/// Runs `tool` (mkfs, wipefs), which opens the user's devices among `backing` exclusively
/// itself: our claims are handed over for its run and re-taken right after, the gate's checks
/// made again (not mounted, not held, not a member, exclusive open succeeds), so nobody took
/// the devices meanwhile. Loop devices of our own have no claim and are left as they are.
pub fn hand_over<T>(
    backing: &mut [Backing],
    exec: &mut Exec,
    tool: impl FnOnce(&mut Exec) -> Result<T, StackError>,
) -> Result<T, StackError> {
    release(backing);
    let out = tool(exec)?;
    for b in backing.iter_mut().filter(|b| b.info.image.is_none()) {
        b.claim = Some(crate::gate::reclaim(Path::new(&b.info.device), exec)?);
    }
    Ok(out)
}

/// Lets go of the claims on the user's devices for good: the kernel claims them exclusively
/// once mounted (or made part of an OpenZFS pool), which our own claim would prevent.
pub fn release(backing: &mut [Backing]) {
    for b in backing {
        b.claim = None;
    }
}

/// Gates a device the user handed over and, if it carries signatures the user confirmed may
/// be destroyed, wipes them (`wipefs -a`) so later probes are unambiguous.
fn user_device(
    device: &Path,
    role: &str,
    opts: &BackingOptions,
    exec: &mut Exec,
) -> Result<Backing, StackError> {
    if !named_for_destruction(device, &opts.destroy_data_on) {
        return Err(StackError::Refused {
            device: device.display().to_string(),
            reason: "a --device is used only when --destroy-data-on names the same device".into(),
        });
    }
    let claim = crate::gate::check_with(device, &opts.destroy_data_on, exec)?;
    let mut backing = Backing {
        info: BackingInfo {
            device: claim.device.to_string_lossy().into_owned(),
            image: None,
            size_bytes: claim.size_bytes,
            loop_dio: None,
            offset_bytes: 0,
            role: role.to_string(),
            wiped_signatures: claim.signatures.clone(),
        },
        claim: Some(claim),
    };
    if !backing.info.wiped_signatures.is_empty() {
        let dev = backing.info.device.clone();
        hand_over(std::slice::from_mut(&mut backing), exec, |exec| {
            exec.run("wipefs", &["-a", &dev])
        })?;
    }
    Ok(backing)
}

/// True if one of `list` is the same block device as `device` (by device number).
fn named_for_destruction(device: &Path, list: &[PathBuf]) -> bool {
    let rdev = |p: &Path| rustix::fs::stat(p).ok().map(|s| s.st_rdev);
    let Some(want) = rdev(device) else {
        return false;
    };
    list.iter().any(|p| rdev(p) == Some(want))
}

/// Provides the spec's backing devices: the user's (gated) or new loop devices.
pub fn provide(
    spec: &StackSpec,
    opts: &BackingOptions,
    ctx: &mut Ctx,
) -> Result<Vec<Backing>, StackError> {
    let roles = spec.roles();
    let (n, role) = (roles.len(), |i: usize| roles[i]);
    if !opts.devices.is_empty() {
        let given = opts.devices.len();
        if n == 0 {
            return Err(StackError::Environment(format!(
                "{} sits on no device: drop --device",
                spec.text
            )));
        }
        if given != n {
            return Err(StackError::Environment(format!(
                "{} needs {n} device(s), {given} were given with --device",
                spec.text
            )));
        }
        if spec.offset > 0 {
            return Err(StackError::Environment(
                "offset= applies to loop-backed stacks only".into(),
            ));
        }
        let devices = opts.devices.iter().enumerate();
        return devices
            .map(|(i, d)| user_device(d, role(i), opts, ctx.exec))
            .collect();
    }
    let size = spec.size.unwrap_or(opts.size);
    (0..n)
        .map(|i| loop_device(ctx, i, size, spec.offset, role(i), opts.logged.as_ref()))
        .collect()
}
