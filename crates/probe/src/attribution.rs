//! Whose is a kernel thread's CPU: the run's, when a thread of one device names one of the
//! run's devices (`jbd2/loop7-8`, `xfsaild/loop7`, `loop7`); someone else's, when a thread
//! names another device (`kworker/u8:1-loop3`, `jbd2/loop3-8`); shared, when it names none
//! (generic workqueues, `ksoftirqd`, `kswapd`), a device the run shares with others (a loop
//! device's backing disk), or is a pooled workqueue worker that last served the run's device
//! (`kworker/u8:1-loop7`, `kworker/u8:2-flush-7:7`). Shared kernel time, with interrupt time, is
//! attributed to the run by its share of the machine's process CPU (see `cpu_split`).

use crate::devices::{DeviceInfo, ROLE_BACKING};
use crate::kwork::{KernelWindow, Label};
use bakeoff_core::record::DeviceStats;

/// The devices a run's kernel threads may name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunDevices {
    /// Names and `MAJ:MIN` numbers of the run's own devices (its stack and log stack).
    own: Vec<String>,
    /// Names and numbers of devices the run shares with others (a loop device's backing
    /// disk).
    shared: Vec<String>,
    /// The controllers whose interrupt lines serve the run's own disks (`virtio1`, `nvme0`).
    own_irq: Vec<String>,
    /// The controllers of the disks it shares.
    shared_irq: Vec<String>,
}

/// Who a kernel thread's CPU belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// It names one of the run's devices.
    Run,
    /// It names another device.
    Elsewhere,
    /// It names no device, or a shared one.
    Shared,
}

impl RunDevices {
    /// The run's devices as the probe knows them, with their device numbers from
    /// `/sys/class/block/NAME/dev`.
    pub fn of(devices: &[DeviceInfo]) -> RunDevices {
        let mut out = RunDevices::default();
        for d in devices {
            let (list, irq) = if d.role == ROLE_BACKING {
                (&mut out.shared, &mut out.shared_irq)
            } else {
                (&mut out.own, &mut out.own_irq)
            };
            list.push(d.name.clone());
            let dev = std::fs::read_to_string(format!("/sys/class/block/{}/dev", d.name));
            if let Ok(number) = dev {
                list.push(number.trim().to_string());
            }
            irq.extend(controller_of(&d.name));
        }
        out
    }

    /// From names and numbers (tests).
    pub fn from_parts(own: &[&str], shared: &[&str]) -> RunDevices {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        RunDevices {
            own: owned(own),
            shared: owned(shared),
            ..RunDevices::default()
        }
    }

