//! One instance of a phase's command: started in its own cgroup v2 (or, without one, its own
//! process group), its output passed on and kept as [`super::output`] says (the last lines of
//! standard error always), its exit and its CPU
//! (the cgroup's `cpu.stat`, or `getrusage(RUSAGE_CHILDREN)` across its wait) taken when it
//! ends, and the whole tree killed on demand.

use super::output::{Sink, TAIL_LINES};
use bakeoff_core::phaserecord::{CpuSource, InstanceRecord};
use bakeoff_probe::rusage_children;
use bakeoff_stack::command_group::CommandGroup;
use rustix::process::{kill_process_group, Pid, Signal};
use std::collections::VecDeque;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What to start.
pub struct Launch {
    /// 1-based index within the phase.
    pub index: u32,
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Working directory (made by the caller).
    pub dir: PathBuf,
    /// Environment on top of bakeoff's own.
    pub env: Vec<(String, String)>,
    /// Its cgroup, if cgroup v2 is there.
    pub group: Option<CommandGroup>,
    /// Where its standard output and standard error go.
    pub sinks: (Sink, Sink),
}

/// A started instance.
pub struct Running {
    index: u32,
    dir: PathBuf,
    child: Child,
    group: Option<CommandGroup>,
    started: Instant,
    start_offset_s: f64,
    tail: Arc<Mutex<VecDeque<String>>>,
    readers: Vec<JoinHandle<()>>,
    files: (Option<String>, Option<String>),
}

/// How an instance ended, and what it cost.
pub struct Ended {
    /// Its record.
    pub record: InstanceRecord,
    /// Its cgroup, still holding anything it left running (removed at the end of the run).
    pub group: Option<CommandGroup>,
}

impl Launch {
    /// Starts it; `origin` is the recipe's start, for the start offset.
    pub fn start(self, origin: Instant) -> std::io::Result<Running> {
        let argv = match &self.group {
            Some(g) => g.wrap(&self.argv),
            None => self.argv.clone(),
        };
        let (out, err) = &self.sinks;
        let (out_file, err_file) = (out.open()?, err.open()?);
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&self.dir)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out.stdout_stdio()?)
            .stderr(Stdio::piped())
            // Its own process group: Ctrl-C at the terminal reaches bakeoff, which stops the
            // tree itself; and without a cgroup the group is what is killed.
            .process_group(0)
            .spawn()?;
        let started = Instant::now();
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
        let mut readers = Vec::new();
        readers.extend(
            child
                .stdout
                .take()
                .map(|pipe| out.copy(pipe, out_file, None)),
        );
        readers
            .extend((child.stderr.take()).map(|pipe| err.copy(pipe, err_file, Some(tail.clone()))));
        let name = |s: &Sink| s.file().map(|f| f.display().to_string());
        let files = (name(out), name(err));
        Ok(Running {
            index: self.index,
            dir: self.dir,
            child,
            group: self.group,
            started,
            start_offset_s: started.saturating_duration_since(origin).as_secs_f64(),
            tail,
            readers,
            files,
        })
    }
}

impl Running {
    /// How CPU is measured for it.
    pub fn cpu_source(&self) -> CpuSource {
        match self.group {
            Some(_) => CpuSource::Cgroup,
            None => CpuSource::Rusage,
        }
    }

    /// Its index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Reaps it if it has exited. The `RUSAGE_CHILDREN` reading just before the wait makes the
    /// difference after it this instance's tree, as nothing else is reaped in between.
    pub fn try_end(&mut self) -> std::io::Result<Option<Ended>> {
        let before = rusage_children();
        let Some(status) = self.child.try_wait()? else {
            return Ok(None);
        };
        let after = rusage_children();
        let real_s = self.started.elapsed().as_secs_f64();
        let (user_us, sys_us) = match &self.group {
            Some(g) => g.cpu_us().ok().unzip(),
            None => (
                Some(after.0.saturating_sub(before.0)),
                Some(after.1.saturating_sub(before.1)),
            ),
        };
        // A pipe closes when the last process holding it exits: a moment after the command,
        // or never while a daemon it started keeps it open (then the last lines read so far
        // are the tail, and the copy goes on while the daemon writes).
        let waited = Instant::now();
        for reader in std::mem::take(&mut self.readers) {
            while !reader.is_finished() && waited.elapsed() < Duration::from_secs(1) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let failed = !status.success();
        Ok(Some(Ended {
            record: InstanceRecord {
                index: self.index,
                dir: self.dir.display().to_string(),
                start_offset_s: self.start_offset_s,
                real_s,
                user_s: user_us.map(|u| u as f64 / 1e6),
                sys_s: sys_us.map(|s| s as f64 / 1e6),
                exit_code: status.code(),
                signal: status.signal(),
                stderr_tail: if failed { tail.into() } else { Vec::new() },
                stdout_file: self.files.0.clone(),
                stderr_file: self.files.1.clone(),
            },
            group: self.group.take(),
        }))
    }

    /// Kills its whole tree (it is reaped by a later [`Running::try_end`]).
    pub fn kill(&mut self) {
        match &self.group {
            Some(g) => {
                if let Err(e) = g.kill() {
                    eprintln!("bakeoff: warning: {e}");
                }
            }
            None => {
                if let Some(pgid) = Pid::from_raw(self.child.id() as i32) {
                    let _ = kill_process_group(pgid, Signal::KILL);
                }
            }
        }
    }
}
