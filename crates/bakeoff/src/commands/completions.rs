//! `bakeoff completions SHELL` and `bakeoff man`: generated from the clap definitions, so
//! they never disagree with the command line (`scripts/install.sh` installs both, and the
//! `docs/` the pages name).

use crate::cli::Cli;
use crate::exit::{failure, Code, Failure};
use clap::CommandFactory;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

fn to_stdout(what: &str, bytes: &[u8]) -> Result<Code, Failure> {
    std::io::stdout()
        .write_all(bytes)
        .map_err(|e| failure(Code::Io, format!("writing the {what} to stdout: {e}")))?;
    Ok(Code::Ok)
}

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Result<Code, Failure> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "bakeoff", &mut out);
    to_stdout("completions", &out)
}

/// The documents each top-level command's page names under SEE ALSO (path under `docs/`, what
/// it tells); bakeoff(1) names them all.
pub const DOCS: &[(&str, &[(&str, &str)])] = &[
    (
        "run",
        &[
            ("workloads.md", "the built-in workloads and their keys"),
            ("stacks.md", "stack specs and what building one does"),
            ("methodology.md", "how a run measures"),
            ("schema.md", "the run record (--export-json) and CSV"),
            ("report.md", "the HTML report and its charts"),
            ("ramp.md", "load ramps (--ramp)"),
            ("phases.md", "recipes and phases (--recipe)"),
            ("tpcc.md", "TPC-C"),
            ("tpch.md", "TPC-H"),
            ("postgres.md", "the managed PostgreSQL server"),
            ("mpi.md", "load from many hosts (--mpi)"),
            ("findings.md", "the findings a run reports"),
            (
                "replay.md",
                "replaying a captured trace (--replay), capturing a run (--capture)",
            ),
            ("verify.md", "data verification (verify=crc32c|sha256)"),
        ],
    ),
    (
        "exec",
        &[
            ("phases.md", "commands and recipes timed on a stack"),
            ("stacks.md", "stack specs"),
            ("schema.md", "the record (--export-json)"),
        ],
    ),
    (
        "workloads",
        &[
            ("workloads.md", "the built-in workloads and their keys"),
            ("phases.md", "recipes"),
            ("tpcc.md", "TPC-C"),
            ("tpch.md", "TPC-H"),
        ],
    ),
    (
        "demo",
        &[
            ("stacks.md", "stack specs"),
            ("verdicts.md", "how cells are compared"),
        ],
    ),
    (
        "compare",
        &[
            ("verdicts.md", "better, worse or no significant difference"),
            ("report.md", "the tables, the HTML report and its charts"),
            ("studies/README.md", "study files (--study)"),
            ("methodology.md", "how a run measures"),
            ("schema.md", "the comparison JSON and CSV"),
            (
                "replay.md",
                "replaying a captured trace on every stack (--replay)",
            ),
        ],
    ),
    (
        "report",
        &[
            ("report.md", "the tables, the HTML report and its charts"),
            ("verdicts.md", "better, worse or no significant difference"),
            ("schema.md", "the comparison JSON and CSV"),
        ],
    ),
    ("stack", &[("stacks.md", "stack specs, types and keys")]),
    (
        "capture",
        &[
            (
                "replay.md",
                "what is captured, what is lost, and the replay",
            ),
            ("trace.md", "the trace file's format"),
        ],
    ),
    (
        "trace",
        &[
            (
                "trace-analysis.md",
                "what trace show prints and the fitted personality",
            ),
            ("trace.md", "the trace file's format"),
        ],
    ),
    (
        "cleanup",
        &[("stacks.md", "what a stack leaves and how it is undone")],
    ),
];

