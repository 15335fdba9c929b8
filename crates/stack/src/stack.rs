//! A provisioned stack: built through the ledger, described for the run record, prepared for
//! fair runs, and torn down in reverse whatever happens (on drop too).

use crate::backing::{provide, Backing, BackingOptions, Ctx};
use crate::command_group::CommandGroup;
use crate::daemon::{Daemon, DaemonStart};
use crate::error::StackError;
use crate::exec::{Cmd, Exec};
use crate::fs::{self, Built};
use crate::ledger::{state_dir, Ledger};
use crate::spec::{StackKind, StackSpec};
use crate::undo::Undo;
use bakeoff_core::phaserecord::SpaceRecord;
use bakeoff_core::record::StackInfo;
use bakeoff_probe::DeviceInfo;
use std::io::Write;
use std::path::PathBuf;

/// Options of `stack create` and `run --stack`.
#[derive(Clone, Debug)]
pub struct Options {
    /// Directory for images and mount points (`--images`).
    pub images: PathBuf,
    /// Backing devices.
    pub backing: BackingOptions,
    /// Name to give the stack (default: `<kind>-<pid>-<n>`).
    pub name: Option<String>,
    /// Wait for another run's zfs-fuse to end (`--wait`) instead of refusing, until this flag
    /// (raised by Ctrl-C) is.
    pub wait: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            images: PathBuf::from("/var/tmp/bakeoff"),
            backing: BackingOptions {
                size: 1 << 30,
                ..BackingOptions::default()
            },
            name: None,
            wait: None,
        }
    }
}

/// A built stack. Dropping it tears it down.
pub struct Stack {
    /// The spec.
    pub spec: StackSpec,
    /// Where the workload runs.
    pub target: PathBuf,
    /// The target is a block device.
    pub is_device: bool,
    /// Devices for the probes: the stack's members (and their backing devices).
    pub devices: Vec<DeviceInfo>,
    /// Provenance for the run record.
    pub info: StackInfo,
    images: Option<PathBuf>,
    backing: Vec<Backing>,
    daemons: Vec<Daemon>,
    /// How many of `daemons` the stack itself runs (zfs-fuse); the rest were started on it.
    driver_daemons: usize,
    ledger: Option<Ledger>,
    /// The memory cgroup this process runs in for the run (`limit_memory`).
    mem_cgroup: Option<PathBuf>,
    exec: Exec,
    /// Say on stderr when the teardown starts (a ZFS pool takes seconds to export).
    announce_teardown: bool,
}

static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn default_name(kind: StackKind) -> String {
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{}-{n}", kind.name(), std::process::id())
}

impl Stack {
    /// Builds `spec`. On failure everything done so far is undone before the error returns.
    pub fn create(spec: &StackSpec, opts: &Options) -> Result<Stack, StackError> {
        if let Some((tool, package)) = fs::missing_tool(spec.kind) {
            return Err(StackError::Missing {
                kind: spec.kind.name(),
                tool,
                package,
            });
        }
        let name = opts.name.clone().unwrap_or_else(|| default_name(spec.kind));
        let mut ledger = Ledger::create(&state_dir(), &name)?;
        let mut exec = Exec::default();
        let dir = opts.images.join(&name);
        // The images directory is shared by stacks; remove it at the end only if we made it.
        let made_images = !opts.images.exists();
        let built = (|| {
            ledger.record(Undo::RemoveDir { path: dir.clone() })?;
            std::fs::create_dir_all(&dir).map_err(StackError::io("creating", &dir))?;
            let mut ctx = Ctx {
                ledger: &mut ledger,
                exec: &mut exec,
                dir: dir.clone(),
                name: name.clone(),
                wait: opts.wait.clone(),
            };
            let mut backing = provide(spec, &opts.backing, &mut ctx)?;
            let built = fs::build(spec, &mut backing, &mut ctx)?;
            Ok::<_, StackError>((backing, built))
        })();
        match built {
            Ok((backing, built)) => {
                let mut stack = Stack::assemble(spec, name, backing, built, ledger, exec);
                stack.images = made_images.then(|| opts.images.clone());
                Ok(stack)
            }
            Err(e) => {
                let failures = ledger.undo_all(&mut exec);
                if failures.is_empty() {
                    Err(e)
                } else {
                    Err(StackError::Environment(format!(
                        "{e}; and undoing it failed: {} (run `bakeoff cleanup`)",
                        failures.join("; ")
                    )))
                }
            }
        }
    }

