//! `bakeoff cleanup`: replays the ledgers of killed runs (and, with --all, kept stacks).

use crate::cli::CleanupArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::{kept_stacks, replay_file, stale_ledgers, state_dir};
use std::path::PathBuf;

/// Undoes what dead bakeoff processes left; returns how many ledgers were replayed.
pub fn replay_stale(quiet: bool) -> Result<usize, Failure> {
    replay(stale_ledgers(&state_dir()), quiet)
}

fn replay(ledgers: Vec<PathBuf>, quiet: bool) -> Result<usize, Failure> {
    let mut exec = Exec::default();
    let mut left = Vec::new();
    for path in &ledgers {
        if !quiet {
            eprintln!("bakeoff: cleaning up after {}", path.display());
        }
        match replay_file(path, &mut exec) {
            Ok(failures) if failures.is_empty() => {}
            Ok(failures) => left.push(format!("{}: {}", path.display(), failures.join("; "))),
            Err(e) => left.push(format!("{}: {e}", path.display())),
        }
    }
    if !left.is_empty() {
        return Err(failure(
            Code::Environment,
            format!("cleanup could not undo everything:\n{}", left.join("\n")),
        ));
    }
    Ok(ledgers.len())
}

/// Runs the command.
pub fn run(args: CleanupArgs) -> Result<Code, Failure> {
    let mut ledgers = stale_ledgers(&state_dir());
    if args.all {
        ledgers.extend(kept_stacks(&state_dir()).into_iter().map(|(_, p)| p));
    }
    let n = replay(ledgers, false)?;
    let kept = kept_stacks(&state_dir()).len();
    println!("cleanup: {n} ledger(s) replayed; nothing of killed runs is left");
    if kept > 0 && !args.all {
        println!("{kept} stack(s) kept with --keep remain: `bakeoff stack destroy NAME` or `bakeoff cleanup --all`");
    }
    Ok(Code::Ok)
}
