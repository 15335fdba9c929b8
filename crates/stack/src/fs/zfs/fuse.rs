//! zfs-fuse: the user-space ZFS daemon bakeoff starts for a zfs stack when no OpenZFS kernel
//! module is loaded; the last stack using it stops it at teardown.
//!
//! The daemon is host-global (one socket, `/var/run/zfs/zfs_socket`, one lock): stacks of
//! this run and of other runs that ask for the same settings share it, each with its own pool
//! ([`super::owner`] says who may), and a daemon bakeoff did not start is refused: its ARC and
//! cache settings are unknown. zfs-fuse reads
//! `/etc/zfs/zfsrc` first and its command line second, so bakeoff passes every setting that
//! matters as a flag (`--max-arc-size`, `--vdev-cache-size`, `--disable-block-cache`). Flags
//! without a value (`zfs-prefetch-disable`, `enable-xattr`) cannot be undone on the command
//! line: bakeoff reads them from zfsrc and records them, and refuses `prefetch=on` if zfsrc
//! turns prefetch off.

use super::model::Setup;
use super::owner::{examine, DaemonState, Found, Waiting, PIDFILE, ZFS_FUSE_DIR};
use super::spec::ZfsSpec;
use crate::backing::Ctx;
use crate::daemon::{self, Daemon, DaemonInfo, DaemonStart, StopBy};
use crate::error::StackError;
use crate::exec::{Cmd, Exec, PROBE_TIMEOUT};
use crate::sharing::{Registry, User};
use crate::undo::Undo;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The configuration file zfs-fuse reads before its command line.
const ZFSRC: &str = "/etc/zfs/zfsrc";
/// How long the daemon may take to write its pid file, and then to answer `zpool list`.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where `zfs-fuse` is installed (canonical, as `/proc/PID/exe` shows it).
pub fn locate() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join("zfs-fuse"))
        .find(|p| p.is_file())
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
}

/// Running zfs-fuse processes: pid and command line.
pub fn running(exe: &Path) -> Vec<(i32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let exe = exe.to_string_lossy();
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| crate::process::exe_of(pid).as_deref() == Some(&*exe))
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (pid, cmd.trim().to_string())
        })
        .collect()
}

/// `/etc/zfs/zfsrc` as zfs-fuse parses it: `name = value` lines and bare flags; `#` comments.
fn zfsrc(text: &str) -> Vec<(String, Option<String>)> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (l.split_whitespace().next().unwrap_or("").to_string(), None),
        })
        .collect()
}

/// A size in whole MiB within `min..=max` MiB, for a zfs-fuse flag.
fn mib(key: &str, bytes: u64, min: u64, max: u64) -> Result<u64, StackError> {
    let mb = bytes >> 20;
    if bytes % (1 << 20) != 0 || !(min..=max).contains(&mb) {
        return Err(StackError::Environment(format!(
            "{key}={bytes} bytes: zfs-fuse takes whole MiB from {min} MiB to {max} MiB"
        )));
    }
    Ok(mb)
}

/// Daemon flags and what they amount to, from the spec over zfsrc.
#[derive(Debug, Default, PartialEq)]
struct Settings {
    args: Vec<String>,
    record: BTreeMap<String, String>,
}

impl Settings {
    fn set(&mut self, key: &str, value: impl Into<String>) {
        self.record.insert(key.into(), value.into());
    }

    fn flag(&mut self, flag: &str, value: Option<String>) {
        self.args.push(flag.into());
        self.args.extend(value);
    }
}

