//! `bakeoff`: runs database-shaped workloads on storage stacks and says what each costs.

mod cli;
mod commands;
mod exit;
mod progress;
mod sampler;
mod target;

use clap::Parser;
use exit::Failure;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Run(args) => commands::run::run(args),
        cli::Command::Workloads(args) => commands::workloads::run(args),
        cli::Command::Demo(args) => commands::demo::run(args),
        cli::Command::Compare(args) => commands::compare::run(args),
        cli::Command::Report(args) => commands::report::run(args),
        cli::Command::Stack(args) => commands::stack::run(args),
        cli::Command::Cleanup(args) => commands::cleanup::run(args),
    };
    match result {
        Ok(code) => code.into(),
        Err(Failure { code, error }) => {
            eprintln!("bakeoff: error: {error:#}");
            code.into()
        }
    }
}