/// The `SEE ALSO` section of the page of `path` (empty: bakeoff(1)): the related pages and the
/// documents, in roff.
fn see_also(path: &[String]) -> String {
    let dash = |s: &str| s.replace('-', "\\-");
    let mut pages = vec!["\\fBbakeoff\\fR(1)".to_string()];
    if path.len() > 1 {
        pages.push(format!("\\fBbakeoff\\-{}\\fR(1)", dash(&path[0])));
    }
    let docs: Vec<(&str, &str)> = match path.first() {
        None => {
            pages = DOCS
                .iter()
                .map(|(c, _)| format!("\\fBbakeoff\\-{}\\fR(1)", dash(c)))
                .collect();
            let mut all: Vec<(&str, &str)> = Vec::new();
            for (name, what) in DOCS.iter().flat_map(|(_, d)| d.iter()) {
                if !all.iter().any(|(n, _)| n == name) {
                    all.push((name, what));
                }
            }
            all
        }
        Some(cmd) => DOCS
            .iter()
            .find(|(c, _)| c == cmd)
            .map_or(Vec::new(), |(_, d)| d.to_vec()),
    };
    let mut s = format!(".SH \"SEE ALSO\"\n{}\n", pages.join(", "));
    if !docs.is_empty() {
        s.push_str(
            ".PP\nIn the docs/ directory of the bakeoff sources (scripts/install.sh copies it to \
             PREFIX/share/doc/bakeoff):\n",
        );
        for (name, what) in docs {
            let _ = write!(s, ".TP\n\\fBdocs/{}\\fR\n{}\n", dash(name), dash(what));
        }
    }
    s
}

/// clap_mangen puts `after_help` in a filled section called EXTRA; our after_help is the
/// command's examples, so it becomes EXAMPLES, one command per line, unfilled.
fn examples_section(page: &str) -> String {
    let Some((head, rest)) = page.split_once(".SH EXTRA\nExamples:\n") else {
        return page.to_string();
    };
    let (examples, tail) = match rest.find("\n.SH ") {
        Some(i) => (&rest[..=i], &rest[i + 1..]),
        None => (rest, ""),
    };
    format!("{head}.SH EXAMPLES\n.nf\n{examples}.fi\n{tail}")
}

/// One page: clap_mangen's rendering of `cmd`, its examples, and its SEE ALSO.
fn page(cmd: clap::Command, path: &[String]) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .source(concat!("bakeoff ", env!("CARGO_PKG_VERSION")))
        .manual("bakeoff manual")
        .render(&mut out)?;
    let text = String::from_utf8_lossy(&out);
    let mut text = examples_section(&text);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&see_also(path));
    Ok(text.into_bytes())
}

/// Every page: `cmd`'s and each visible subcommand's, as (file name, roff).
fn all_pages(
    cmd: &clap::Command,
    path: &[String],
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), std::io::Error> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut p = path.to_vec();
        p.push(sub.get_name().to_string());
        all_pages(sub, &p, out)?;
    }
    let name = cmd.get_display_name().unwrap_or(cmd.get_name());
    out.push((format!("{name}.1"), page(cmd.clone(), path)?));
    Ok(())
}

/// The whole command, built (subcommands know their display names, `bakeoff-run`).
fn built() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Prints the man page of `command` (empty: `bakeoff(1)`; `["stack", "create"]`:
/// `bakeoff-stack-create(1)`), or writes every page into `out_dir`.
pub fn man(command: &[String], out_dir: Option<&Path>) -> Result<Code, Failure> {
    let top = built();
    if let Some(dir) = out_dir {
        let written = || -> Result<(), std::io::Error> {
            let mut pages = Vec::new();
            all_pages(&top, &[], &mut pages)?;
            for (name, text) in pages {
                std::fs::write(dir.join(name), text)?;
            }
            Ok(())
        };
        written().map_err(|e| {
            failure(
                Code::Environment,
                format!("writing man pages into {}: {e}", dir.display()),
            )
        })?;
        return Ok(Code::Ok);
    }
    let mut cmd = &top;
    for (i, word) in command.iter().enumerate() {
        cmd = cmd
            .get_subcommands()
            .find(|s| s.get_name() == word && !s.is_hide_set())
            .ok_or_else(|| {
                let within = command[..i].join(" ");
                let names: Vec<&str> = (cmd.get_subcommands())
                    .filter(|s| !s.is_hide_set())
                    .map(clap::Command::get_name)
                    .collect();
                failure(
                    Code::Usage,
                    format!(
                        "no man page for 'bakeoff {within}{}{word}': the commands are {}",
                        if within.is_empty() { "" } else { " " },
                        names.join(", ")
                    ),
                )
            })?;
    }
    let out = page(cmd.clone(), command)
        .map_err(|e| failure(Code::Io, format!("rendering the man page: {e}")))?;
    to_stdout("man page", &out)
}