/// Computes the daemon's command line; `fuse_opts` are extra FUSE mount options.
fn settings(spec: &ZfsSpec, rc: &str, fuse_opts: &[String]) -> Result<Settings, StackError> {
    let rc = zfsrc(rc);
    let value = |k: &str| {
        rc.iter()
            .rev()
            .find(|(n, _)| n == k)
            .and_then(|(_, v)| v.clone())
    };
    let rc_flag = |k: &str| rc.iter().any(|(n, v)| n == k && v.is_none());
    let num = |k: &str| value(k).and_then(|v| v.parse::<u64>().ok());
    let mut s = Settings::default();
    let arc = match spec.arc {
        Some(b) => Some(mib("arc", b, 16, 16384)?),
        None => num("max-arc-size"),
    };
    match arc {
        Some(mb) => {
            s.flag("--max-arc-size", Some(mb.to_string()));
            s.set("arc_max", (mb << 20).to_string());
        }
        None => s.set("arc_max", "zfs-fuse default"),
    }
    let vdev = match spec.vdev_cache {
        Some(b) => mib("vdev_cache", b, 0, 16384)?,
        None => num("vdev-cache-size").unwrap_or(10),
    };
    s.flag("--vdev-cache-size", Some(vdev.to_string()));
    s.set("vdev_cache", (vdev << 20).to_string());
    let rc_off = rc_flag("zfs-prefetch-disable");
    if spec.prefetch == Some(true) && rc_off {
        return Err(StackError::Environment(format!(
            "prefetch=on: {ZFSRC} has `zfs-prefetch-disable`, which zfs-fuse reads before its \
             command line and no flag undoes; comment it out there or drop prefetch=on"
        )));
    }
    if spec.prefetch == Some(false) {
        s.flag("--zfs-prefetch-disable", None);
    }
    let off = spec.prefetch == Some(false) || rc_off;
    s.set("prefetch", if off { "off" } else { "on" });
    s.flag("--no-kstat-mount", None);
    s.flag("--disable-block-cache", None);
    s.set("block_cache", "off (--disable-block-cache)");
    for (k, d) in [("fuse-attr-timeout", "0"), ("fuse-entry-timeout", "0")] {
        s.set(&k.replace('-', "_"), value(k).unwrap_or_else(|| d.into()));
    }
    for k in ["enable-xattr", "disable-page-cache"] {
        s.set(&k.replace('-', "_"), rc_flag(k).to_string());
    }
    let mut opts: Vec<String> = value("fuse-mount-options").into_iter().collect();
    if !fuse_opts.is_empty() {
        s.flag("--fuse-mount-options", Some(fuse_opts.join(",")));
        opts.extend(fuse_opts.iter().cloned());
    }
    s.set("fuse_mount_options", opts.join(","));
    Ok(s)
}

fn backend_name(version: Option<&str>) -> String {
    let upstream = version.map(|v| v.split('-').next().unwrap_or(v));
    format!("zfs-fuse {}", upstream.unwrap_or("(version unknown)"))
}

/// Starts the daemon for this stack with the spec's cache settings (`fuse_opts` are FUSE mount
/// options), or uses the one bakeoff started for another stack (of this run or another) if it
/// runs with the same settings; with other settings, refuses naming whom it serves, or with
/// `--wait` waits until they are done. Returns the backend (`zfs-fuse 0.7.0`), what the daemon
/// runs with (`arc_max`, `vdev_cache`, `prefetch`, ...), the package version and the daemon.
pub(super) fn start(
    spec: &ZfsSpec,
    ctx: &mut Ctx,
    fuse_opts: &[String],
) -> Result<Setup, StackError> {
    let exe = locate().ok_or(StackError::Missing {
        kind: "zfs",
        tool: "zfs-fuse",
        package: "zfs-fuse",
    })?;
    let rc = std::fs::read_to_string(ZFSRC).unwrap_or_default();
    let s = settings(spec, &rc, fuse_opts)?;
    let mut waiting = Waiting::default();
    loop {
        // Held while the daemon is looked at and started or joined: two runs starting at once
        // never start two daemons, and none joins a daemon its last user is stopping.
        let registry = Registry::lock(Path::new(ZFS_FUSE_DIR))?;
        match examine(&registry, &running(&exe), &s.args, &s.record) {
            Found::Nothing => return launch(&registry, &exe, s, ctx),
            Found::Same(state) => return join(&registry, &exe, state, s, ctx),
            Found::Refused { why, waits_for } => {
                drop(registry);
                waiting.wait_or_refuse(why, waits_for, ctx.wait.as_ref())?;
            }
        }
    }
}