    fn assemble(
        spec: &StackSpec,
        name: String,
        backing: Vec<Backing>,
        built: Built,
        ledger: Ledger,
        exec: Exec,
    ) -> Stack {
        let mut devices: Vec<DeviceInfo> = Vec::new();
        for b in &backing {
            for d in
                bakeoff_probe::resolve_devices(std::path::Path::new(b.device())).unwrap_or_default()
            {
                if !devices.iter().any(|x| x.name == d.name) {
                    devices.push(d);
                }
            }
        }
        if backing.is_empty() {
            devices = bakeoff_probe::resolve_devices(&built.target).unwrap_or_default();
        }
        let info = StackInfo {
            name,
            spec: spec.text.clone(),
            kind: spec.kind.name().into(),
            backend: built.backend.clone(),
            target: built.target.to_string_lossy().into_owned(),
            backing: backing.iter().map(|b| b.info.clone()).collect(),
            properties: built.properties.clone(),
            tool_versions: built.versions.clone(),
            commands: exec.log.clone(),
            cold: None,
            mem_limit_bytes: None,
            daemons: built.daemons.iter().map(|d| d.info.clone()).collect(),
            redundancy: built.redundancy,
        };
        Stack {
            spec: spec.clone(),
            target: built.target,
            is_device: !spec.kind.holds_files(),
            devices,
            info,
            images: None,
            backing,
            driver_daemons: built.daemons.len(),
            daemons: built.daemons,
            ledger: Some(ledger),
            mem_cgroup: None,
            exec,
            announce_teardown: false,
        }
    }

    /// The stack's name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// Tears the stack down; errors name what could not be undone.
    pub fn destroy(mut self) -> Result<(), StackError> {
        self.teardown()
    }

    /// Whether the teardown says `tearing down <name>…` on stderr when it starts.
    pub fn announce_teardown(&mut self, on: bool) {
        self.announce_teardown = on;
    }

    fn teardown(&mut self) -> Result<(), StackError> {
        self.backing.clear(); // releases exclusive claims before unmounting
        let Some(ledger) = self.ledger.take() else {
            return Ok(());
        };
        if self.announce_teardown {
            // Not eprintln!: it panics when stderr's reader has gone (`bakeoff ... 2>&1 | tee`
            // stopped with Ctrl-C), and the teardown below must still run.
            let _ = writeln!(
                std::io::stderr(),
                "bakeoff: tearing down {}…",
                self.info.name
            );
        }
        let failures = ledger.undo_all(&mut self.exec);
        if let Some(images) = &self.images {
            let _ = std::fs::remove_dir(images); // only once empty: other stacks may use it
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(StackError::Environment(format!(
                "teardown of {} left: {} (run `bakeoff cleanup`)",
                self.info.name,
                failures.join("; ")
            )))
        }
    }

    /// Keeps the stack after this process exits; `bakeoff stack destroy NAME` removes it.
    pub fn keep(mut self) -> Result<PathBuf, StackError> {
        let ledger = self.ledger.take().expect("a live stack has its ledger");
        let kept = ledger.keep_as(&state_dir(), &self.info.name)?;
        // A daemon it shares (zfs-fuse) stays up for it after this process has gone.
        for undo in crate::ledger::read_undos(&kept)? {
            if let Undo::LeaveShared { dir, user, .. } = undo {
                crate::sharing::Registry::lock(&dir)?.keep(&user, &kept)?;
            }
        }
        Ok(kept)
    }

    /// Prepares a fair run: what the driver needs to start cold (ZFS: export and re-import the
    /// pool, so the ARC starts cold), then `sync` and drop the page cache. With `warm`, nothing
    /// is dropped (and the record says so).
    pub fn prepare_run(&mut self, warm: bool) -> Result<(), StackError> {
        self.info.cold = Some(!warm);
        if warm {
            return Ok(());
        }
        let prepared = (self.spec.kind.driver().prepare_cold)(&self.info, &mut self.exec);
        self.info.commands = self.exec.log.clone();
        prepared?;
        drop_caches()
    }

