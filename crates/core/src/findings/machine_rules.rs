//! Rules over the machine and the run's shape: CPU, device saturation, steadiness, memory.

use super::context::{bytes, Ctx};
use super::*;

/// Other processes or the hypervisor took a noticeable share of the machine.
pub(super) fn cpu_contention(c: &Ctx) -> Option<Finding> {
    let cpu = c.r.cpu.as_ref()?;
    let other = cpu.split.as_ref()?.other_pct;
    if other + cpu.steal_pct <= CPU_CONTENTION_PCT {
        return None;
    }
    let ev = format!(
        "other processes used {other:.1}% and the hypervisor stole {:.1}% of all CPU time",
        cpu.steal_pct
    );
    let title = "the machine was not idle: other processes or steal competed with the run";
    let fix = "stop other work on the machine (or pin it elsewhere) and repeat; cpu_us_per_op \
               excludes them, but latency and throughput do not";
    found("cpu_contention", Warning, title, ev, fix)
}

pub(super) fn cpu_saturated(c: &Ctx) -> Option<Finding> {
    let busy = c.s.cpu_busy_pct.or(c.r.cpu.as_ref().map(|x| x.busy_pct))?;
    if busy < CPU_BUSY_PCT {
        return None;
    }
    let mut ev = format!("CPU {busy:.1}% busy");
    if let Some(cpu) = &c.r.cpu {
        ev += &format!(" of {} CPUs ({:.1}% system)", cpu.cpus, cpu.system_pct);
    }
    if let Some(us) = c.s.cpu_us_per_op {
        ev += &format!("; {} CPU per operation", format_nanos(us * 1e3));
    }
    let mut fix =
        "compare cpu_us_per_op rather than IOPS, or give the run more CPUs / fewer threads"
            .to_string();
    let fuse =
        c.r.stack
            .as_ref()
            .is_some_and(|st| st.backend.contains("zfs-fuse"));
    if fuse {
        fix += "; zfs-fuse is a user-space file system that spends CPU on every I/O";
    }
    let title = "the CPU was saturated: the result measures CPU, not storage";
    found("cpu_saturated", Warning, title, ev, &fix)
}

pub(super) fn device_saturated(c: &Ctx) -> Option<Finding> {
    let busy: Vec<String> = (c.r.devices.iter())
        .filter(|d| d.role == "stack" && d.util_pct >= DEVICE_UTIL_PCT)
        .map(|d| {
            format!(
                "{} busy {:.1}% ({} r/s, {} w/s)",
                d.name,
                d.util_pct,
                format_rate(d.read_iops),
                format_rate(d.write_iops)
            )
        })
        .collect();
    if busy.is_empty() {
        return None;
    }
    let fix = "latency includes queueing: lower threads/iodepth or set rate_iops to measure \
               below saturation; for loop devices the backing device is the limit";
    let title = "a stack device was busy all the time: it is the bottleneck";
    found("device_saturated", Info, title, busy.join("; "), fix)
}

/// `not_steady` when the automatic warm-up reached its cap before the run was steady: the
/// window opened on a run still changing.
fn warmup_capped(c: &Ctx) -> Option<Finding> {
    let s = c.r.steady.as_ref().filter(|s| s.capped)?;
    let unsteady: Vec<String> = (s.checks.iter().filter(|k| !k.steady))
        .map(|k| {
            format!(
                "{} mean {:.3}, spread {:.1}%, slope {:+.1}%/s",
                k.name, k.mean, k.spread_pct, k.slope_pct
            )
        })
        .collect();
    let title = format!(
        "the warm-up reached its cap ({:.0} s, ramp_max) before the run was steady",
        s.warmup_s
    );
    let ev = if unsteady.is_empty() {
        "no full window of samples was seen".to_string()
    } else {
        format!("at the cap: {}", unsteady.join("; "))
    };
    let fix = "a longer ramp_max, or a fixed ramp_time after looking at the --timeseries CSV; \
               a run that never settles (a growing dataset, a throttled device) is worth a look";
    found("not_steady", Warning, title, ev, fix)
}

