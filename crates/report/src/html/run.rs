//! The HTML page of one run: its summary, charts of its samples and latencies, and in
//! collapsible sections how the stack was built, the settings, the machine and the database.

use super::{charts_section, page, pairs};
use bakeoff_core::dbrecord::DatabaseRun;
use bakeoff_core::record::{RunRecord, RunStatus, StackInfo};
use bakeoff_core::units::format_bytes;
use maud::{html, Markup};

/// One run as a self-contained HTML page.
pub fn render_run(r: &RunRecord) -> String {
    let title = format!("bakeoff {} on {}", r.plan.workload, r.target.path);
    let status = match r.status {
        RunStatus::Completed => "completed",
        RunStatus::Interrupted => "interrupted: the figures cover the time measured",
        RunStatus::Failed => "failed: its figures are not results",
    };
    let body = html! {
        h1 { (title) }
        p.meta {
            "Run " (status) "; " (format!("{:.1}", r.measured_ns as f64 / 1e9)) " s measured; "
            "bakeoff " (r.environment.tool_version) " on " (r.environment.hostname)
            " (Linux " (r.environment.kernel) ")."
        }
        @if let Some(e) = &r.error { p.error { (e) } }
        h2 #summary { "Summary" }
        // Wrapped, not scrolled: the summary's long lines (CPU, devices) stay in view.
        pre.summary { (crate::terminal::render(r)) }
        @if !r.findings.is_empty() {
            h2 #findings { "Findings" }
            ul { @for f in &r.findings { (super::study::finding(f)) } }
        }
        (charts_section(&crate::charts::run::charts(r)))
        @if let Some(db) = &r.database { (database(db)) }
        h2 #provenance { "Provenance" }
        @if let Some(s) = &r.stack { (stack("Stack", s)) }
        @if let Some(s) = &r.log_stack { (stack("Log stack", s)) }
        details #settings {
            summary { "Workload settings" }
            (pairs(r.plan.settings.iter().map(|(k, v)| (k.as_str(), v.clone()))))
        }
        (environment(r))
    };
    page(&title, body)
}

/// How a stack was built: every command with its status, the properties read back.
fn stack(what: &str, s: &StackInfo) -> Markup {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    html! {
        details.stack {
            summary { (what) ": " code { (s.spec) } " (" (s.kind) ", " (s.backend) ")" }
            (pairs([
                ("name", s.name.clone()),
                ("target", s.target.clone()),
                ("started cold", opt(s.cold.map(|c| c.to_string()))),
                ("memory limit", opt(s.mem_limit_bytes.map(format_bytes))),
                ("redundancy", opt(s.redundancy.map(|r| format!("{r}")))),
            ]))
            h3 { "Devices" }
            table {
                thead { tr { th { "device" } th { "role" } th { "image" } th { "size" } th { "loop direct I/O" } th { "offset" } th { "signatures wiped" } } }
                tbody {
                    @for b in &s.backing {
                        tr {
                            td { (b.device) } td { (b.role) } td { (opt(b.image.clone())) }
                            td.num { (format_bytes(b.size_bytes)) }
                            td { (opt(b.loop_dio.map(|d| d.to_string()))) }
                            td.num { (b.offset_bytes) } td { (b.wiped_signatures.join(", ")) }
                        }
                    }
                }
            }
            h3 { "Properties read back" }
            (pairs(s.properties.iter().map(|(k, v)| (k.as_str(), v.clone()))))
            h3 { "Tool versions" }
            (pairs(s.tool_versions.iter().map(|(k, v)| (k.as_str(), v.clone()))))
            @if !s.daemons.is_empty() {
                h3 { "Daemons" }
                ul { @for d in &s.daemons { li { (d.name) " pid " (d.pid) ": " code { (d.args.join(" ")) } } } }
            }
            h3 { "Commands" }
            table {
                thead { tr { th { "command" } th { "status" } th { "ms" } th { "stderr" } } }
                tbody {
                    @for c in &s.commands {
                        tr {
                            td { code { (c.argv.join(" ")) } }
                            td class=(if c.status == Some(0) { "num" } else { "num worse" }) {
                                (c.status.map_or("killed or not started".into(), |s| s.to_string()))
                            }
                            td.num { (c.ms) }
                            td { @if !c.stderr.is_empty() { pre { (c.stderr) } } }
                        }
                    }
                }
            }
        }
    }
}

