//! `/proc/<pid>/stat`: one process's identity and CPU time (proc(5)).

use super::number;
use crate::error::ProbeError;

const FILE: &str = "/proc/<pid>/stat";

/// `PF_KTHREAD` in the `flags` field: the task is a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// One process as `/proc/<pid>/stat` describes it; times in clock ticks
/// (see [`crate::ticks_per_second`]), summed over all its threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id.
    pub pid: u32,
    /// Command name (up to 15 bytes), without the parentheses.
    pub comm: String,
    /// Parent process id.
    pub ppid: u32,
    /// A kernel thread (`PF_KTHREAD`).
    pub kernel_thread: bool,
    /// User-mode time.
    pub utime: u64,
    /// Kernel-mode time.
    pub stime: u64,
    /// User-mode time of its children that ended and were waited for.
    pub cutime: u64,
    /// Kernel-mode time of its children that ended and were waited for.
    pub cstime: u64,
    /// Start time after boot, in ticks: tells a reused pid from the process that had it.
    pub starttime: u64,
}

impl ProcStat {
    /// User plus kernel time.
    pub fn ticks(&self) -> u64 {
        self.utime.saturating_add(self.stime)
    }

    /// User plus kernel time of the children it waited for (a server's ended connections).
    pub fn children_ticks(&self) -> u64 {
        self.cutime.saturating_add(self.cstime)
    }
}

/// Parses one `/proc/<pid>/stat` line. The command name may hold spaces and parentheses, so the
/// fields after it are found from the last `)`.
pub fn parse_pid_stat(text: &str) -> Result<ProcStat, ProbeError> {
    let open = text
        .find('(')
        .ok_or_else(|| ProbeError::parse(FILE, "no '(' before the command name"))?;
    let close = text
        .rfind(')')
        .filter(|c| *c > open)
        .ok_or_else(|| ProbeError::parse(FILE, "no ')' after the command name"))?;
    let pid = number(FILE, "pid", text[..open].trim())?;
    let comm = text[open + 1..close].to_string();
    // Fields from 3 (state) on; proc(5) numbers them from 1.
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize, name: &str| -> Result<u64, ProbeError> {
        let token = rest
            .get(n - 3)
            .ok_or_else(|| ProbeError::parse(FILE, format!("{name}: missing (field {n})")))?;
        number(FILE, name, token)
    };
    Ok(ProcStat {
        pid: u32::try_from(pid).map_err(|_| ProbeError::parse(FILE, "pid out of range"))?,
        comm,
        ppid: u32::try_from(field(4, "ppid")?).unwrap_or(0),
        kernel_thread: field(9, "flags")? & PF_KTHREAD != 0,
        utime: field(14, "utime")?,
        stime: field(15, "stime")?,
        cutime: field(16, "cutime")?,
        cstime: field(17, "cstime")?,
        starttime: field(22, "starttime")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_user_and_kernel_processes() {
        let bash = "4242 (my (odd) cmd) S 1 4242 4242 34816 4242 4194304 1190 0 0 0 \
                    12 34 0 0 20 0 1 0 987654 8720384 1283 18446744073709551615 \
                    1 1 0 0 0 0 65536 3686404 1266761467 0 0 0 17 1 0 0 0 0 0";
        let p = parse_pid_stat(bash).unwrap();
        assert_eq!((p.pid, p.comm.as_str(), p.ppid), (4242, "my (odd) cmd", 1));
        assert_eq!(
            (p.utime, p.stime, p.ticks(), p.starttime),
            (12, 34, 46, 987654)
        );
        assert!(!p.kernel_thread);
        let kworker = "57 (kworker/u4:2-loop7) I 2 0 0 0 -1 69238880 0 0 0 0 \
                       0 311 0 0 20 0 1 0 120 0 0 18446744073709551615 0 0 0 0 0 0 0 \
                       2147483647 0 0 0 0 17 0 0 0 0 0 0";
        let k = parse_pid_stat(kworker).unwrap();
        assert!(k.kernel_thread, "flags 69238880 has PF_KTHREAD");
        assert_eq!((k.ppid, k.stime), (2, 311));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in ["", "12", "12 (x", "x (y) S 1", "12 (y) S 1 2 3", ")( 1 2"] {
            assert!(parse_pid_stat(bad).is_err(), "{bad:?}");
        }
    }
}
