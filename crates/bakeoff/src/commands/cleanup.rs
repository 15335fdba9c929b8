//! `bakeoff cleanup`: replays the ledgers of killed runs (and, with --all, kept stacks), and
//! removes the tracefs instances of killed runs' page-cache probes.

use crate::cli::CleanupArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::{kept_stacks, replay_file, stale_ledgers, state_dir};
use std::path::PathBuf;

/// Undoes what dead bakeoff processes left; returns how many ledgers were replayed.
pub fn replay_stale(quiet: bool) -> Result<usize, Failure> {
    bakeoff_probe::remove_stale_instances();
    abort_orphaned_write_logs(quiet);
    replay(stale_ledgers(&state_dir()), quiet)
}

/// A killed crash-state run's write log holds its process until its FUSE connection is
/// aborted (`bakeoff_stack::writelog::orphans`): abort it, then wait for the process to end so
/// that its ledgers are stale.
fn abort_orphaned_write_logs(quiet: bool) {
    use bakeoff_stack::writelog::orphans::abort_orphaned;
    match abort_orphaned(&mut Exec::default()) {
        Ok(aborted) => {
            for m in &aborted {
                if !quiet {
                    eprintln!(
                        "bakeoff: aborted the write log at {} (its process {} was killed)",
                        m.mountpoint.display(),
                        m.pid
                    );
                }
            }
            // The stuck threads now fail and the process ends; its locks go with its files.
            for m in &aborted {
                let fds = format!("/proc/{}/fd", m.pid);
                let holds = || std::fs::read_dir(&fds).is_ok_and(|mut d| d.next().is_some());
                for _ in 0..100 {
                    if !holds() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            }
        }
        Err(e) => eprintln!("bakeoff: warning: {e}"),
    }
}

fn replay(ledgers: Vec<PathBuf>, quiet: bool) -> Result<usize, Failure> {
    let mut exec = Exec::default();
    let mut pending = ledgers.clone();
    let mut left = Vec::new();
    // A ledger can depend on another: a database server on the data stack keeps its WAL open
    // on the log stack, so the log stack unmounts only once the data stack's ledger stopped the
    // server. Replay what failed again while another pass makes progress.
    loop {
        left.clear();
        let mut failed = Vec::new();
        for path in &pending {
            if !quiet {
                eprintln!("bakeoff: cleaning up after {}", path.display());
            }
            match replay_file(path, &mut exec) {
                Ok(failures) if failures.is_empty() => {}
                Ok(failures) => {
                    left.push(format!("{}: {}", path.display(), failures.join("; ")));
                    failed.push(path.clone());
                }
                Err(e) => left.push(format!("{}: {e}", path.display())),
            }
        }
        if failed.is_empty() || failed.len() == pending.len() {
            break;
        }
        pending = failed;
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
    let traces = bakeoff_probe::remove_stale_instances();
    if traces > 0 {
        println!("cleanup: {traces} tracefs instance(s) of killed runs removed");
    }
    let n = replay(ledgers, false)?;
    let kept = kept_stacks(&state_dir()).len();
    println!("cleanup: {n} ledger(s) replayed; nothing of killed runs is left");
    if kept > 0 && !args.all {
        println!("{kept} stack(s) kept with --keep remain: `bakeoff stack destroy NAME` or `bakeoff cleanup --all`");
    }
    Ok(Code::Ok)
}