fn environment(r: &RunRecord) -> Markup {
    let e = &r.environment;
    let t = &r.target;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    html! {
        details #environment {
            summary { "Environment" }
            (pairs([
                ("bakeoff", format!("{} {}", e.tool_version, opt(&e.git_hash))),
                ("host", e.hostname.clone()),
                ("kernel", e.kernel.clone()),
                ("CPU", format!("{} ({} online)", e.cpu_model, e.cpus)),
                ("memory", format_bytes(e.memory_bytes)),
                ("clock source", format!("{} ({:.0} ns per read)", e.clocksource, e.timer_overhead_ns)),
                ("target", format!("{} ({})", t.path, t.kind)),
                ("file system", opt(&t.filesystem)),
                ("mount source", opt(&t.mount_source)),
                ("mount options", opt(&t.mount_options)),
                ("started cold", r.cold.map_or("-".into(), |c| c.to_string())),
            ]))
        }
    }
}

/// The database of a database run: what ran, its load, its counters and its checks.
fn database(db: &DatabaseRun) -> Markup {
    let opt = |v: Option<u64>| v.map_or("-".into(), |x| x.to_string());
    html! {
        h2 #database { "Database" }
        p { (db.db) ": " (db.version) }
        (pairs(db.paths.iter().map(|(k, v)| (k.as_str(), v.clone()))))
        @if let Some(l) = &db.load {
            h3 { "Load" }
            (pairs([
                ("time", format!("{:.1} s", l.seconds)),
                ("rows per second", format!("{:.0}", l.rows_per_s)),
                ("size on disk", l.size_bytes.map_or("-".into(), format_bytes)),
                ("device bytes read", opt(l.device_read_bytes)),
                ("device bytes written", opt(l.device_write_bytes)),
                ("log device bytes written", opt(l.log_device_write_bytes)),
            ]))
            details { summary { "Rows per table" } (pairs(l.rows.iter().map(|(k, v)| (k.as_str(), v.to_string())))) }
        }
        @if let Some(w) = &db.window {
            h3 { "Counters over the measured window" }
            (pairs([
                ("cache hits", opt(w.cache_hits)),
                ("cache misses", opt(w.cache_misses)),
                ("WAL bytes", opt(w.wal_bytes)),
                ("WAL full-page images", opt(w.wal_fpi)),
                ("checkpoints", opt(w.checkpoints)),
                ("commits", opt(w.commits)),
                ("rollbacks", opt(w.rollbacks)),
            ]))
        }
        @if !db.consistency.is_empty() {
            h3 { "Consistency checks" }
            ul {
                @for c in &db.consistency {
                    li class=(if c.passed { "info" } else { "warning" }) {
                        (c.name) ": " (if c.passed { "holds" } else { "does not hold" })
                        @if let Some(d) = &c.detail { " (" (d) ")" }
                    }
                }
            }
        }
        p {
            "Retried: " (db.retries.values().sum::<u64>()) "; rolled back on purpose: " (db.rollbacks)
            @if db.delivery_skipped_districts > 0 { "; Delivery districts skipped: " (db.delivery_skipped_districts) }
        }
        details { summary { "Settings in force (" (db.settings.len()) ")" } (pairs(db.settings.iter().map(|(k, v)| (k.as_str(), v.clone())))) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::tests::assert_self_contained;
    use bakeoff_core::record::CommandRecord;

    #[test]
    fn a_run_page_has_its_charts_provenance_and_environment() {
        let mut r = crate::fixture::record();
        r.stack = Some(StackInfo {
            spec: "ext4:mount=noatime".into(),
            kind: "ext4".into(),
            properties: [("block_size".to_string(), "4096".to_string())].into(),
            commands: vec![CommandRecord {
                argv: vec!["mkfs.ext4".into(), "-F".into(), "/dev/loop7".into()],
                status: Some(0),
                ms: 120,
                stderr: String::new(),
            }],
            ..StackInfo::default()
        });
        let html = render_run(&r);
        assert_self_contained(&html);
        assert_eq!(html.matches("<svg").count(), 7, "every chart of the run");
        assert!(html.contains("<code>mkfs.ext4 -F /dev/loop7</code>"));
        assert!(html.contains("<th>block_size</th><td>4096</td>"));
        assert!(html.contains("<details id=\"environment\">"));
        assert!(!html.contains("id=\"database\""), "not a database run");
        r.database = Some(DatabaseRun {
            db: "sqlite".into(),
            version: "SQLite 3.40.1".into(),
            ..DatabaseRun::default()
        });
        assert!(render_run(&r).contains("<h2 id=\"database\">Database</h2>"));
    }

    #[test]
    fn an_hour_of_samples_stays_under_2_mb() {
        let mut r = crate::fixture::record();
        let first = r.samples[0].clone();
        r.samples = (1..=3600)
            .map(|t| bakeoff_core::record::Sample {
                t_s: t as f64,
                read_iops: 12_000.0 + (t % 17) as f64 * 100.0,
                write_iops: 1_000.0 + (t % 13) as f64 * 10.0,
                ..first.clone()
            })
            .collect();
        let html = render_run(&r);
        assert!(html.len() < 2 << 20, "{} bytes", html.len());
        eprintln!("{} bytes", html.len());
    }
}