    /// Writes back what the stack holds for its devices, as a running system's writeback would
    /// in time: the driver's step before a cold run (ZFS: export and re-import, so the open
    /// transaction group is synced), then `sync`. A run with crash states ends its states'
    /// window here, before the teardown (an unmount, ZFS's `zpool destroy`), which no power
    /// cut does.
    pub fn write_back(&mut self) -> Result<(), StackError> {
        let prepared = (self.spec.kind.driver().prepare_cold)(&self.info, &mut self.exec);
        self.info.commands = self.exec.log.clone();
        prepared?;
        rustix::fs::sync();
        Ok(())
    }

    /// The daemons the stack owns (zfs-fuse, and any started with [`Stack::start_daemon`]):
    /// their CPU is the stack's daemons' CPU.
    pub fn daemons(&self) -> &[Daemon] {
        &self.daemons
    }

    /// Starts a daemon on the live stack (a database server on its file system): its stop is
    /// in the ledger before it starts, its health is part of [`Stack::health`] and
    /// [`Stack::failure_cause`], teardown stops it (before unmounting what it runs on), and the
    /// run record lists it.
    pub fn start_daemon(&mut self, start: DaemonStart) -> Result<&Daemon, StackError> {
        let ledger = self.ledger.as_mut().expect("a live stack has its ledger");
        let started = crate::daemon::start(start, ledger, &mut self.exec);
        self.info.commands = self.exec.log.clone();
        let daemon = started?;
        self.info.daemons.push(daemon.info.clone());
        self.daemons.push(daemon);
        Ok(self.daemons.last().expect("just pushed"))
    }

    /// Stops the daemon `pid` of this stack now, as teardown would (its stop command, then
    /// signals), and forgets it: a database server stopped for a cold restart, or for good.
    /// Its undos stay in the ledger; they are idempotent (a daemon that is gone is left alone).
    pub fn stop_daemon(&mut self, pid: i32) -> Result<(), StackError> {
        let Some(at) = self.daemons.iter().position(|d| d.pid() == pid) else {
            return Err(StackError::Environment(format!(
                "stack {} owns no daemon with pid {pid}",
                self.info.name
            )));
        };
        let daemon = &self.daemons[at];
        let stopped = crate::undo::stop_daemon(pid, &daemon.info.exe, &daemon.stop, &mut self.exec);
        self.info.commands = self.exec.log.clone();
        stopped.map_err(|e| {
            StackError::Environment(format!("stopping the {} daemon: {e}", daemon.name()))
        })?;
        self.daemons.remove(at);
        self.info.daemons.retain(|d| d.pid != pid);
        Ok(())
    }

    /// Stops every daemon started on the stack with [`Stack::start_daemon`] (a database
    /// server), newest first, leaving the stack's own: before another stack it writes to (its
    /// log stack) is torn down.
    pub fn stop_started_daemons(&mut self) -> Result<(), StackError> {
        let started: Vec<i32> = (self.daemons[self.driver_daemons..].iter())
            .rev()
            .map(|d| d.pid())
            .collect();
        started
            .into_iter()
            .try_for_each(|pid| self.stop_daemon(pid))
    }

    /// Records `undo` in the stack's ledger, durably: call it before doing what it undoes (a
    /// database server's socket directory). Teardown and `bakeoff cleanup` carry it out with
    /// the stack's own undos, in reverse order: what is recorded after the mount is undone
    /// before the unmount.
    pub fn record_undo(&mut self, undo: Undo) -> Result<(), StackError> {
        let ledger = self.ledger.as_mut().expect("a live stack has its ledger");
        ledger.record(undo)
    }

    /// Runs `cmd` (`initdb` as `postgres` on the stack's file system) through the stack's
    /// runner: its time limit applies and the run record lists it with the stack's commands.
    pub fn run_command(&mut self, cmd: &Cmd) -> Result<String, StackError> {
        let out = self.exec.run_cmd(cmd);
        self.info.commands = self.exec.log.clone();
        out
    }

    /// An error naming the problem unless every daemon runs (checked first: a stopped FUSE
    /// daemon would hang the driver's own check) and the driver finds the stack healthy.
    pub fn health(&mut self) -> Result<(), StackError> {
        if let Some(cause) = self.failure_cause() {
            return Err(StackError::Environment(format!(
                "{cause}: results are invalid"
            )));
        }
        let healthy = (self.spec.kind.driver().health)(&self.info, &mut self.exec);
        self.info.commands = self.exec.log.clone();
        healthy
    }

