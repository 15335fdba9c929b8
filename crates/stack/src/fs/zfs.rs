//! ZFS: OpenZFS when its kernel module is loaded (`/sys/module/zfs`), else zfs-fuse, a daemon
//! bakeoff starts for the stack with explicit cache settings and stops at teardown
//! ([`zfs_fuse`]).
//!
//! The pool `bk_<stack name>` is created with `cachefile=none`, so nothing (a daemon restarted
//! after a crash, a reboot) imports it again on its own; the dataset `<pool>/data` carries the
//! spec's properties and is mounted at `<stack dir>/mnt`. Everything is read back: the dataset's
//! properties (`zfs get`), the layout (`zpool status`), the cache settings in force.
//!
//! Teardown, through the ledger in reverse: `zpool destroy` (unmounts too), unmount (lazily for
//! a dead FUSE daemon), stop the daemon, detach the loops. If the daemon was killed, the pool
//! cannot be destroyed but needs not be: it is in no cache file and its devices go away.

#[path = "zfs_fuse.rs"]
pub mod zfs_fuse;

use super::{mount_options, Built};
use crate::backing::{Backing, Ctx};
use crate::error::StackError;
use crate::exec::Exec;
use crate::ledger::Undo;
use crate::spec::{PoolLayout, StackSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// OpenZFS module parameters.
const PARAMS: &str = "/sys/module/zfs/parameters";

/// True if the OpenZFS kernel module is loaded (then it is used rather than zfs-fuse).
pub fn openzfs_loaded() -> bool {
    Path::new("/sys/module/zfs").exists()
}

/// The pool of a stack: `bk_` and the stack name, with characters ZFS refuses replaced by `_`.
pub fn pool_name(stack: &str) -> String {
    let clean: String = stack
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' | '.' => c,
            _ => '_',
        })
        .take(200)
        .collect();
    format!("bk_{clean}")
}

/// The dataset the workload runs in.
pub fn dataset(pool: &str) -> String {
    format!("{pool}/data")
}

/// Builds a pool over the backing devices (data devices per the layout, a `log` device if the
/// spec has one) and a dataset with the spec's properties, mounted at `<stack dir>/mnt`.
pub fn build(spec: &StackSpec, backing: &[Backing], ctx: &mut Ctx) -> Result<Built, StackError> {
    let openzfs = openzfs_loaded();
    let (mount_props, fuse_opts) = split_mount_options(spec, openzfs)?;
    let (backend, mut properties, versions) = if openzfs {
        openzfs_setup(spec, ctx)?
    } else {
        let settings = zfs_fuse::start(spec, ctx, &fuse_opts)?;
        let version = zfs_fuse::package_version();
        let upstream = version.as_deref().map(|v| v.split('-').next().unwrap_or(v));
        let backend = format!("zfs-fuse {}", upstream.unwrap_or("(version unknown)"));
        let versions = version
            .map(|v| ("zfs-fuse".to_string(), v))
            .into_iter()
            .collect();
        (backend, settings, versions)
    };
    let mnt = ctx.dir.join("mnt");
    ctx.ledger.record(Undo::RemoveDir { path: mnt.clone() })?;
    std::fs::create_dir_all(&mnt).map_err(StackError::io("creating mount point", &mnt))?;
    ctx.ledger.record(Undo::Unmount { path: mnt.clone() })?;
    let pool = pool_name(&ctx.name);
    create_pool(spec, backing, &pool, ctx)?;
    let mut props: Vec<String> = spec
        .zfs_props
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    props.extend(mount_props.iter().map(|(k, v)| format!("{k}={v}")));
    props.push(format!("mountpoint={}", mnt.display()));
    let mut args = vec!["create"];
    for p in &props {
        args.extend(["-o", p]);
    }
    let ds = dataset(&pool);
    args.push(&ds);
    ctx.exec.run("zfs", &args)?;
    let fstype = wait_mounted(&mnt)?;
    properties.extend(read_back(&pool, ctx.exec)?);
    if let Some(o) = mount_options(&mnt) {
        properties.insert("mount_options".into(), o);
    }
    properties.insert("fstype".into(), fstype);
    properties.insert("backend".into(), backend.clone());
    Ok(Built {
        target: mnt,
        is_device: false,
        backend,
        properties,
        versions,
    })
}

