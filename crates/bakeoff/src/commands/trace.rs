//! `bakeoff trace show` and `bakeoff trace personality`: what a captured trace holds, and a
//! personality fitted to it.

use crate::cli::capture::{TraceAction, TraceArgs};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::trace::fit::fit_personality;
use bakeoff_core::trace::stats::TraceStats;
use bakeoff_core::trace::{read_trace, read_trace_lenient, Trace, TraceError};
use std::path::Path;

/// Runs `bakeoff trace`.
pub fn run(args: TraceArgs) -> Result<Code, Failure> {
    match args.action {
        TraceAction::Show { trace, json } => show(&trace, json),
        TraceAction::Personality { trace, name } => personality(&trace, name),
    }
}

/// A killed capture's trace is shown up to its last whole chunk, and says so.
fn show(path: &Path, json: bool) -> Result<Code, Failure> {
    let (trace, truncated_at) = read_lenient(path)?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let stats = TraceStats::of(&trace).with_file_size(bytes);
    if json {
        println!("{}", bakeoff_report::trace::render_json(&stats));
    } else {
        println!("{}", bakeoff_report::trace::render(&stats).trim_end());
    }
    if let Some(offset) = truncated_at {
        eprintln!(
            "bakeoff: warning: {} ends at byte {offset} without its end (the capture was killed): \
             shown up to its last whole chunk",
            path.display()
        );
    }
    Ok(Code::Ok)
}

fn personality(path: &Path, name: Option<String>) -> Result<Code, Failure> {
    let trace = read(path)?;
    let name = name.unwrap_or_else(|| {
        (path.file_stem()).map_or("captured".into(), |s| s.to_string_lossy().into_owned())
    });
    let toml = fit_personality(&trace, &name)
        .map_err(|e| failure(Code::Usage, format!("{}: {e}", path.display())))?;
    print!("{toml}");
    Ok(Code::Ok)
}

/// The whole trace, or exit 2 saying what is wrong with the file.
pub fn read(path: &Path) -> Result<Trace, Failure> {
    read_trace(open(path)?).map_err(|e| named(path, e))
}

fn read_lenient(path: &Path) -> Result<(Trace, Option<u64>), Failure> {
    let lenient = read_trace_lenient(open(path)?).map_err(|e| named(path, e))?;
    Ok((lenient.trace, lenient.truncated_at))
}

fn open(path: &Path) -> Result<std::io::BufReader<std::fs::File>, Failure> {
    let file = (std::fs::File::open(path)).map_err(|e| {
        failure(
            Code::Usage,
            format!("reading trace {}: {e}", path.display()),
        )
    })?;
    Ok(std::io::BufReader::with_capacity(1 << 16, file))
}

fn named(path: &Path, e: TraceError) -> Failure {
    failure(Code::Usage, format!("trace {}: {e}", path.display()))
}
