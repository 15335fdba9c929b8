//! The terminal summary's system figures: headline latency, CPU and who used it, the devices,
//! ratios and memory.

use crate::fmt::{bytes, count, group, micros, pct, rate, ratio};
use bakeoff_core::record::{DeviceStats, RunRecord};
use bakeoff_core::units::format_bytes;
use std::fmt::Write;

fn device_line(d: &DeviceStats) -> String {
    let mut tags = vec![d.role.clone()];
    if let Some(m) = &d.model {
        tags.push(m.clone());
    }
    if let Some(dio) = d.loop_dio {
        tags.push(format!("loop dio {}", if dio { "on" } else { "OFF" }));
    }
    if let Some(b) = &d.loop_backing {
        tags.push(format!("backing {b}"));
    }
    format!(
        "{} ({}): read {}/s {:.1} MB/s avg {} wait {}; write {}/s {:.1} MB/s avg {} wait {}{}; util {:.0}%{}",
        d.name,
        tags.join(", "),
        rate(d.read_iops),
        d.read_bytes as f64 / 1e6 / secs_of(d),
        bytes(d.avg_read_size_bytes),
        micros(d.avg_read_wait_us),
        rate(d.write_iops),
        d.write_bytes as f64 / 1e6 / secs_of(d),
        bytes(d.avg_write_size_bytes),
        micros(d.avg_write_wait_us),
        d.flush_ops.map_or_else(String::new, |f| format!(", {} flushes", group(f))),
        d.util_pct,
        d.avg_queue_depth.map_or_else(String::new, |q| format!(", queue depth {q:.1}")),
    )
}

/// Seconds a device's rates were computed over (ops / iops), or 1 if it did nothing.
fn secs_of(d: &DeviceStats) -> f64 {
    if d.read_iops > 0.0 {
        d.read_ops as f64 / d.read_iops
    } else if d.write_iops > 0.0 {
        d.write_ops as f64 / d.write_iops
    } else {
        1.0
    }
}

fn cpu_lines(r: &RunRecord) -> String {
    let Some(c) = &r.cpu else {
        return String::new();
    };
    let mut s = format!(
        "cpu      machine busy {:.1}% of {} (user {:.1}%, sys {:.1}%, iowait {:.1}%, irq {:.1}%, softirq {:.1}%, steal {:.1}%)\n",
        c.busy_pct, count(u64::from(c.cpus), "CPU"), c.user_pct, c.system_pct, c.iowait_pct, c.irq_pct, c.softirq_pct, c.steal_pct
    );
    if let Some(x) = &c.split {
        // A database run's server is counted with the daemons the run started; a run of
        // phases's commands are bakeoff's.
        let tool = if r.phases.is_empty() {
            "bakeoff"
        } else {
            "bakeoff and its commands"
        };
        let daemons = if r.database.is_some() {
            "stack daemons and the database server"
        } else {
            "stack daemons"
        };
        let parts = match r
            .summary
            .client_cpu_share_pct
            .filter(|_| r.database.is_some())
        {
            // A database run names the parts as its per-transaction split does: the client
            // (bakeoff's terminals or pgbench) and the database (its server, or SQLite's work
            // on the terminals' threads), on the same base as the rest.
            Some(share) => {
                let busy = x.tool_pct + x.daemons_pct + x.kernel_pct + x.other_pct;
                let client = share / 100.0 * busy;
                let database = (x.tool_pct + x.daemons_pct - client).max(0.0);
                format!("client {client:.1}%, database and stack daemons {database:.1}%")
            }
            None => format!("{tool} {:.1}%, {daemons} {:.1}%", x.tool_pct, x.daemons_pct),
        };
        let _ = writeln!(
            s,
            "         by whom: {parts}, kernel for the run {:.1}%, other processes {:.1}%, steal {:.1}%",
            x.kernel_pct, x.other_pct, c.steal_pct
        );
    }
    // bakeoff's share, where the line above does not already give it on the base of all
    // CPU time (two percentages of bakeoff on two bases side by side read as a contradiction).
    let share = match c.split {
        Some(_) => String::new(),
        None => r.tool.share_of_busy_pct.map_or_else(String::new, |p| {
            format!("; bakeoff itself {p:.1}% of busy CPU")
        }),
    };
    if r.summary.cpu_us_per_op.is_some() || (r.database.is_none() && r.phases.is_empty()) {
        let _ = writeln!(
            s,
            "         CPU per operation {} (bakeoff + stack daemons + kernel for the run){share}",
            crate::fmt::micros(r.summary.cpu_us_per_op)
        );
    }
    s
}

