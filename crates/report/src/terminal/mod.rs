//! The terminal summary: a header, one block per role, then system, device and memory figures.
//! This module assembles it; the parts for a database run (`db`), file serving and clients
//! (`files`), a run of phases (`phases`), a verified run (`verify`) and the system figures
//! (`system`) are its children,
//! which depend on nothing here.

mod db;
mod durability;
mod files;
mod phases;
mod system;
mod verify;

use crate::fmt::{duration, lat, rate};
use bakeoff_core::findings::Severity;
use bakeoff_core::record::{RunRecord, RunStatus};
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
        out.push_str(&phases::lines(r));
    }
    if let Some(db) = &r.database {
        out.push_str(&db::lines(r, db));
    }
    out.push_str(&verify::lines(r));
    out.push_str(&durability::lines(r));
    out.push_str(&system::system(r));
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
        Some(db) => db::header_part(r, db),
        None if !r.phases.is_empty() => phases::header_part(r),
        None => format!("engine {}, {}", r.plan.engine.name(), files::header_part(r)),
    };
    let mut s = format!(
        "{} on {place}{fs}: {} measured{}, {what}{status}\n\n",
        r.plan.workload,
        duration(r.measured_ns as f64),
        warmup_part(r),
    );
    if let Some(e) = &r.error {
        let _ = writeln!(s, "error: {e}\n");
    }
    s
}

/// ` after 6.0 s of warm-up until steady`: how the window was opened.
fn warmup_part(r: &RunRecord) -> String {
    use bakeoff_core::steady::WarmupKind;
    match &r.steady {
        Some(w) if w.warmup == WarmupKind::Auto && w.capped => format!(
            " after {:.1} s of warm-up (ramp_max reached, not steady)",
            w.warmup_s
        ),
        Some(w) if w.warmup == WarmupKind::Auto && r.window_too_short() => {
            format!(" after {:.1} s of warm-up", w.warmup_s)
        }
        Some(w) if w.warmup == WarmupKind::Auto => {
            format!(" after {:.1} s of warm-up until steady", w.warmup_s)
        }
        Some(w) if w.warmup_s > 0.0 => format!(" after a {:.1} s warm-up", w.warmup_s),
        _ => String::new(),
    }
}

/// The per-role table (a run of phases: the phase table): its headings and rows (one per role
/// and operation kind, plus service time under a target rate).
fn role_rows(r: &RunRecord) -> (Vec<String>, Vec<Vec<String>>) {
    if !r.phases.is_empty() {
        return phases::rows(r);
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
        items.extend(phases::lines(r).lines().map(|l| l.trim().to_string()));
    }
    // "cpu      busy ..." lines, spaces collapsed; an indented line continues the one above.
    for text in system::system(r).lines() {
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
        assert_eq!(crate::fmt::count(2, "CPU"), "2 CPUs");
    }
}
