//! The terminal summary: a header, one block per role, then system, device and memory figures.

use crate::fmt::{bytes, duration, group, lat, micros, pct, rate, rate as fmt_rate, ratio};
use bakeoff_core::findings::Severity;
use bakeoff_core::record::{DeviceStats, RunRecord, RunStatus};
use bakeoff_core::units::format_bytes;
use std::fmt::Write;

/// Renders the summary of one run.
pub fn render(r: &RunRecord) -> String {
    let mut out = header(r);
    if let Some(ramp) = &r.ramp {
        out.push_str(&crate::ramp::render_table(ramp));
    }
    out.push_str(&roles_table(r));
    out.push('\n');
    if !r.phases.is_empty() {
        out.push_str(&crate::terminal_phases::lines(r));
    }
    if let Some(db) = &r.database {
        out.push_str(&crate::terminal_db::lines(r, db));
    }
    out.push_str(&system(r));
    out.push_str(&findings(r));
    out
}

fn findings(r: &RunRecord) -> String {
    let mut s = String::new();
    for f in &r.findings {
        let level = match f.severity {
            Severity::Warning => "warning",
            Severity::Info => "note",
        };
        let _ = write!(
            s,
            "\n{level}: {} ({})\n  {}: {}\n",
            f.title, f.id, f.evidence, f.suggestion
        );
    }
    s
}

fn header(r: &RunRecord) -> String {
    let status = match r.status {
        RunStatus::Completed => String::new(),
        RunStatus::Interrupted => "  [INTERRUPTED: figures cover the time measured]".into(),
        RunStatus::Failed => "  [FAILED: figures are not results]".into(),
    };
    let fs = match (&r.target.filesystem, &r.target.mount_source) {
        (Some(fs), Some(src)) => format!(" ({fs} on {src})"),
        (Some(fs), None) => format!(" ({fs})"),
        _ => String::new(),
    };
    let place = match &r.stack {
        Some(st) => format!("stack {} at {}", st.spec, r.target.path),
        None => r.target.path.clone(),
    };
    let what = match &r.database {
        Some(db) => crate::terminal_db::header_part(r, db),
        None if !r.phases.is_empty() => crate::terminal_phases::header_part(r),
        None => format!(
            "engine {}, {}",
            r.plan.engine.name(),
            crate::terminal_files::header_part(r)
        ),
    };
    let mut s = format!(
        "{} on {place}{fs}: {} measured, {what}{status}\n\n",
        r.plan.workload,
        duration(r.measured_ns as f64),
    );
    if let Some(e) = &r.error {
        let _ = writeln!(s, "error: {e}\n");
    }
    s
}

