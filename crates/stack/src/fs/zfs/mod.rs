//! ZFS: OpenZFS when its kernel module is loaded (`/sys/module/zfs`), else zfs-fuse, a daemon
//! bakeoff starts for the stack with explicit cache settings and stops at teardown
//! ([`fuse`]).
//!
//! The pool `bk_<stack name>` is created with `cachefile=none`, so nothing (a daemon restarted
//! after a crash, a reboot) imports it again on its own; the dataset `<pool>/data` carries the
//! spec's properties and is mounted at `<stack dir>/mnt`. Everything is read back: the dataset's
//! properties (`zfs get`), the layout (`zpool status`), the cache settings in force.
//!
//! Teardown, through the ledger in reverse: unmount (lazily for a dead FUSE daemon), `zpool
//! destroy`, stop the daemon, detach the loops. If the daemon was killed, the pool cannot be
//! destroyed but needs not be: it is in no cache file and its devices go away.

pub mod fuse;
mod model;
mod openzfs;
pub mod owner;
pub mod read;
pub mod spec;
pub mod state;
pub use self::model::{dataset, openzfs_loaded, pool_name};
pub use self::read::{layout, read_back, redundancy};

use super::driver::{Built, Driver};
use super::shared::mount_options;
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::exec::{Cmd, Exec, PROBE_TIMEOUT};
use crate::spec::StackSpec;
use crate::undo::Undo;
use bakeoff_core::record::StackInfo;
use spec::{PoolLayout, ZfsSpec};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Mount options that are dataset properties: `option=property:value`.
const MOUNT_AS_PROPERTY: &str = "noatime=atime:off atime=atime:on strictatime=atime:on \
    ro=readonly:on rw=readonly:off noexec=exec:off exec=exec:on nosuid=setuid:off \
    suid=setuid:on nodev=devices:off dev=devices:on";

/// ZFS's hooks.
pub const DRIVER: Driver = Driver {
    common: &["size", "devices", "offset", "mount"],
    keys: spec::KEYS,
    check: spec::check,
    roles: spec::roles,
    missing_tool,
    prepare_cold: make_cold,
    health,
    space: read::space,
    size_limits: super::limits::zfs,
    capacity: super::capacity::zfs,
    mkfs_bytes: super::limits::small_mkfs_bytes,
    crash_state: Some(super::check::StateChecking::Pool),
    copy_on_write: true,
    ..Driver::basic("zfs", build)
};

