//! What `bakeoff trace show` prints: a trace's provenance, what it lost, its op mix, its
//! busiest files and threads and its histograms ([`render`]), or all of [`TraceStats`] as JSON
//! ([`render_json`], documented in docs/trace-analysis.md).

use crate::fmt::{count, group, pct, plain_table, rate, size};
use crate::ramp::{bar, sparkline};
use bakeoff_core::trace::stats::{utc_text, Histogram, TraceStats};
use std::fmt::Write;

/// Version of `trace show --json`.
pub const TRACE_SCHEMA_VERSION: u32 = 1;

/// Files and threads the text lists (the JSON has them all).
const TOP: usize = 10;

/// Widest sparkline of the per-second series: longer captures are averaged into it.
const SPARK_WIDTH: usize = 60;

/// `trace show --json`: every figure, with `schema_version`.
pub fn render_json(stats: &TraceStats) -> String {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        schema_version: u32,
        #[serde(flatten)]
        stats: &'a TraceStats,
    }
    let doc = Doc {
        schema_version: TRACE_SCHEMA_VERSION,
        stats,
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("trace statistics serialise");
    s.push('\n');
    s
}

/// `trace show`: the trace for a terminal.
pub fn render(s: &TraceStats) -> String {
    let s = &printable_names(s);
    let mut out = header(s);
    out += &losses(s);
    out += &totals(s);
    out += &files(s);
    out += &threads(s);
    out += &series(s);
    for (sizes, offsets) in s.sizes.iter().zip(&s.offsets) {
        out += &histogram("sizes", sizes);
        out += &histogram("offsets", offsets);
    }
    out
}

/// The names and paths of `s` (from the traced machine) with no control characters, so a
/// terminal shows them as text.
fn printable_names(s: &TraceStats) -> TraceStats {
    let mut s = s.clone();
    let p = &mut s.provenance;
    for text in [&mut p.kernel, &mut p.filter]
        .into_iter()
        .chain(p.database.as_mut())
        .chain(p.stack.as_mut())
    {
        *text = printable(text);
    }
    for r in &mut p.roots {
        for text in [
            &mut r.name,
            &mut r.path,
            &mut r.fs_type,
            &mut r.mount_options,
        ] {
            *text = printable(text);
        }
    }
    s.files.iter_mut().for_each(|f| f.path = printable(&f.path));
    s.threads
        .iter_mut()
        .for_each(|t| t.comm = printable(&t.comm));
    s.uncovered
        .iter_mut()
        .for_each(|u| u.call = printable(&u.call));
    s
}

fn header(s: &TraceStats) -> String {
    let p = &s.provenance;
    let mut out = format!(
        "trace    {} (format {}), captured {} for {}\n",
        s.capture_id,
        s.format,
        utc_text(p.started_unix_s),
        crate::fmt::duration(s.totals.duration_s * 1e9),
    );
    let what = match (&p.database, &p.stack) {
        (Some(db), Some(stack)) => format!("{db} on {stack}, "),
        (Some(db), None) => format!("{db}, "),
        (None, Some(stack)) => format!("on {stack}, "),
        (None, None) => String::new(),
    };
    let _ = writeln!(out, "source   {what}{}, kernel {}", p.filter, p.kernel);
    for (i, r) in p.roots.iter().enumerate() {
        let label = if i == 0 { "roots" } else { "" };
        let _ = writeln!(
            out,
            "{label:<8} {} {} ({}, {})",
            r.name, r.path, r.fs_type, r.mount_options
        );
    }
    out
}

/// The losses, first and loud: a trace that lost calls replays less than the database did.
fn losses(s: &TraceStats) -> String {
    let mut out = String::new();
    let l = &s.lost;
    let kinds = [
        ("ring buffer full", l.ring_full),
        ("starts not kept", l.pending_full),
        ("arguments unreadable", l.user_read_failed),
        ("async submissions cut", l.async_truncated),
        ("unpaired starts and ends", l.unmatched_exit),
        ("unfinished at the end", l.unfinished_at_end),
    ];
    if s.totals.lost > 0 {
        let what: Vec<String> = (kinds.iter().filter(|(_, n)| *n > 0))
            .map(|(k, n)| format!("{k} {}", group(*n)))
            .collect();
        let _ = writeln!(
            out,
            "LOST     {} not in the trace ({}): the replay does less than the database did",
            count(s.totals.lost, "call"),
            what.join(", ")
        );
    }
    if s.totals.uncovered > 0 {
        let what: Vec<String> = (s.uncovered.iter())
            .map(|u| format!("{} {}", u.call, group(u.count)))
            .collect();
        let _ = writeln!(
            out,
            "UNCOVERED {} on the traced files the replay does not make ({})",
            count(s.totals.uncovered, "call"),
            what.join(", ")
        );
    }
    out
}

