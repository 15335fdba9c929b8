//! `bakeoff completions SHELL` and `bakeoff man`: generated from the clap definitions, so
//! they never disagree with the command line (`scripts/install.sh` installs both).

use crate::cli::Cli;
use crate::exit::{failure, Code, Failure};
use clap::CommandFactory;
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

/// Prints the man page `bakeoff(1)`, or writes it and one page per subcommand
/// (`bakeoff-run.1`, `bakeoff-stack-create.1`, ...) into `out_dir`.
pub fn man(out_dir: Option<&Path>) -> Result<Code, Failure> {
    if let Some(dir) = out_dir {
        clap_mangen::generate_to(Cli::command(), dir).map_err(|e| {
            failure(
                Code::Environment,
                format!("writing man pages into {}: {e}", dir.display()),
            )
        })?;
        return Ok(Code::Ok);
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| failure(Code::Io, format!("rendering the man page: {e}")))?;
    to_stdout("man page", &out)
}
