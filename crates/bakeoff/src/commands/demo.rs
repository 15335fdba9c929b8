//! `bakeoff demo`: slob for a few seconds on a directory and on /dev/shm, side by side.
//! Data goes into fresh subdirectories that are removed afterwards, whatever happens.

use super::measure::{interrupt_flag, measure, status_code};
use super::run::parse_sets;
use crate::cli::DemoArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::settings::{Origin, Settings};
use bakeoff_core::workload::builtin;
use std::path::{Path, PathBuf};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(parent: &Path) -> Result<Scratch, Failure> {
        let dir = parent.join(format!("bakeoff-demo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| {
            failure(
                Code::Environment,
                format!("creating {}: {e}", dir.display()),
            )
        })?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<Code, Failure> {
    let mut settings = Settings::default();
    for (k, v) in [
        ("readers", "4"),
        ("writers", "2"),
        ("data_size", "256m"),
        ("redo_size", "16m"),
    ] {
        settings.insert(k, v, Origin::CommandLine);
    }
    settings.insert("runtime", &args.runtime, Origin::CommandLine);
    settings.merge(&parse_sets(&args.set)?);
    let plan = builtin("slob")
        .expect("slob is built in")
        .plan(&settings)
        .map_err(|e| failure(Code::Usage, e))?;
    let interrupt = interrupt_flag()?;
    let mut labels = Vec::new();
    let mut records = Vec::new();
    let dir = std::fs::canonicalize(&args.dir).unwrap_or_else(|_| args.dir.clone());
    for parent in [dir, PathBuf::from("/dev/shm")] {
        let scratch = Scratch::new(&parent)?;
        let target = crate::target::check(&scratch.0)?;
        eprintln!("== slob on {} ==", parent.display());
        let record = measure(&plan, &target, &interrupt, false)?;
        println!("{}", bakeoff_report::terminal::render(&record));
        let code = status_code(&record);
        labels.push(parent.display().to_string());
        records.push(record);
        if code != Code::Ok {
            return Ok(code);
        }
    }
    println!(
        "{}",
        bakeoff_report::side_by_side::render(&labels, &records)
    );
    Ok(Code::Ok)
}