/// `mount=` options: those with a ZFS property (`noatime` is `atime=off`, `ro` is
/// `readonly=on`, ...) become dataset properties; the rest are FUSE mount options for
/// zfs-fuse, and refused on OpenZFS.
type MountSplit = (Vec<(String, String)>, Vec<String>);
fn split_mount_options(spec: &StackSpec, openzfs: bool) -> Result<MountSplit, StackError> {
    const AS_PROPERTY: &[(&str, &str, &str)] = &[
        ("noatime", "atime", "off"),
        ("atime", "atime", "on"),
        ("strictatime", "atime", "on"),
        ("ro", "readonly", "on"),
        ("rw", "readonly", "off"),
        ("noexec", "exec", "off"),
        ("exec", "exec", "on"),
        ("nosuid", "setuid", "off"),
        ("suid", "setuid", "on"),
        ("nodev", "devices", "off"),
        ("dev", "devices", "on"),
    ];
    let (mut props, mut fuse) = (Vec::new(), Vec::new());
    for opt in spec.mount.iter().flat_map(|m| m.split(',')).map(str::trim) {
        let err = |why: String| StackError::Environment(format!("mount={opt}: {why}"));
        match AS_PROPERTY.iter().find(|(o, _, _)| *o == opt) {
            Some((_, k, v)) => match spec.zfs_props.get(*k) {
                Some(given) if given != v => return Err(err(format!("contradicts {k}={given}"))),
                _ => props.push((k.to_string(), v.to_string())),
            },
            None if openzfs => {
                let known: Vec<&str> = AS_PROPERTY.iter().map(|(o, _, _)| *o).collect();
                let known = known.join(", ");
                return Err(err(format!(
                    "ZFS mounts take dataset properties; allowed: {known}"
                )));
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
        backing
            .iter()
            .filter(|b| b.info.role == r)
            .map(|b| b.device().to_string())
            .collect()
    };
    let data = role("data");
    let mut args: Vec<String> = match layout {
        PoolLayout::Stripe => data,
        PoolLayout::Mirror => std::iter::once("mirror".into()).chain(data).collect(),
        PoolLayout::Raidz => std::iter::once("raidz".into()).chain(data).collect(),
        PoolLayout::MirrorStripe => data
            .chunks(2)
            .flat_map(|pair| std::iter::once("mirror".to_string()).chain(pair.iter().cloned()))
            .collect(),
    };
    let log = role("log");
    if !log.is_empty() {
        args.push("log".into());
        args.extend(log);
    }
    args
}

/// Creates the pool (recording its destruction first), with no cache file and no mount.
fn create_pool(
    spec: &StackSpec,
    backing: &[Backing],
    pool: &str,
    ctx: &mut Ctx,
) -> Result<(), StackError> {
    ctx.ledger.record(Undo::DestroyPool {
        name: pool.to_string(),
    })?;
    let vdevs = vdev_args(spec.layout, backing);
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
        let found = bakeoff_probe::parse_mountinfo(&text)
            .into_iter()
            .rfind(|m| m.mount_point == want);
        if let Some(m) = found {
            return Ok(m.fstype);
        }
        if start.elapsed() > Duration::from_secs(10) {
            return Err(StackError::Environment(format!(
                "the ZFS dataset was created but {} is not mounted",
                mnt.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `property<TAB>value` lines as a map.
fn tab_pairs(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The dataset's properties as `zfs get` shows them (`recordsize` = `8K`), the exact byte
/// counts where they differ (`recordsize_bytes` = `8192`), the pool's layout and cache file.
pub fn read_back(pool: &str, exec: &mut Exec) -> Result<BTreeMap<String, String>, StackError> {
    let ds = dataset(pool);
    let get = ["get", "-H", "-o", "property,value", "all", &ds];
    let mut props = tab_pairs(&exec.run("zfs", &get)?);
    let exact = ["get", "-H", "-p", "-o", "property,value", "all", &ds];
    for (k, v) in tab_pairs(&exec.run("zfs", &exact)?) {
        let number = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        if number && k != "creation" && props.get(&k) != Some(&v) {
            props.insert(format!("{k}_bytes"), v);
        }
    }
    let vdevs = parse_status(&exec.run("zpool", &["status", pool])?, pool);
    props.extend(describe_layout(&vdevs));
    let pool_props = exec.run("zpool", &["get", "-H", "-o", "property,value", "all", pool])?;
    for (k, v) in tab_pairs(&pool_props) {
        if ["cachefile", "version", "ashift", "size"].contains(&k.as_str()) {
            props.insert(format!("pool_{k}"), v);
        }
    }
    if let Some(ashift) = created_ashift(exec) {
        props.insert("ashift".into(), ashift);
    }
    props.insert("pool".into(), pool.to_string());
    props.insert("dataset".into(), ds);
    Ok(props)
}

/// The `ashift=N` zfs-fuse reports on stderr when it chose one (`Defaulting to 4K blocksize`).
fn created_ashift(exec: &Exec) -> Option<String> {
    let create = exec
        .log
        .iter()
        .rev()
        .find(|c| c.argv.get(1).is_some_and(|a| a == "create"))?;
    let at = create.stderr.find("ashift=")?;
    let digits: String = create.stderr[at + 7..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!digits.is_empty()).then_some(digits)
}

/// One top-level vdev in `zpool status`: its section (`data`, `logs`, `cache`, `spares`), name
/// (`mirror-0`, `loop3`) and members.
#[derive(Clone, Debug, PartialEq)]
pub struct Vdev {
    /// `data` for the pool's own vdevs, else the status section (`logs`).
    pub section: String,
    /// `mirror-0`, `raidz1-0`, or a device for a plain vdev.
    pub name: String,
    /// Devices of a mirror or raidz; empty for a plain device.
    pub members: Vec<String>,
}

/// The `config:` table of `zpool status POOL`.
pub fn parse_status(text: &str, pool: &str) -> Vec<Vdev> {
    let mut out: Vec<Vdev> = Vec::new();
    let mut section = None;
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("NAME"));
    lines.next();
    for line in lines.take_while(|l| !l.trim_start().starts_with("errors:")) {
        let body = line.trim_start_matches('\t');
        let Some(name) = body.split_whitespace().next() else {
            continue;
        };
        match (body.len() - body.trim_start().len()) / 2 {
            0 => section = Some(if name == pool { "data" } else { name }.to_string()),
            1 => out.push(Vdev {
                section: section.clone().unwrap_or_default(),
                name: name.to_string(),
                members: Vec::new(),
            }),
            _ => out
                .iter_mut()
                .last()
                .into_iter()
                .for_each(|v| v.members.push(name.into())),
        }
    }
    out
}

/// `layout` (stripe, mirror, raidz, mirror-stripe) as read back, `vdevs`, and `log_vdevs`.
fn describe_layout(vdevs: &[Vdev]) -> BTreeMap<String, String> {
    let show = |section: &str| -> String {
        let parts = vdevs.iter().filter(|v| v.section == section).map(|v| {
            if v.members.is_empty() {
                v.name.clone()
            } else {
                format!("{}({})", v.name, v.members.join(","))
            }
        });
        parts.collect::<Vec<_>>().join(" ")
    };
    let data: Vec<&Vdev> = vdevs.iter().filter(|v| v.section == "data").collect();
    let all = |p: &str| !data.is_empty() && data.iter().all(|v| v.name.starts_with(p));
    let layout = match data.len() {
        1 if all("mirror") => "mirror",
        _ if all("mirror") => "mirror-stripe",
        _ if all("raidz") => "raidz",
        _ if data.iter().all(|v| v.members.is_empty()) => "stripe",
        _ => "mixed",
    };
    let mut out = BTreeMap::from([
        ("layout".to_string(), layout.to_string()),
        ("vdevs".to_string(), show("data")),
    ]);
    let logs = show("logs");
    if !logs.is_empty() {
        out.insert("log_vdevs".into(), logs);
    }
    out
}