    /// With the controllers whose interrupts serve the run's disks and the shared ones (tests).
    pub fn with_controllers(mut self, own: &[&str], shared: &[&str]) -> RunDevices {
        self.own_irq = own.iter().map(|s| s.to_string()).collect();
        self.shared_irq = shared.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Whose is a stretch of traced kernel work (see [`crate::kwork`]): what ran decides
    /// when it names a device, else what queued it; `None` when neither names a device or a
    /// process (a generic work item queued by an interrupt, a timer's soft interrupt).
    /// `run_process` says whether a thread-group id is bakeoff's or a daemon's.
    pub(crate) fn owner_of_work(
        &self,
        what: &Label,
        origin: &Label,
        run_process: &dyn Fn(u32) -> bool,
    ) -> Option<Owner> {
        self.owner_of_label(what, run_process)
            .or_else(|| self.owner_of_label(origin, run_process))
    }

    fn owner_of_label(&self, label: &Label, run_process: &dyn Fn(u32) -> bool) -> Option<Owner> {
        // The run's when its own list matches, shared when the shared list does.
        let in_lists = |own: &[String], shared: &[String], matches: &dyn Fn(&String) -> bool| {
            if own.iter().any(matches) {
                Some(Owner::Run)
            } else if shared.iter().any(matches) {
                Some(Owner::Shared)
            } else {
                None
            }
        };
        let number =
            |n: &str| in_lists(&self.own, &self.shared, &|d| d == n).unwrap_or(Owner::Elsewhere);
        let named = |name: &str| {
            in_lists(&self.own, &self.shared, &|d| names_device(name, d))
                .or_else(|| names_some_device(name).then_some(Owner::Elsewhere))
        };
        match label {
            Label::Device { major, minor } => Some(number(&format!("{major}:{minor}"))),
            Label::Writeback(bdi) => bdi.contains(':').then(|| number(bdi)),
            Label::Workqueue(name) => named(name),
            Label::Process { tgid, comm } => Some(if run_process(*tgid) {
                Owner::Run
            } else {
                named(comm).unwrap_or(Owner::Elsewhere)
            }),
            Label::Irq { name, .. } => {
                in_lists(&self.own_irq, &self.shared_irq, &|c| line_of(name, c))
            }
            Label::Softirq(_) | Label::Unknown => None,
        }
    }

    /// Whose is the CPU of the kernel thread `comm`. A pooled workqueue worker (`kworker/...`)
    /// shows only the workqueue of its *last* work item: a run that queues thousands of items
    /// a second leaves most workers showing its device whatever they spent the window on, so
    /// a worker showing the run's device is shared, not the run's; one showing another
    /// device last worked for someone else.
    pub(crate) fn owner(&self, comm: &str) -> Owner {
        let names = |list: &[String]| list.iter().any(|d| names_device(comm, d));
        let pooled = comm.starts_with("kworker");
        if names(&self.own) {
            if pooled {
                Owner::Shared
            } else {
                Owner::Run
            }
        } else if names(&self.shared) {
            Owner::Shared
        } else if names_some_device(comm) {
            Owner::Elsewhere
        } else {
            Owner::Shared
        }
    }
}

/// The traced kernel work of a window that was the run's, in µs: work and interrupts for its
/// own devices and processes, and for a disk it shares with others (a loop device's backing
/// disk) its `backing_share` of them (its loop devices' share of the disk's bytes). Work that
/// names no device or process is not the run's: it stays in `other`.
pub(crate) fn traced_run_us(
    window: &KernelWindow,
    devices: &RunDevices,
    run_process: &dyn Fn(u32) -> bool,
    backing_share: f64,
) -> f64 {
    let ns: f64 = (window.times.iter())
        .map(|t| {
            let share = match devices.owner_of_work(&t.what, &t.origin, run_process) {
                Some(Owner::Run) => 1.0,
                Some(Owner::Shared) => backing_share.clamp(0.0, 1.0),
                Some(Owner::Elsewhere) | None => 0.0,
            };
            t.ns as f64 * share
        })
        .sum();
    ns / 1e3
}

/// The run's loop devices' share of their backing disks' bytes between two readings (0 to 1):
/// what a backing disk's traced work is charged to the run by. 0 when no disk is shared.
pub fn backing_share(devices: &[DeviceStats]) -> f64 {
    let bytes = |d: &DeviceStats| (d.read_bytes + d.write_bytes) as f64;
    let backing: f64 = devices
        .iter()
        .filter(|d| d.role == ROLE_BACKING)
        .map(bytes)
        .sum();
    let through_loops: f64 = (devices.iter())
        .filter(|d| d.role != ROLE_BACKING && d.loop_backing.is_some())
        .map(bytes)
        .sum();
    if backing > 0.0 {
        (through_loops / backing).min(1.0)
    } else {
        0.0
    }
}

/// The controller a disk hangs off, whose name its interrupt lines carry: `virtio1` for `vda`
/// (`/sys/class/block/vda/device` links to `.../virtio1`), `nvme0` for `nvme0n1`. A partition's
/// is its disk's.
fn controller_of(name: &str) -> Option<String> {
    let sys = std::path::Path::new("/sys/class/block").join(name);
    let disk = if sys.join("partition").exists() {
        std::fs::canonicalize(&sys).ok()?.parent()?.to_path_buf()
    } else {
        sys
    };
    let device = std::fs::canonicalize(disk.join("device")).ok()?;
    // A namespace's `device` is its controller (`.../nvme/nvme0`).
    let base = device.file_name()?.to_string_lossy().into_owned();
    (base.starts_with("virtio") || base.starts_with("nvme")).then_some(base)
}

/// An interrupt line's handler name is the controller's (`virtio1-req.0`, `nvme0q3`): the
/// controller's name, then not another digit.
fn line_of(irq_name: &str, controller: &str) -> bool {
    (irq_name.strip_prefix(controller))
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// `comm` names `device` (`loop7`, or `7:7` after `flush-`): at the start or after `-`, `+` or `/`,
/// and not followed by another digit (`loop7` is not `loop70`).
fn names_device(comm: &str, device: &str) -> bool {
    let number = device.contains(':');
    let mut from = 0;
    while let Some(i) = comm[from..].find(device).map(|i| i + from) {
        let before = &comm[..i];
        let after = comm[i + device.len()..].chars().next();
        let starts = if number {
            before.ends_with("flush-")
        } else {
            before.is_empty() || before.ends_with(['-', '+', '/'])
        };
        if starts && !after.is_some_and(|c| c.is_ascii_digit()) {
            return true;
        }
        from = i + 1;
    }
    false
}

/// `comm` names a block device, whichever: a loop device, a writeback worker's device number,
/// a journal or log thread of a file system on a device, a disk.
fn names_some_device(comm: &str) -> bool {
    let digit_after = |prefix: &str| {
        comm.match_indices(prefix).any(|(i, _)| {
            (comm[i + prefix.len()..].chars().next()).is_some_and(|c| c.is_ascii_digit())
        })
    };
    let per_device_thread = ["jbd2/", "xfsaild/", "ext4lazyinit"]
        .iter()
        .any(|p| comm.starts_with(p));
    let disk = ["/sd", "/vd", "/xvd", "/nvme", "/dm-", "/md", "-dm-"]
        .iter()
        .any(|p| comm.contains(p));
    per_device_thread || disk || digit_after("loop") || digit_after("flush-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_naming_the_runs_devices_are_the_runs_and_others_are_not() {
        let run = RunDevices::from_parts(&["loop7", "7:7", "loop12", "7:12"], &["vda", "254:0"]);
        for mine in ["jbd2/loop7-8", "xfsaild/loop12", "loop7"] {
            assert_eq!(run.owner(mine), Owner::Run, "{mine}");
        }
        for theirs in [
            "kworker/u8:1-loop70",
            "kworker/u8:1-loop1",
            "jbd2/loop8-8",
            "xfsaild/loop3",
            "kworker/u8:2-flush-7:71",
            "jbd2/sda1-8",
        ] {
            assert_eq!(run.owner(theirs), Owner::Elsewhere, "{theirs}");
        }
        for shared in [
            "kworker/u8:1-loop7",
            "kworker/u8:1+loop12",
            "kworker/u9:0-xfs-cil/loop7",
            "kworker/u8:2-flush-7:7",
            "kworker/u8:0-flush-254:0",
            "kworker/1:2-events",
            "kworker/7:7-mm_percpu_wq",
            "ksoftirqd/0",
            "kswapd0",
            "kworker/u8:3-ext4-rsv-conversion",
            "btrfs-transacti",
        ] {
            assert_eq!(run.owner(shared), Owner::Shared, "{shared}");
        }
    }

    #[test]
    fn traced_work_is_the_runs_by_what_it_names_or_what_queued_it() {
        use crate::kwork::{KernelTime, KernelWindow};
        let run = RunDevices::from_parts(&["loop7", "7:7"], &["vda", "254:0"])
            .with_controllers(&[], &["virtio1"]);
        let wq = |n: &str| Label::Workqueue(n.into());
        let dev = |major, minor| Label::Device { major, minor };
        let pid = |tgid, comm: &str| Label::Process {
            tgid,
            comm: comm.into(),
        };
        let irq = |n: &str| Label::Irq {
            line: 36,
            name: n.into(),
        };
        let is_run = |tgid: u32| tgid == 100;
        let owner = |what: &Label, origin: &Label| run.owner_of_work(what, origin, &is_run);
        // What ran names a device.
        assert_eq!(owner(&wq("loop7"), &pid(100, "job-0")), Some(Owner::Run));
        assert_eq!(
            owner(&wq("xfs-cil/loop7"), &Label::Unknown),
            Some(Owner::Run)
        );
        assert_eq!(
            owner(&wq("loop1"), &pid(100, "bakeoff")),
            Some(Owner::Elsewhere)
        );
        assert_eq!(owner(&dev(7, 7), &Label::Unknown), Some(Owner::Run));
        assert_eq!(owner(&dev(7, 70), &Label::Unknown), Some(Owner::Elsewhere));
        assert_eq!(owner(&dev(254, 0), &Label::Unknown), Some(Owner::Shared));
        assert_eq!(
            owner(&Label::Writeback("7:7".into()), &Label::Unknown),
            Some(Owner::Run)
        );
        assert_eq!(
            owner(&irq("virtio1-req.0"), &Label::Unknown),
            Some(Owner::Shared)
        );
        assert_eq!(owner(&irq("virtio10-req.0"), &Label::Unknown), None);
        // A generic workqueue is what queued it: a completion, a process, a journal thread.
        let conversion = wq("ext4-rsv-conversion");
        assert_eq!(owner(&conversion, &dev(7, 1)), Some(Owner::Elsewhere));
        assert_eq!(owner(&conversion, &dev(7, 7)), Some(Owner::Run));
        assert_eq!(owner(&wq("kblockd"), &pid(100, "job-0")), Some(Owner::Run));
        assert_eq!(
            owner(&wq("kblockd"), &pid(200, "dd")),
            Some(Owner::Elsewhere)
        );
        assert_eq!(
            owner(&wq("events"), &pid(300, "jbd2/loop7-8")),
            Some(Owner::Run)
        );
        // Neither names anything: nobody's in particular, so not the run's.
        assert_eq!(owner(&wq("events"), &Label::Softirq(1)), None);
        assert_eq!(owner(&Label::Softirq(9), &Label::Unknown), None);

        let t = |what: Label, origin: Label, ns| KernelTime { what, origin, ns };
        let window = KernelWindow {
            times: vec![
                t(wq("loop7"), pid(100, "job-0"), 4_000_000),
                t(dev(7, 7), Label::Unknown, 2_000_000),
                t(wq("loop1"), pid(200, "dd"), 9_000_000),
                t(dev(254, 0), Label::Unknown, 1_000_000),
                t(Label::Softirq(9), Label::Unknown, 500_000),
            ],
            lost: 0,
        };
        // 4 ms + 2 ms, and a quarter of the shared disk's 1 ms.
        assert_eq!(traced_run_us(&window, &run, &is_run, 0.25), 6_250.0);
    }

    #[test]
    fn a_backing_disks_share_is_its_loop_devices_bytes() {
        let d = |role: &str, loop_backing: Option<&str>, bytes: u64| DeviceStats {
            name: "x".into(),
            role: role.into(),
            loop_backing: loop_backing.map(String::from),
            read_bytes: bytes,
            ..DeviceStats::default()
        };
        let devices = [
            d("stack", Some("/var/tmp/i.img"), 300),
            d(ROLE_BACKING, None, 1200),
        ];
        assert_eq!(backing_share(&devices), 0.25);
        assert_eq!(backing_share(&devices[..1]), 0.0);
        assert_eq!(
            backing_share(&[d("stack", Some("f"), 900), d(ROLE_BACKING, None, 300)]),
            1.0
        );
    }

    #[test]
    fn an_interrupt_line_is_its_controllers_by_name() {
        assert!(line_of("virtio1-req.0", "virtio1"));
        assert!(line_of("nvme0q3", "nvme0"));
        assert!(!line_of("virtio10-req.0", "virtio1"));
        assert!(!line_of("nvme10q1", "nvme1"));
    }
}