fn totals(s: &TraceStats) -> String {
    let t = &s.totals;
    let mut out = format!(
        "calls    {} ({}/s), {} syncs/s; read {}, written {}",
        group(t.records),
        rate(t.ops_per_s),
        rate(t.syncs_per_s),
        size(t.bytes_read),
        size(t.bytes_written)
    );
    if t.failed > 0 {
        let _ = write!(out, "; {} failed", group(t.failed));
    }
    if let (Some(b), Some(per)) = (t.trace_bytes, t.bytes_per_record) {
        let _ = write!(out, "; trace {} ({per:.1} B/call)", size(b));
    }
    out.push('\n');
    let mut mix: Vec<(&String, &u64)> = t.ops.iter().collect();
    mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shares: Vec<String> = (mix.iter())
        .map(|(op, n)| format!("{op} {}", pct(Some(**n as f64 * 100.0 / t.records as f64))))
        .collect();
    if !shares.is_empty() {
        let _ = writeln!(out, "mix      {}", shares.join(", "));
    }
    let w = &s.working_set;
    let _ = writeln!(
        out,
        "touched  {} in 8 KiB blocks (read {}, written {})",
        size(w.bytes),
        size(w.read_bytes),
        size(w.written_bytes)
    );
    out
}

/// Text from the trace (a thread's name, a path) as a terminal may show it: no control
/// characters.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn share(v: Option<f64>) -> String {
    pct(v.map(|x| x * 100.0))
}

fn files(s: &TraceStats) -> String {
    let mut files: Vec<_> = s.files.iter().collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.bytes_read + f.bytes_written));
    let rows = (files.iter().take(TOP))
        .map(|f| {
            vec![
                f.path.clone(),
                f.class.name().into(),
                f.end_size.or(f.start_size).map_or("-".into(), size),
                size(f.bytes_read),
                size(f.bytes_written),
                size(f.working_set_bytes),
                share(f.seq_share),
                group(f.syncs + f.flush_ranges),
                f.flags.join(","),
            ]
        })
        .collect();
    let header = [
        "file", "class", "size", "read", "written", "touched", "seq", "syncs", "flags",
    ];
    let table = plain_table(header.map(String::from).to_vec(), rows, 2..8);
    let more = s.files.len().saturating_sub(TOP);
    let title = if more > 0 {
        format!("\nfiles ({} more in --json)\n", more)
    } else {
        "\nfiles\n".into()
    };
    format!("{title}{table}\n")
}

fn threads(s: &TraceStats) -> String {
    let mut threads: Vec<_> = s.threads.iter().collect();
    threads.sort_by_key(|t| std::cmp::Reverse(t.records));
    let sz = |v: Option<u64>| v.map_or("-".into(), size);
    let rows = (threads.iter().take(TOP))
        .map(|t| {
            let mut mix: Vec<(&String, &u64)> = t.ops.iter().collect();
            mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let mix: Vec<String> = (mix.iter().take(3))
                .map(|(op, n)| format!("{op} {n}"))
                .collect();
            vec![
                format!("{} {}", t.tid, t.comm),
                mix.join(", "),
                format!(
                    "{} / {} / {}",
                    sz(t.modal_size),
                    sz(t.p50_size),
                    sz(t.p99_size)
                ),
                group(t.records),
                share(t.seq_share),
                rate(t.ops_per_active_s),
                crate::fmt::ratio(t.syncs_per_write),
                share(Some(t.async_share)),
            ]
        })
        .collect();
    let header = [
        "thread",
        "mix",
        "size mode / p50 / p99",
        "calls",
        "seq",
        "ops/s",
        "syncs/write",
        "async",
    ];
    let table = plain_table(header.map(String::from).to_vec(), rows, 3..8);
    let more = s.threads.len().saturating_sub(TOP);
    let title = if more > 0 {
        format!(
            "\nthreads ({} more in --json; ops/s over the seconds each was active)\n",
            more
        )
    } else {
        "\nthreads (ops/s over the seconds each was active)\n".into()
    };
    format!("{title}{table}\n")
}

/// The per-second series as sparklines, averaged to at most [`SPARK_WIDTH`] characters.
fn series(s: &TraceStats) -> String {
    if s.seconds.is_empty() {
        return String::new();
    }
    let per = s.seconds.len().div_ceil(SPARK_WIDTH);
    let avg = |f: &dyn Fn(&bakeoff_core::trace::stats::Second) -> f64| -> Vec<f64> {
        (s.seconds.chunks(per))
            .map(|c| c.iter().map(f).sum::<f64>() / c.len() as f64)
            .collect()
    };
    let (ops, in_call) = (avg(&|x| x.ops as f64), avg(&|x| x.in_call));
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let mean_call = in_call.iter().sum::<f64>() / in_call.len() as f64;
    let unit = if per > 1 {
        format!(" ({per} s each)")
    } else {
        String::new()
    };
    format!(
        "\nper second{unit}\n  ops/s    {}  peak {}\n  in call  {}  mean {:.1}, peak {:.1} threads\n",
        sparkline(&ops),
        rate(max(&ops)),
        sparkline(&in_call),
        mean_call,
        max(&in_call)
    )
}

fn histogram(what: &str, h: &Histogram) -> String {
    if h.buckets.is_empty() {
        return String::new();
    }
    let max = h.buckets.iter().map(|b| b.count).max().unwrap_or(0) as f64;
    let total: u64 = h.buckets.iter().map(|b| b.count).sum();
    let mut out = format!("\n{} {what}\n", h.op);
    for b in &h.buckets {
        let _ = writeln!(
            out,
            "  {:>9}  {:<9} {:>6}  {}",
            size(b.from),
            bar(Some(b.count as f64), max),
            pct(Some(b.count as f64 * 100.0 / total as f64)),
            group(b.count)
        );
    }
    out
}

#[cfg(test)]
mod tests;