/// How the stack `user` of this process leaves the shared daemon running `exe`: the last user
/// stops it.
fn leaving(user: &User, exe: &str) -> Undo {
    let pidfile = Path::new(ZFS_FUSE_DIR).join(PIDFILE);
    let stop = StopBy::Signal;
    Undo::LeaveShared {
        dir: PathBuf::from(ZFS_FUSE_DIR),
        user: user.token.clone(),
        last: vec![
            Undo::StopDaemonByPidfile {
                pidfile: pidfile.clone(),
                exe: exe.to_string(),
                stop,
            },
            Undo::RemoveFile { path: pidfile },
        ],
    }
}

/// Records this stack's leaving of the shared daemon (the last user stops it), then adds it
/// to the registry's users.
fn become_user(registry: &Registry, exe: &Path, ctx: &mut Ctx) -> Result<(), StackError> {
    let user = User::this_process(&ctx.name);
    ctx.ledger.record(leaving(&user, &exe.to_string_lossy()))?;
    registry.join(&user)
}

/// The stack `name` of this process leaves the shared daemon running `exe` now, as its
/// teardown would (the undo stays in its ledger: leaving again changes nothing); the daemon
/// stops if it was the last user.
pub fn leave(name: &str, exe: &str, exec: &mut Exec) -> Result<(), StackError> {
    let undo = leaving(&User::this_process(name), exe);
    crate::undo::perform(&undo, exec).map_err(StackError::Environment)
}

/// Uses the running daemon `state` describes, which runs with the settings `s` asks for.
fn join(
    registry: &Registry,
    exe: &Path,
    state: DaemonState,
    s: Settings,
    ctx: &mut Ctx,
) -> Result<Setup, StackError> {
    become_user(registry, exe, ctx)?;
    let pid = state.pid;
    let mut settings = s.record;
    settings.insert(
        "daemon".into(),
        format!(
            "shared (zfs-fuse pid {pid}, started for stack {})",
            state.started_for
        ),
    );
    let version = package_version(ctx.exec);
    let daemon = Daemon {
        info: DaemonInfo {
            name: "zfs-fuse".into(),
            pid,
            exe: exe.to_string_lossy().into_owned(),
            args: crate::process::command_line(pid).unwrap_or_default(),
        },
        stop: StopBy::Signal,
    };
    Ok(Setup {
        backend: backend_name(version.as_deref()),
        settings,
        versions: version
            .map(|v| ("zfs-fuse".to_string(), v))
            .into_iter()
            .collect(),
        daemon: Some(daemon),
    })
}

/// Starts a daemon with the settings `s`, its pid file and registry in `registry`'s directory,
/// this stack its first user; returns once it answers `zpool list`, still holding the lock.
fn launch(
    registry: &Registry,
    exe: &Path,
    mut s: Settings,
    ctx: &mut Ctx,
) -> Result<Setup, StackError> {
    // Whoever the registry listed used a daemon that is gone.
    registry.reset();
    become_user(registry, exe, ctx)?;
    let flags = s.args.clone();
    let pidfile = registry.dir().join(PIDFILE);
    let mut args = vec![
        "--pidfile".to_string(),
        pidfile.to_string_lossy().into_owned(),
    ];
    args.append(&mut s.args);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = DaemonStart {
        name: "zfs-fuse".into(),
        command: Cmd::new(&exe.to_string_lossy(), &argv),
        exe: exe.to_path_buf(),
        pidfile,
        stop: StopBy::Signal,
        ready_within: READY_TIMEOUT,
        launched: None,
    };
    let daemon = daemon::launch(&start, ctx.exec).map_err(|e| {
        let others = running(exe);
        StackError::Environment(format!(
            "{e} (zfs-fuse logs to syslog only; zfs-fuse running: {others:?})"
        ))
    })?;
    registry.set_state(&DaemonState {
        pid: daemon.pid(),
        flags,
        settings: s.record.clone(),
        started_for: ctx.name.clone(),
    })?;
    wait_ready(&daemon, ctx)?;
    let version = package_version(ctx.exec);
    let backend = backend_name(version.as_deref());
    let versions = version.map(|v| ("zfs-fuse".to_string(), v));
    Ok(Setup {
        backend,
        settings: s.record,
        versions: versions.into_iter().collect(),
        daemon: Some(daemon),
    })
}