    /// Runs this process in a memory cgroup limited to `bytes` until the stack is torn down.
    pub fn limit_memory(&mut self, bytes: u64) -> Result<(), StackError> {
        let ledger = self.ledger.as_mut().expect("a live stack has its ledger");
        let dir =
            crate::cgroup::limit_memory(bytes, &format!("bakeoff-{}", self.info.name), ledger)?;
        self.mem_cgroup = Some(dir);
        self.info.mem_limit_bytes = Some(bytes);
        Ok(())
    }

    /// A cgroup v2 named `name` for a command tree run on the stack, below the cgroup this
    /// process is in (so a memory limit applies), its removal recorded in the ledger first so
    /// that teardown and `bakeoff cleanup` kill whatever still runs in it. `None` where there
    /// is no cgroup v2 or this process may not make one (the caller falls back to `getrusage`).
    pub fn command_group(&mut self, name: &str) -> Result<Option<CommandGroup>, StackError> {
        let Some(parent) = crate::command_group::own_v2_cgroup() else {
            return Ok(None);
        };
        let path = parent.join(format!("bakeoff-{}-{name}", self.info.name));
        self.record_undo(Undo::KillCgroup { path: path.clone() })?;
        CommandGroup::create(path)
    }

    /// The stack's space use and compression now, as its driver reads them back (`zfs get`,
    /// `compsize`, `df`); `None` for a raw device. The commands run are the stack's.
    pub fn space(&mut self) -> Result<Option<SpaceRecord>, StackError> {
        let read = (self.spec.kind.driver().space)(&self.info, &self.target, &mut self.exec);
        self.info.commands = self.exec.log.clone();
        read
    }

    /// Why the stack itself failed during a run, if it did: a daemon of its own that died or
    /// was stopped, or the memory limit, whose OOM killer killed a process of the run.
    pub fn failure_cause(&self) -> Option<String> {
        let daemon = self.daemons.iter().find_map(|d| {
            let what = d.check().err()?;
            Some(format!(
                "the {} daemon (pid {}) of stack {} {what} during the run",
                d.name(),
                d.pid(),
                self.info.name
            ))
        });
        daemon.or_else(|| self.memory_cause())
    }

    /// The memory limit's part in a failure: how many processes its OOM killer killed.
    fn memory_cause(&self) -> Option<String> {
        let dir = self.mem_cgroup.as_ref()?;
        let kills = crate::cgroup::oom_kills(dir);
        let limit = self.info.mem_limit_bytes?;
        (kills > 0).then(|| {
            format!(
                "the memory limit ({} MiB, {}) was reached and the kernel killed {kills} \
                 process(es) of the run: raise mem_limit (--mem-limit), or give the workload \
                 fewer clients or a smaller cache",
                limit >> 20,
                dir.display()
            )
        })
    }

    /// Bytes the workload can use on the stack: free space of the file system, or the device size.
    pub fn capacity(&self) -> Result<u64, StackError> {
        if self.is_device {
            use std::io::Seek;
            let mut f = std::fs::File::open(&self.target)
                .map_err(StackError::io("opening", &self.target))?;
            return f
                .seek(std::io::SeekFrom::End(0))
                .map_err(StackError::io("sizing", &self.target));
        }
        let vfs = rustix::fs::statvfs(&self.target)
            .map_err(|e| StackError::io("statvfs", &self.target)(e.into()))?;
        Ok(vfs.f_bavail.saturating_mul(vfs.f_frsize))
    }
}

/// `sync`, then drop clean page cache, dentries and inodes (global: `echo 3 > drop_caches`).
pub fn drop_caches() -> Result<(), StackError> {
    rustix::fs::sync();
    let knob = std::path::Path::new("/proc/sys/vm/drop_caches");
    std::fs::write(knob, "3").map_err(StackError::io("writing (needs root)", knob))
}

impl Drop for Stack {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            // A panic here, while unwinding, would abort: never eprintln! (see teardown).
            let _ = writeln!(std::io::stderr(), "bakeoff: {e}");
        }
    }
}

#[cfg(test)]
mod tests;
