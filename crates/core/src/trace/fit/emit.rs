//! Writes a fitted personality as TOML: a header comment with where it came from and what was
//! fitted, `[params]` for every rate, size and count (so they can be swept with `--set`), then
//! the filesets and roles that use them.

use super::{Behaviour, Fileset, Role};
use crate::trace::classify::FileClass;
use crate::trace::model::Trace;
use crate::trace::stats::{duration_ns, utc_text};
use crate::units::format_bytes;
use std::fmt::Write;

/// The personality's text.
pub(super) fn write(
    trace: &Trace,
    name: &str,
    classes: &[FileClass],
    filesets: &[Fileset],
    roles: &[Role],
) -> String {
    let mut s = header(trace, name, classes, filesets, roles);
    let threads: u64 = roles.iter().map(|r| r.group.threads).sum();
    let _ = writeln!(
        s,
        "description = \"fitted to trace {}: {}\"",
        &trace.header.capture_id_hex()[..8],
        roles
            .iter()
            .map(|r| format!("{} x{}", r.name, r.group.threads))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(s, "\n[params]");
    for f in filesets {
        param(
            &mut s,
            &format!("{}_size", f.name),
            &quoted(&size_text(f.size)),
            "total bytes of the files",
        );
        param(
            &mut s,
            &format!("{}_files", f.name),
            &f.nrfiles.to_string(),
            "number of files",
        );
    }
    for r in roles {
        param(
            &mut s,
            &format!("{}_threads", r.name),
            &r.group.threads.to_string(),
            "threads",
        );
        let rate = quoted(&rate_text(r.rate));
        param(
            &mut s,
            &format!("{}_rate", r.name),
            &rate,
            "reads and writes per second per thread (open loop)",
        );
        param(
            &mut s,
            &format!("{}_bs", r.name),
            &quoted(&size_text(r.bs)),
            "bytes per read or write",
        );
    }
    for f in filesets {
        let _ = write!(
            s,
            "\n[[fileset]]\nname = \"{n}\"\nsize = \"${n}_size\"\nnrfiles = \"${n}_files\"\n",
            n = f.name
        );
    }
    debug_assert!(threads > 0);
    for r in roles {
        s += &role(r);
    }
    s
}

fn header(
    trace: &Trace,
    name: &str,
    classes: &[FileClass],
    filesets: &[Fileset],
    roles: &[Role],
) -> String {
    let p = &trace.provenance;
    let mut s = format!(
        "# {name}: fitted by `bakeoff trace personality` to trace {}, captured {}",
        trace.header.capture_id_hex(),
        utc_text(p.started_unix_s)
    );
    if let Some(db) = &p.database {
        let _ = write!(
            s,
            " ({}{})",
            comment(db),
            p.stack
                .as_deref()
                .map(|st| format!(" on {}", comment(st)))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        s,
        ".\n# {:.1} s, {} calls, {} lost; kernel {}.",
        duration_ns(trace) as f64 / 1e9,
        trace.record_count(),
        trace.footer.lost.total(),
        comment(&p.kernel)
    );
    let others = classes.iter().filter(|c| **c == FileClass::Other).count();
    let sets: Vec<String> = (filesets.iter())
        .map(|f| {
            format!(
                "{} {}, {}",
                f.name,
                plural(f.nrfiles, "file"),
                format_bytes(f.size)
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "# Files: {}; {} left out.",
        sets.join("; "),
        plural(others as u64, "other file")
    );
    let _ = writeln!(
        s,
        "# Roles, from what each group of threads did (per thread):"
    );
    for r in roles {
        let comms: Vec<String> = (r.group.comms.iter())
            .map(|(c, n)| format!("{} x{n}", comment(c)))
            .collect();
        let syncs = r
            .sync_every
            .map(|(k, n)| format!(", {k} every {n} writes"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "#   {}: {} ({}), {} reads+writes/s, {} modal, {}% reads{syncs}",
            r.name,
            plural(r.group.threads, "thread"),
            comms.join(", "),
            rate_text(r.rate),
            format_bytes(r.bs),
            r.read_pct
        );
    }
    s += "# A thread that wrote both data and the log is in two roles. rate_iops offers the\n\
          # captured load (an open loop); --set <role>_rate=0 runs a role unthrottled.\n";
    s
}

fn role(r: &Role) -> String {
    let n = &r.name;
    let fileset = if r.behaviour == Behaviour::Log {
        "log"
    } else {
        "data"
    };
    let mut s = format!(
        "\n[[role]]\nname = \"{n}\"\nthreads = \"${n}_threads\"\nfileset = \"{fileset}\"\nrate_iops = \"${n}_rate\"\n"
    );
    if r.direct {
        s += "direct = true\n";
    }
    if r.dsync {
        s += "sync = \"dsync\"\n";
    }
    if let Some((kind, every)) = r.sync_every {
        let _ = writeln!(s, "{kind} = {every}");
    }
    if r.behaviour == Behaviour::Log {
        s += "log = true\n";
    }
    if let Some(depth) = r.iodepth {
        let _ = writeln!(s, "engine = \"io_uring\"\niodepth = {depth}");
    }
    let io = match r.behaviour {
        Behaviour::Log => "write",
        _ if r.read_pct == 100 => "randread",
        _ if r.read_pct == 0 => "randwrite",
        _ => "randrw",
    };
    let mix = if io == "randrw" {
        format!(", rwmixread = {}", r.read_pct)
    } else {
        String::new()
    };
    let _ = writeln!(s, "steps = [{{ io = \"{io}\", bs = \"${n}_bs\"{mix} }}]");
    s
}

fn param(s: &mut String, name: &str, default: &str, help: &str) {
    let _ = writeln!(s, "{name} = {{ default = {default}, help = \"{help}\" }}");
}

/// "1 file", "2 files".
fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn quoted(text: &str) -> String {
    format!("\"{text}\"")
}

/// Text from the trace that goes into a comment: one line, printable.
fn comment(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// A size as a personality writes it: `8k`, `64m`, `2g` when exact, else bytes.
pub(crate) fn size_text(bytes: u64) -> String {
    for (unit, suffix) in [
        (1u64 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// A rate with three significant digits (never 0: a role that did I/O has a rate).
pub(crate) fn rate_text(rate: f64) -> String {
    let r = rate.max(0.001);
    let decimals = (2 - r.log10().floor() as i32).clamp(0, 3) as usize;
    format!("{r:.decimals$}")
}