/// Builds a pool over the backing devices (data devices per the layout, a `log` device if the
/// spec has one) and a dataset with the spec's properties, mounted at `<stack dir>/mnt`.
fn build(spec: &StackSpec, backing: &mut [Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let z: &ZfsSpec = spec.typed();
    let openzfs = openzfs_loaded();
    let (mount_props, fuse_opts) = split_mount_options(spec, z, openzfs)?;
    let setup = if openzfs {
        openzfs::setup(z, ctx)?
    } else {
        fuse::start(z, ctx, &fuse_opts)?
    };
    let mnt = ctx.dir.join("mnt");
    ctx.ledger.record(Undo::RemoveDir { path: mnt.clone() })?;
    std::fs::create_dir_all(&mnt).map_err(StackError::io("creating mount point", &mnt))?;
    let pool = pool_name(&ctx.name);
    if openzfs {
        // The kernel module claims its vdevs exclusively; zfs-fuse opens them without O_EXCL,
        // so there our claims stay for the life of the stack.
        crate::backing::release(backing);
    }
    create_pool(z.layout, backing, &pool, ctx)?;
    // Recorded after the pool, so teardown unmounts first: `zpool destroy` straight after
    // its own unmount often finds a zfs-fuse pool still busy.
    ctx.ledger.record(Undo::Unmount { path: mnt.clone() })?;
    // Runs first at teardown: a stopped (SIGSTOP) FUSE daemon would hang umount and zpool.
    if let Some(d) = &setup.daemon {
        let (pid, exe) = (d.pid(), d.info.exe.clone());
        ctx.ledger.record(Undo::KillIfStopped { pid, exe })?;
    }
    let props = z.props.iter().map(|(k, v)| format!("{k}={v}"));
    let props = mount_props.into_iter().chain(props).collect();
    create_dataset(spec, &pool, &mnt, props, &fuse_opts, ctx)?;
    let fstype = wait_mounted(&mnt)?;
    let (backend, mut properties) = (setup.backend, setup.settings);
    let (read, redundancy) = read_back(&pool, ctx.exec)?;
    properties.extend(read);
    if let Some(o) = mount_options(&mnt) {
        properties.insert("mount_options".into(), o);
    }
    properties.insert("fstype".into(), fstype);
    properties.insert("backend".into(), backend.clone());
    Ok(Built {
        target: mnt,
        backend,
        properties,
        versions: setup.versions,
        daemons: setup.daemon.into_iter().collect(),
        redundancy,
    })
}

/// `zfs create` of the stack's dataset with `props` (`recordsize=8k`), mounted at `mnt`.
fn create_dataset(
    spec: &StackSpec,
    pool: &str,
    mnt: &Path,
    mut props: Vec<String>,
    fuse_opts: &[String],
    ctx: &mut Ctx,
) -> Result<(), StackError> {
    props.push(format!("mountpoint={}", mnt.display()));
    let ds = dataset(pool);
    let mut args = vec!["create"];
    props.iter().for_each(|p| args.extend(["-o", p]));
    args.push(&ds);
    ctx.exec.run("zfs", &args).map_err(|e| {
        if fuse_opts.is_empty() {
            return e;
        }
        let mount = spec.mount.as_deref().unwrap_or("");
        let fuse = fuse_opts.join(",");
        StackError::Environment(format!(
            "{e} (mount={mount} passes {fuse} to FUSE: check them)"
        ))
    })?;
    Ok(())
}

/// `mount=` options: those with a ZFS property (`noatime` is `atime=off`, `ro` is
/// `readonly=on`, ...) become dataset properties (`prop=value`); the rest are FUSE mount
/// options for zfs-fuse, and refused on OpenZFS.
fn split_mount_options(
    spec: &StackSpec,
    z: &ZfsSpec,
    openzfs: bool,
) -> Result<(Vec<String>, Vec<String>), StackError> {
    let table: Vec<(&str, &str, &str)> = MOUNT_AS_PROPERTY
        .split_whitespace()
        .filter_map(|e| {
            let (opt, pv) = e.split_once('=')?;
            let (p, v) = pv.split_once(':')?;
            Some((opt, p, v))
        })
        .collect();
    let (mut props, mut fuse) = (Vec::new(), Vec::new());
    for opt in spec.mount.iter().flat_map(|m| m.split(',')).map(str::trim) {
        let err = |why: String| StackError::Environment(format!("mount={opt}: {why}"));
        match table.iter().find(|(o, _, _)| *o == opt) {
            Some((_, k, v)) => match z.props.get(*k) {
                Some(given) if given != v => return Err(err(format!("contradicts {k}={given}"))),
                _ => props.push(format!("{k}={v}")),
            },
            None if openzfs => {
                let known: Vec<&str> = table.iter().map(|(o, _, _)| *o).collect();
                let known = known.join(", ");
                return Err(err(format!("ZFS mounts take properties; allowed: {known}")));
            }
            None if !opt.is_empty() => fuse.push(opt.to_string()),
            None => {}
        }
    }
    Ok((props, fuse))
}

/// `zpool create` arguments for the devices: the data devices per layout, then `log DEV`.
fn vdev_args(layout: PoolLayout, backing: &[Backing]) -> Vec<String> {
    let role = |r: &str| -> Vec<String> {
        let of_role = backing.iter().filter(|b| b.info.role == r);
        of_role.map(|b| b.device().to_string()).collect()
    };
    let group = |kind: &str, devs: &[String]| {
        std::iter::once(kind.to_string())
            .chain(devs.iter().cloned())
            .collect::<Vec<_>>()
    };
    let data = role("data");
    let mut args: Vec<String> = match layout {
        PoolLayout::Stripe => data,
        PoolLayout::Mirror => group("mirror", &data),
        PoolLayout::Raidz => group("raidz", &data),
        PoolLayout::MirrorStripe => data.chunks(2).flat_map(|p| group("mirror", p)).collect(),
    };
    let log = role("log");
    if !log.is_empty() {
        args.extend(group("log", &log));
    }
    args
}

/// Creates the pool (recording its destruction first), with no cache file and no mount.
fn create_pool(
    layout: PoolLayout,
    backing: &[Backing],
    pool: &str,
    ctx: &mut Ctx,
) -> Result<(), StackError> {
    ctx.ledger.record(Undo::DestroyPool {
        name: pool.to_string(),
    })?;
    let vdevs = vdev_args(layout, backing);
    let mut args = vec!["create", "-f", "-o", "cachefile=none", "-m", "none", pool];
    args.extend(vdevs.iter().map(String::as_str));
    ctx.exec.run("zpool", &args)?;
    Ok(())
}

/// Waits (10 s at most) for a mount at `mnt`; returns its file-system type.
fn wait_mounted(mnt: &Path) -> Result<String, StackError> {
    let start = Instant::now();
    let want = mnt.to_string_lossy();
    loop {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mounts = bakeoff_probe::parse_mountinfo(&text);
        if let Some(m) = mounts.into_iter().rfind(|m| m.mount_point == want) {
            return Ok(m.fstype);
        }
        if start.elapsed() > Duration::from_secs(10) {
            return Err(StackError::Environment(format!(
                "the ZFS dataset is not mounted at {}",
                mnt.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Makes the next reads cold: `zpool export` (unmounting the dataset, which drops the ARC's
/// buffers of the pool and the kernel's page cache of its files), then `zpool import` with
/// `cachefile=none`, looking for the devices in `/dev` (loop devices included), and checks
/// that the dataset is mounted where it was. A zfs-fuse daemon keeps running with its
/// settings. `info` is the stack's record (its `pool` property names the pool).
pub fn make_cold(info: &StackInfo, exec: &mut Exec) -> Result<(), StackError> {
    let pool = info.properties.get("pool").ok_or_else(|| {
        StackError::Environment(format!("stack {} records no ZFS pool", info.name))
    })?;
    make_pool_cold(pool, exec)
}

/// The stack's health as far as ZFS goes (its daemon, if any, is checked before): the pool is
/// `ONLINE`.
pub fn health(info: &StackInfo, exec: &mut Exec) -> Result<(), StackError> {
    let pool = info.properties.get("pool").map_or("", String::as_str);
    let list = Cmd::new("zpool", &["list", "-H", "-o", "health", pool]).timeout(PROBE_TIMEOUT);
    match exec.run_cmd(&list)?.trim() {
        "ONLINE" => Ok(()),
        h => Err(StackError::Environment(format!(
            "pool {pool} of stack {} is {h}",
            info.name
        ))),
    }
}

/// [`make_cold`] for a pool by name.
pub fn make_pool_cold(pool: &str, exec: &mut Exec) -> Result<(), StackError> {
    let ds = dataset(pool);
    let get = ["get", "-H", "-o", "value", "mountpoint", &ds];
    let mountpoint = PathBuf::from(exec.run("zfs", &get)?.trim());
    exec.run_retrying_busy("zpool", &["export", pool], Duration::from_secs(20))?;
    let import = ["import", "-o", "cachefile=none", "-d", "/dev", pool];
    exec.run("zpool", &import)?;
    wait_mounted(&mountpoint)?;
    let again = exec.run("zfs", &get)?;
    if Path::new(again.trim()) != mountpoint {
        return Err(StackError::Environment(format!(
            "{ds} came back mounted at {} instead of {}",
            again.trim(),
            mountpoint.display()
        )));
    }
    Ok(())
}

/// The tool ZFS stacks lack here, if any, and the Debian package that has it: `zpool` and `zfs`
/// (zfsutils-linux) with the OpenZFS module, else `zfs-fuse`, `zpool` and `zfs` (zfs-fuse).
pub fn missing_tool() -> Option<(&'static str, &'static str)> {
    let missing =
        |tools: &[&'static str]| tools.iter().copied().find(|t| !crate::exec::installed(t));
    if openzfs_loaded() {
        missing(&["zpool", "zfs"]).map(|t| (t, "zfsutils-linux"))
    } else {
        missing(&["zfs-fuse", "zpool", "zfs"]).map(|t| (t, "zfs-fuse"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_names_and_mount_options() {
        assert_eq!(pool_name("zfs-12:3 x"), "bk_zfs-12_3_x");
        let spec = StackSpec::parse("zfs:atime=on,mount=noatime").unwrap();
        let z = ZfsSpec::of(&spec).unwrap();
        assert!(split_mount_options(&spec, &z, false).is_err());
        let spec = StackSpec::parse("zfs:mount=noatime,ro,max_read=65536").unwrap();
        let z = ZfsSpec::of(&spec).unwrap();
        let (props, fuse) = split_mount_options(&spec, &z, false).unwrap();
        assert_eq!(props, vec!["atime=off", "readonly=on"]);
        assert_eq!(fuse, vec!["max_read=65536"]);
        assert!(split_mount_options(&spec, &z, true).is_err());
    }
}