/// `not_steady` over the measured samples, or `too_short` when there are too few to judge.
pub(super) fn steadiness(c: &Ctx) -> Option<Finding> {
    if let Some(capped) = warmup_capped(c) {
        return Some(capped);
    }
    let mut pts: Vec<(f64, f64)> = (c.r.samples.iter())
        .filter(|s| s.measured && s.t_s.is_finite())
        .map(|s| (s.t_s, s.read_iops + s.write_iops))
        .collect();
    // The last sample covers a partial second; its rate is noisy.
    if let [.., (a, _), (b, _)] = pts[..] {
        if b - a < 0.75 && pts.len() > MIN_STEADY_SAMPLES {
            pts.pop();
        }
    }
    let secs = c.r.measured_ns as f64 / 1e9;
    if pts.len() < MIN_STEADY_SAMPLES {
        if c.r.samples.is_empty() && secs >= MIN_STEADY_SAMPLES as f64 {
            return None;
        }
        let secs = format_secs(secs);
        let title = format!("the run measured {secs}; steady state cannot be judged");
        let ev = format!("{} measured samples (need {MIN_STEADY_SAMPLES})", pts.len());
        let fix = format!("use runtime ≥ {SUGGESTED_RUNTIME_S}s");
        return found("too_short", Info, title, ev, fix);
    }
    let n = pts.len() as f64;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let span = pts[pts.len() - 1].0 - pts[0].0;
    let change = 100.0 * sxy / sxx * span / my;
    if !(my > 0.0 && sxx > 0.0 && change.abs() >= TREND_PCT) {
        return None;
    }
    let k = pts.len() / 3;
    let mean = |p: &[(f64, f64)]| p.iter().map(|x| x.1).sum::<f64>() / p.len() as f64;
    let ev = format!(
        "throughput changed {change:+.0}% over {} (linear fit, mean {} ops/s); \
         first third {} ops/s, last third {} ops/s",
        format_secs(span),
        format_rate(my),
        format_rate(mean(&pts[..k])),
        format_rate(mean(&pts[pts.len() - k..]))
    );
    let fix = "a longer ramp_time and runtime, so caches, write-back and background work settle \
               before measuring; see the --timeseries CSV";
    let title = "throughput was still trending over the measured window";
    found("not_steady", Warning, title, ev, fix)
}

pub(super) fn dataset_fits_in_memory(c: &Ctx) -> Option<Finding> {
    let data = c.r.plan.dataset_bytes();
    let (limit, mem) = (c.r.stack.as_ref(), c.r.environment.memory_bytes);
    let mem = limit
        .and_then(|s| s.mem_limit_bytes)
        .map_or(mem, |l| l.min(mem));
    let buffered = c.buffered_roles();
    let arc = c.kind == "zfs" && c.prop("primarycache") == Some("all");
    let tmpfs = c.kind == "tmpfs"; // memory by design
    if data == 0 || data >= mem || (buffered.is_empty() && !arc) || tmpfs {
        return None;
    }
    let who = match buffered.is_empty() {
        true => "the ZFS ARC (primarycache=all)".to_string(),
        false => format!("buffered roles: {}", buffered.join(", ")),
    };
    let ev = format!(
        "dataset {} < memory {}; {who}",
        bytes(data as f64),
        bytes(mem as f64)
    );
    let fix = "direct=true (and primarycache=metadata on ZFS), a data size larger than memory, \
               or --mem-limit below the dataset size";
    let title = "the dataset fits in memory: caches may serve the I/O";
    found("dataset_fits_in_memory", Warning, title, ev, fix)
}

pub(super) fn compressible_data(c: &Ctx) -> Option<Finding> {
    let pct = c.r.plan.compress_pct;
    let on = match c.kind.as_str() {
        "zfs" => c
            .prop("compression")
            .filter(|v| *v != "off")
            .map(|v| format!("compression={v}")),
        "btrfs" => (c
            .mount_options()
            .split(',')
            .find(|o| o.starts_with("compress")))
        .filter(|o| !o.ends_with("=no"))
        .map(|o| format!("mount option {o}")),
        _ => None,
    };
    let on = on.filter(|_| pct > 0)?;
    let mut ev = format!("compress_pct={pct}; {on}");
    if let Some(wa) = c.s.write_amplification {
        ev += &format!("; write amplification {wa:.2}");
    }
    let fix = "compare with compress_pct=0, or turn compression off, to measure the storage; \
               report compress_pct with the result";
    let title = "the data compresses and the stack compresses: it may store less than written";
    found("compressible_data", Info, title, ev, fix)
}

pub(super) fn warm_run(c: &Ctx) -> Option<Finding> {
    let warm = c.r.cold == Some(false) || c.r.stack.as_ref().is_some_and(|s| s.cold == Some(false));
    // tmpfs and ramfs have no cache to drop: such a run starts warm by necessity.
    if !warm || c.r.target.in_memory_filesystem().is_some() {
        return None;
    }
    let fix = "drop --warm (bakeoff syncs, drops caches and re-imports ZFS pools before a run)";
    let title = "caches were not dropped before the run";
    found("warm_run", Info, title, "cold: false".into(), fix)
}
