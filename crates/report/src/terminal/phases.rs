//! The phase lines of the summary of a run of phases (`bakeoff exec`, a recipe): a row per
//! phase, and one per instance of a parallel phase, with its timings, CPU and device bytes;
//! then how the CPU was measured and the space read back from the stack.

use crate::fmt::{duration, group};
use bakeoff_core::phaserecord::{CpuSource, InstanceRecord, PhaseRecord};
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::units::format_bytes;
use std::fmt::Write;

/// The header's middle part: `recipe build, 7 phases` or `1 instance`.
pub fn header_part(r: &RunRecord) -> String {
    let n = r.phases.len();
    match r.plan.workload.as_str() {
        "exec" => {
            let instances = r.phases.first().map_or(0, |p| p.instances.len());
            let s = if instances == 1 { "" } else { "s" };
            format!("{instances} instance{s}")
        }
        name => format!("recipe {name}, {n} phase{}", if n == 1 { "" } else { "s" }),
    }
}

/// The table's headings, which of its columns are right-aligned, and its rows. A column of
/// rows appears where a phase counts them (a database's load and queries).
pub fn rows(r: &RunRecord) -> (Vec<String>, Vec<Vec<String>>) {
    let with_rows = r.phases.iter().any(|p| p.rows.is_some());
    let mut header = vec!["phase", "start", "real s"];
    header.extend(with_rows.then_some("rows"));
    header.extend([
        "user s",
        "sys s",
        "exit",
        "dev read",
        "dev written",
        "flushes",
        "busy",
    ]);
    let mut rows = Vec::new();
    for p in &r.phases {
        let busy = p.cpu.as_ref().map(|c| format!("{:.0}%", c.busy_pct));
        let mut row = vec![
            p.name.clone(),
            format!("{:+.1}", p.start_offset_s),
            format!("{:.1}", p.real_s),
        ];
        row.extend(with_rows.then(|| p.rows.map_or("-".into(), group)));
        row.extend([
            secs(p.user_s),
            secs(p.sys_s),
            phase_exit(p),
            p.device_read_bytes.map_or("-".into(), format_bytes),
            p.device_write_bytes.map_or("-".into(), format_bytes),
            p.device_flushes.map_or("-".into(), group),
            busy.unwrap_or_else(|| "-".into()),
        ]);
        rows.push(row);
        if p.instances.len() > 1 {
            rows.extend(p.instances.iter().map(instance_row));
        }
    }
    (header.into_iter().map(String::from).collect(), rows)
}

fn instance_row(i: &InstanceRecord) -> Vec<String> {
    let mut row = vec![
        format!("  #{}", i.index),
        format!("{:+.1}", i.start_offset_s),
        format!("{:.1}", i.real_s),
        secs(i.user_s),
        secs(i.sys_s),
        exit(i.exit_code, i.signal),
    ];
    row.resize(10, String::new());
    row
}

fn secs(v: Option<f64>) -> String {
    v.map_or("-".into(), |s| format!("{s:.1}"))
}

fn exit(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (Some(c), _) => c.to_string(),
        (None, Some(s)) => format!("sig {s}"),
        (None, None) => "-".into(),
    }
}

/// A phase's exit: its instances' (the first that failed), or an action's outcome.
fn phase_exit(p: &PhaseRecord) -> String {
    if p.instances.is_empty() {
        return match p.status {
            RunStatus::Completed => "ok".into(),
            RunStatus::Failed => "failed".into(),
            RunStatus::Interrupted => "stopped".into(),
        };
    }
    let failed = p.instances.iter().find(|i| i.exit_code != Some(0));
    let i = failed.unwrap_or(&p.instances[0]);
    exit(i.exit_code, i.signal)
}

/// The lines under the table: how user and sys were measured, the space read back.
pub fn lines(r: &RunRecord) -> String {
    let mut s = String::new();
    let sources: Vec<CpuSource> = r.phases.iter().map(|p| p.cpu_source).collect();
    let how = if sources.contains(&CpuSource::BakeoffAndServer) {
        "bakeoff (the client) plus the database server's processes"
    } else if sources.iter().all(|s| *s == CpuSource::Bakeoff) {
        "bakeoff's own (the work runs inside it)"
    } else if sources.contains(&CpuSource::Rusage) {
        "getrusage of each command and the children it waited for (no cgroup v2 here: a daemon \
         it left running is not counted)"
    } else {
        "each command tree's cgroup (cpu.stat: every descendant)"
    };
    let _ = writeln!(
        s,
        "phases   user and sys s: {how}; busy: the whole machine over the phase"
    );
    for p in r.phases.iter().filter(|p| p.name.ends_with("queries")) {
        s += &steps_lines(p);
    }
    if let Some(sp) = &r.space {
        let used = sp.used_bytes.map_or("-".into(), format_bytes);
        let size = sp
            .size_bytes
            .map_or(String::new(), |b| format!(" of {}", format_bytes(b)));
        let logical = sp.logical_bytes.map_or(String::new(), |b| {
            format!(", {} before compression", format_bytes(b))
        });
        let ratio = sp
            .compress_ratio
            .map_or(String::new(), |c| format!(", compression ratio {c:.2}x"));
        let _ = writeln!(
            s,
            "space    {used} used{size}{logical}{ratio} ({})",
            sp.source
        );
    }
    s
}

/// A phase's steps (the 22 queries), six to a line: `Q1 520 ms (4)`, the rows in brackets.
fn steps_lines(p: &PhaseRecord) -> String {
    let items: Vec<String> = (p.steps.iter())
        .map(|q| {
            let rows = q.rows.map_or(String::new(), |n| format!(" ({})", group(n)));
            format!("{} {}{rows}", q.name, duration(q.real_s * 1e9))
        })
        .collect();
    let mut s = String::new();
    for (i, chunk) in items.chunks(6).enumerate() {
        let label = if i == 0 { "queries" } else { "" };
        let _ = writeln!(s, "{label:<8} {}", chunk.join(", "));
    }
    s
}

#[cfg(test)]
mod tests {

    use crate::fixture::recipe_record as record;

    #[test]
    fn phases_show_as_rows_with_their_instances_and_the_space_below() {
        let text = crate::terminal::render(&record());
        assert!(text.starts_with("build on "), "{text}");
        assert!(text.contains("recipe build, 2 phases"), "{text}");
        let line = |start: &str| {
            let found = text.lines().find(|l| l.trim_start().starts_with(start));
            found
                .unwrap_or_else(|| panic!("no line {start:?} in\n{text}"))
                .to_string()
        };
        let build = line("build-2x");
        for cell in ["+3.0", "22.5", "40.0", "5.0", "3 GiB", "1,234"] {
            assert!(build.contains(cell), "{cell} in {build}");
        }
        assert!(line("#2").contains("+13.0") && line("#2").contains("sig 9"));
        assert!(line("flush").contains(" ok "), "{}", line("flush"));
        let space = line("space");
        assert!(space.contains("300 MiB used of 2 GiB, 520 MiB before compression, compression ratio 1.73x (zfs get)"), "{space}");
        assert!(
            !text.contains("per operation"),
            "no operations here: {text}"
        );
        let md = crate::terminal::render_markdown(&record());
        assert!(md.contains("| build-2x | +3.0 | 22.5 |"), "{md}");
    }
}