/// "1 thread", "7 threads".
pub(crate) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The per-role table (a run of phases: the phase table): its headings and rows (one per role
/// and operation kind, plus service time under a target rate).
fn role_rows(r: &RunRecord) -> (Vec<String>, Vec<Vec<String>>) {
    if !r.phases.is_empty() {
        return crate::terminal_phases::rows(r);
    }
    let open_loop = r
        .roles
        .iter()
        .flat_map(|x| &x.ops)
        .any(|o| o.service.is_some());
    let lat_label = if open_loop { " (from schedule)" } else { "" };
    let header = vec![
        "role".to_string(),
        "thr".into(),
        "op".into(),
        "ops/s".into(),
        "MB/s".into(),
        format!("p50{lat_label}"),
        "p90".into(),
        "p99".into(),
        "p99.9".into(),
        "max".into(),
        "stdev".into(),
    ];
    let mut rows = Vec::new();
    for role in &r.roles {
        // A kind the role did not do (slob's writer reads but its plan may name no writes,
        // or the reverse) is no row: only kinds with operations.
        let done = role.ops.iter().filter(|op| op.ops > 0);
        for (i, op) in done.enumerate() {
            let l = op.lat.as_ref();
            let p = |q: f64| lat(l.and_then(|l| l.at(q)));
            let (name, threads) = if i == 0 {
                (role.name.clone(), role.threads.to_string())
            } else {
                (String::new(), String::new())
            };
            rows.push(vec![
                name,
                threads,
                op.kind.name().into(),
                rate(op.iops),
                format!("{:.1}", op.mb_s),
                p(50.0),
                p(90.0),
                p(99.0),
                p(99.9),
                lat(l.map(|l| l.max_ns)),
                stdev(l),
            ]);
            if let Some(svc) = &op.service {
                let q = |x: f64| lat(svc.at(x));
                rows.push(vec![
                    String::new(),
                    String::new(),
                    "  service".into(),
                    String::new(),
                    String::new(),
                    q(50.0),
                    q(90.0),
                    q(99.0),
                    q(99.9),
                    lat(Some(svc.max_ns)),
                    stdev(Some(svc)),
                ]);
            }
        }
    }
    (header, rows)
}

/// A latency's standard deviation, or `-` (records from before it was kept).
fn stdev(l: Option<&bakeoff_core::record::Latency>) -> String {
    lat(l.and_then(|l| l.stdev_ns).map(|s| s.round() as u64))
}

/// " lgwr: 3.0 commits per log write (group commit)" for each group-committing role.
fn commit_lines(r: &RunRecord) -> Vec<String> {
    r.roles
        .iter()
        .filter_map(|role| {
            role.commits_per_write
                .map(|c| format!("{}: {c:.1} commits per log write (group commit)", role.name))
        })
        .collect()
}

fn roles_table(r: &RunRecord) -> String {
    let (header, rows) = role_rows(r);
    let t = crate::fmt::plain_table(header, rows, 1..11);
    let mut out = format!(
        "{}\n",
        t.to_string()
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    );
    for line in commit_lines(r) {
        let _ = writeln!(out, " {line}");
    }
    out
}

/// The same summary in Markdown (`run --export-markdown`): the header as a paragraph, the
/// per-role table, then the system, device and memory lines and the findings as a list.
pub fn render_markdown(r: &RunRecord) -> String {
    let mut out = header(r);
    if let Some(ramp) = &r.ramp {
        out.push_str(&crate::ramp::render_markdown(ramp));
    }
    let (header, rows) = role_rows(r);
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    out.push_str(&line(&header));
    let align: Vec<String> = (0..header.len())
        .map(|i| if i == 0 || i == 2 { "---" } else { "---:" }.to_string())
        .collect();
    out.push_str(&line(&align));
    for row in &rows {
        out.push_str(&line(row));
    }
    out.push('\n');
    let mut items = commit_lines(r);
    if !r.phases.is_empty() {
        items.extend(
            crate::terminal_phases::lines(r)
                .lines()
                .map(|l| l.trim().to_string()),
        );
    }
    // "cpu      busy ..." lines, spaces collapsed; an indented line continues the one above.
    for text in system(r).lines() {
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        match items.last_mut() {
            Some(last) if text.starts_with(' ') => *last = format!("{last}; {words}"),
            _ => items.push(words),
        }
    }
    for f in &r.findings {
        let level = match f.severity {
            Severity::Warning => "warning",
            Severity::Info => "note",
        };
        items.push(format!(
            "{level}: {} ({}): {}: {}",
            f.title, f.id, f.evidence, f.suggestion
        ));
    }
    for item in items {
        let _ = writeln!(out, "- {item}");
    }
    out
}

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
            "         by whom: {parts}, kernel threads and interrupts {:.1}%, other processes {:.1}%, steal {:.1}%",
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
            "         CPU per operation {} (bakeoff + stack daemons + kernel threads){share}",
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
            .map_or_else(String::new, |c| format!(" ({}/s)", fmt_rate(c)));
        parts.push(format!("commit{rate} p50 {p50} p99 {p99}"));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("latency  all roles: {}\n", parts.join("; "))
}

fn system(r: &RunRecord) -> String {
    let mut s = latency_line(r);
    s += &crate::terminal_files::lines(r);
    s += &cpu_lines(r);
    let sm = &r.summary;
    if r.devices.is_empty() {
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

#[cfg(test)]
mod tests {
    #[test]
    fn summary_reads_like_a_report() {
        insta::assert_snapshot!(super::render(&crate::fixture::record()));
    }

    #[test]
    fn markdown_summary_is_a_table_and_a_list() {
        insta::assert_snapshot!(super::render_markdown(&crate::fixture::record()));
    }

    #[test]
    fn a_kind_with_no_operations_is_no_row() {
        let mut r = crate::fixture::record();
        let rows = |r: &bakeoff_core::record::RunRecord| super::role_rows(r).1.len();
        let before = rows(&r);
        let role = r
            .roles
            .iter_mut()
            .find(|x| x.ops.len() > 1)
            .expect("a role of two kinds");
        let name = role.name.clone();
        role.ops[0].ops = 0;
        role.ops[0].iops = 0.0;
        assert_eq!(rows(&r), before - 1);
        // The role keeps its name on its remaining row.
        let text = super::render(&r);
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(&name)),
            "{text}"
        );
    }

    #[test]
    fn one_thread_and_one_cpu_are_singular() {
        let mut r = crate::fixture::record();
        r.plan.roles.truncate(1);
        r.plan.roles[0].threads = 1;
        if let Some(c) = &mut r.cpu {
            c.cpus = 1;
        }
        let text = super::render(&r);
        assert!(text.contains(", 1 thread, "), "{text}");
        assert!(text.contains("of 1 CPU (user"), "{text}");
        // bakeoff's CPU once, on the base of all CPU time, where the split gives it.
        assert_eq!(text.matches("bakeoff 12.5%").count(), 1, "{text}");
        assert!(!text.contains("% of busy CPU"), "{text}");
        assert_eq!(super::count(2, "CPU"), "2 CPUs");
    }
}