/// Waits until the daemon answers `zpool list`.
fn wait_ready(daemon: &Daemon, ctx: &mut Ctx) -> Result<(), StackError> {
    let start = Instant::now();
    let pid = daemon.pid();
    loop {
        if let Err(what) = daemon.check() {
            return Err(StackError::Environment(format!(
                "zfs-fuse (pid {pid}) {what} during start-up (another daemon holding \
                 /var/lock/zfs/zfs_lock? /dev/fuse missing?); it logs to syslog only"
            )));
        }
        let list = Cmd::new("zpool", &["list", "-H"]).timeout(PROBE_TIMEOUT);
        if ctx.exec.run_cmd(&list).is_ok() {
            return Ok(());
        }
        if start.elapsed() > READY_TIMEOUT {
            return Err(StackError::Environment(format!(
                "zfs-fuse (pid {pid}) does not answer `zpool list` after {} s",
                READY_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The zfs-fuse package version (`0.7.0-25+b1`): the daemon has no `--version`.
pub fn package_version(exec: &mut Exec) -> Option<String> {
    exec.version_of("dpkg-query", &["-W", "-f=${Version}", "zfs-fuse"])
        .filter(|v| !v.is_empty() && !v.contains("no packages"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN_RC: &str = "# comment\nvdev-cache-size = 10\nmax-arc-size = 100\n\
        zfs-prefetch-disable\n# disable-block-cache\nfuse-attr-timeout = 3600\n\
        fuse-mount-options = default_permissions\n";

    fn spec(text: &str) -> ZfsSpec {
        ZfsSpec::of(&crate::spec::StackSpec::parse(text).unwrap()).unwrap()
    }

    #[test]
    fn flags_win_over_zfsrc_and_zfsrc_is_recorded() {
        let s = settings(&spec("zfs:arc=64m,vdev_cache=0"), DEBIAN_RC, &[]).unwrap();
        let a = s.args.join(" ");
        assert!(
            a.contains("--max-arc-size 64") && a.contains("--vdev-cache-size 0"),
            "{a}"
        );
        assert!(a.contains("--disable-block-cache") && a.contains("--no-kstat-mount"));
        assert_eq!(s.record["arc_max"], (64u64 << 20).to_string());
        assert_eq!(s.record["vdev_cache"], "0");
        assert_eq!(s.record["prefetch"], "off");
        assert_eq!(s.record["fuse_attr_timeout"], "3600");
        assert_eq!(s.record["fuse_mount_options"], "default_permissions");
        let s = settings(&spec("zfs"), DEBIAN_RC, &["max_read=65536".into()]).unwrap();
        let a = s.args.join(" ");
        assert!(
            a.contains("--max-arc-size 100") && a.contains("--vdev-cache-size 10"),
            "{a}"
        );
        assert_eq!(
            s.record["fuse_mount_options"],
            "default_permissions,max_read=65536"
        );
    }

    #[test]
    fn impossible_settings_are_refused() {
        let e = settings(&spec("zfs:prefetch=on"), DEBIAN_RC, &[]).unwrap_err();
        assert!(e.to_string().contains("zfs-prefetch-disable"), "{e}");
        assert!(settings(&spec("zfs:prefetch=on"), "", &[]).is_ok());
        let e = settings(&spec("zfs:arc=8m"), "", &[]).unwrap_err();
        assert!(e.to_string().contains("16 MiB"), "{e}");
        assert!(settings(&spec("zfs:arc=1000k"), "", &[]).is_err());
        let s = settings(&spec("zfs:prefetch=off"), "", &[]).unwrap();
        assert!(s.args.contains(&"--zfs-prefetch-disable".to_string()));
        assert_eq!(s.record["arc_max"], "zfs-fuse default");
    }
}
