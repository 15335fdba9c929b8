//! The machine the run happens on.

use crate::parse::{parse_cpu_model, parse_meminfo};
use crate::read::{attribute, read, CLOCKSOURCE, PROC_CPUINFO, PROC_MEMINFO};
use crate::sys;
use bakeoff_core::record::Environment;
use std::time::Instant;

/// Describes the machine and tool: kernel release and host name (`uname`), CPU model
/// (`/proc/cpuinfo`), online CPUs, `MemTotal`, the current clock source, and the measured cost of
/// one `Instant::now()` (about 1e6 calls, so this takes some tens of milliseconds). What cannot be
/// read is `"unknown"` (text) or 0 (numbers).
pub fn environment(tool_version: &str, git_hash: Option<&str>) -> Environment {
    let unknown = || "unknown".to_string();
    let (kernel, hostname) = sys::uname().unwrap_or_else(|| (unknown(), unknown()));
    Environment {
        tool_version: tool_version.to_string(),
        git_hash: git_hash.map(str::to_string),
        kernel,
        hostname,
        cpu_model: read(PROC_CPUINFO)
            .ok()
            .and_then(|text| parse_cpu_model(&text))
            .unwrap_or_else(unknown),
        cpus: sys::cpus_online(),
        memory_bytes: read(PROC_MEMINFO)
            .ok()
            .and_then(|text| parse_meminfo(&text).ok())
            .map_or(0, |m| m.total),
        clocksource: attribute(CLOCKSOURCE).unwrap_or_else(unknown),
        timer_overhead_ns: timer_overhead_ns(),
    }
}

/// Mean cost of one `Instant::now()`, in nanoseconds, over a million calls.
fn timer_overhead_ns() -> f64 {
    const CALLS: u32 = 20_000;
    let start = Instant::now();
    let mut last = start;
    for _ in 0..CALLS {
        last = std::hint::black_box(Instant::now());
    }
    last.duration_since(start).as_nanos() as f64 / f64::from(CALLS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_environment() {
        let env = environment("0.1.0", Some("abc123"));
        assert_eq!(env.tool_version, "0.1.0");
        assert_eq!(env.git_hash.as_deref(), Some("abc123"));
        assert!(!env.kernel.is_empty() && env.kernel != "unknown");
        assert!(env.cpus >= 1);
        assert!(env.memory_bytes > 0);
        assert!(env.timer_overhead_ns > 0.0 && env.timer_overhead_ns < 10_000.0);
    }
}
