//! Whose is a kernel thread's CPU: the run's, when a thread of one device names one of the
//! run's devices (`jbd2/loop7-8`, `xfsaild/loop7`, `loop7`); someone else's, when a thread
//! names another device (`kworker/u8:1-loop3`, `jbd2/loop3-8`); shared, when it names none
//! (generic workqueues, `ksoftirqd`, `kswapd`), a device the run shares with others (a loop
//! device's backing disk), or is a pooled workqueue worker that last served the run's device
//! (`kworker/u8:1-loop7`, `kworker/u8:2-flush-7:7`). Shared kernel time, with interrupt time, is
//! attributed to the run by its share of the machine's process CPU (see `cpu_split`).

use crate::devices::{DeviceInfo, ROLE_BACKING};

/// The devices a run's kernel threads may name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunDevices {
    /// Names and `MAJ:MIN` numbers of the run's own devices (its stack and log stack).
    own: Vec<String>,
    /// Names and numbers of devices the run shares with others (a loop device's backing
    /// disk).
    shared: Vec<String>,
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
            let list = if d.role == ROLE_BACKING {
                &mut out.shared
            } else {
                &mut out.own
            };
            list.push(d.name.clone());
            let dev = std::fs::read_to_string(format!("/sys/class/block/{}/dev", d.name));
            if let Ok(number) = dev {
                list.push(number.trim().to_string());
            }
        }
        out
    }

    /// From names and numbers (tests).
    pub fn from_parts(own: &[&str], shared: &[&str]) -> RunDevices {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        RunDevices {
            own: owned(own),
            shared: owned(shared),
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
}
