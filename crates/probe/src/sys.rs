//! The only `unsafe` in this crate: small wrappers over libc calls that have no std equivalent.

/// Clock ticks per second of `/proc/stat` counters (`sysconf(_SC_CLK_TCK)`); 100 if unknown.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf takes an integer name, touches no memory of ours and is thread-safe.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// Online CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`); 1 if unknown.
pub(crate) fn cpus_online() -> u32 {
    // SAFETY: as above, sysconf only reads an integer name.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).ok().filter(|n| *n > 0).unwrap_or(1)
}

/// The `oom_score_adj` of a workload's processes (bakeoff's client processes, commands run in a
/// command group). When a workload outgrows a memory limit, the kernel's OOM killer picks the
/// process of the cgroup with the largest footprint, and bakeoff, holding the run's
/// bookkeeping, was that process once (16 nfsmix clients under 256 MiB): killed, it could not
/// tear its stack down. bakeoff cannot lower its own score without CAP_SYS_RESOURCE (this
/// project's machine lacks it), but any process may raise its own: the workload's processes do,
/// by half the limit's pages, so that one of them is killed and bakeoff lives to fail the run
/// and say why. A database server keeps the default, as bakeoff does: the larger of the two is
/// killed, and that is the server in practice.
pub const WORKLOAD_OOM_SCORE_ADJ: i32 = 500;

/// Gives this process [`WORKLOAD_OOM_SCORE_ADJ`] (best effort: raising it needs no privilege,
/// and where it fails the limit still holds).
pub fn offer_self_to_oom_killer() {
    let _ = std::fs::write(
        "/proc/self/oom_score_adj",
        WORKLOAD_OOM_SCORE_ADJ.to_string(),
    );
}

/// This process's own resource use (`getrusage(RUSAGE_SELF)`, children not included):
/// `(user_us, system_us, max_rss_bytes)`. Zeros if the call fails.
pub fn rusage_self() -> (u64, u64, u64) {
    rusage(libc::RUSAGE_SELF)
}

/// The resource use of this process's children that have been waited for, and of the
/// children they waited for (`getrusage(RUSAGE_CHILDREN)`): `(user_us, system_us,
/// max_rss_bytes)` since the process started. A child's share appears when it is reaped, so the
/// difference across one wait is that child's tree. Zeros if the call fails.
pub fn rusage_children() -> (u64, u64, u64) {
    rusage(libc::RUSAGE_CHILDREN)
}

fn rusage(who: libc::c_int) -> (u64, u64, u64) {
    // SAFETY: rusage is plain old data, for which all-zero bytes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage that outlives the call.
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return (0, 0, 0);
    }
    let micros = |t: libc::timeval| {
        u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000 + u64::try_from(t.tv_usec).unwrap_or(0)
    };
    let max_rss_kib = u64::try_from(usage.ru_maxrss).unwrap_or(0);
    (
        micros(usage.ru_utime),
        micros(usage.ru_stime),
        max_rss_kib.saturating_mul(1024),
    )
}

/// `(release, nodename)` from `uname(2)`, e.g. `("6.18.44", "host")`; `None` if the call fails.
pub(crate) fn uname() -> Option<(String, String)> {
    // SAFETY: utsname is plain old data (arrays of c_char), for which all-zero bytes is valid.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable utsname that outlives the call.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    Some((c_chars(&uts.release), c_chars(&uts.nodename)))
}

/// A NUL-terminated (or full) `c_char` array as a `String`, lossily.
fn c_chars(chars: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether this process runs as root (effective uid 0).
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid takes nothing and always succeeds.
    unsafe { libc::geteuid() == 0 }
}

/// Takes an exclusive `flock` on `file`, waiting for it; released when `file` is closed.
pub(crate) fn lock_exclusive(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor, borrowed for the call.
    match unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// `mount(source, target, fstype, 0, NULL)`: a pseudo file system that takes no options.
pub(crate) fn mount_pseudo(source: &str, target: &str, fstype: &str) -> std::io::Result<()> {
    let c = |s: &str| {
        std::ffi::CString::new(s)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (source, target, fstype) = (c(source)?, c(target)?, c(fstype)?);
    // SAFETY: NUL-terminated strings that outlive the call; no data argument.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_values_are_sane() {
        assert!(ticks_per_second() >= 1.0);
        assert!(cpus_online() >= 1);
        let (user_us, _, rss) = rusage_self();
        assert!(rss > 0);
        assert!(user_us < u64::MAX);
        let (release, _host) = uname().unwrap();
        assert!(!release.is_empty());
    }
}