/// The headline latencies: every operation of a kind, all roles merged.
fn latency_line(r: &RunRecord) -> String {
    let sm = &r.summary;
    let mut parts = Vec::new();
    if sm.read_lat_p50_us.is_some() {
        let (p50, p99) = (micros(sm.read_lat_p50_us), micros(sm.read_lat_p99_us));
        parts.push(format!("read p50 {p50} p99 {p99}"));
    }
    if sm.write_lat_p99_us.is_some() {
        parts.push(format!("write p99 {}", micros(sm.write_lat_p99_us)));
    }
    if sm.commit_lat_p50_us.is_some() {
        let (p50, p99) = (micros(sm.commit_lat_p50_us), micros(sm.commit_lat_p99_us));
        let rate = sm
            .commits_per_s
            .map_or_else(String::new, |c| format!(" ({}/s)", rate(c)));
        parts.push(format!("commit{rate} p50 {p50} p99 {p99}"));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("latency  all roles: {}\n", parts.join("; "))
}

/// The lines after the roles table: headline latency, cpu, devices, ratios, memory.
pub(crate) fn system(r: &RunRecord) -> String {
    let mut s = latency_line(r);
    s += &super::files::lines(r);
    s += &cpu_lines(r);
    let sm = &r.summary;
    if r.window_too_short() {
        let _ = writeln!(
            s,
            "window   shorter than {} s: no CPU, device or steadiness figures, no verdict",
            bakeoff_core::steady::MIN_WINDOW.as_secs()
        );
    } else if r.devices.is_empty() {
        let _ = writeln!(
            s,
            "devices  none under the target (memory-backed file system): no device figures"
        );
    }
    for (i, d) in r.devices.iter().enumerate() {
        let label = if i == 0 { "devices" } else { "" };
        let _ = writeln!(s, "{label:<8} {}", device_line(d));
    }
    let app_io = sm.read_iops.is_some() || sm.write_iops.is_some();
    if !r.devices.is_empty() && app_io {
        let _ = writeln!(
            s,
            "ratios   device bytes per app read {} (read amplification {}), per app write {} (write amplification {}); reads not from the devices {}",
            bytes(sm.device_read_bytes_per_op),
            ratio(sm.read_amplification),
            bytes(sm.device_write_bytes_per_op),
            match (sm.write_amplification, sm.redundancy.filter(|r| *r > 1.0)) {
                (Some(w), Some(r)) => format!("{w:.2}, {:.2} per copy of {r:.0}", w / r),
                (w, _) => ratio(w),
            },
            pct(sm.reads_not_from_device_pct),
        );
        if let Some(l) = sm.log_write_amplification {
            let _ = writeln!(
                s,
                "         log stack: device bytes per app log byte {l:.2}, {} device writes/s",
                sm.log_device_write_iops.map_or("-".into(), rate)
            );
        }
    }
    if let Some(m) = &r.memory {
        let mut arc = m
            .arc_size_bytes
            .map_or_else(String::new, |a| format!(", ZFS ARC {}", format_bytes(a)));
        if let Some(h) = sm.arc_hit_pct {
            arc += &format!(" (hits {h:.1}%)");
        }
        if let Some(h) = sm.page_cache_hit_pct {
            arc += &format!(", page-cache hits {h:.1}%");
        } else if let Some(why) = &m.page_cache_unavailable {
            arc += &format!(", page-cache hits not counted: {why}");
        }
        let _ = writeln!(
            s,
            "memory   page cache {} -> {}, dirty max {}, writeback max {}, available min {}{arc}",
            format_bytes(m.cached_start_bytes),
            format_bytes(m.cached_end_bytes),
            format_bytes(m.dirty_max_bytes),
            format_bytes(m.writeback_max_bytes),
            format_bytes(m.available_min_bytes),
        );
    }
    s
}
