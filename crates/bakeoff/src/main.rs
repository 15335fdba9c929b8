//! `bakeoff`: runs database-shaped workloads on storage stacks and says what each costs.

mod cli;
mod commands;
mod exit;
mod progress;
mod sampler;
mod target_check;

use clap::Parser;
use exit::Failure;
use std::io::IsTerminal;

fn main() -> std::process::ExitCode {
    quiet_on_closed_stdout();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match cli.command {
        cli::Command::Run(args) => commands::run::run(args),
        cli::Command::Exec(args) => commands::exec::exec(args),
        cli::Command::Workloads(args) => commands::workloads::run(args),
        cli::Command::Demo(args) => commands::demo::run(args),
        cli::Command::Compare(args) => commands::compare::run(args),
        cli::Command::Report(args) => commands::report::run(args),
        cli::Command::Stack(args) => commands::stack::run(args),
        cli::Command::Cleanup(args) => commands::cleanup::run(args),
        cli::Command::Capture(args) => commands::capture::run(args),
        cli::Command::Trace(args) => commands::trace::run(args),
        cli::Command::Completions { shell } => commands::completions::completions(shell),
        cli::Command::Man { command, out_dir } => {
            commands::completions::man(&command, out_dir.as_deref())
        }
        cli::Command::Client => return client(),
    };
    let code = match result {
        Ok(code) => code,
        Err(Failure { code, error }) => {
            eprintln!("bakeoff: error: {error:#}");
            code
        }
    };
    if code == exit::Code::Interrupted {
        // Whoever reads the log of a stopped run (a CI job, a service) learns why it stopped.
        if let Some(signal) = commands::measure::stopped_by() {
            eprintln!("bakeoff: interrupted by {signal}; exit 130");
        }
    }
    code.into()
}

/// `bakeoff trace show t.trace | head`: when the reader of stdout goes away, end as a Unix
/// tool does (quietly, status 141: killed by SIGPIPE) instead of printing a panic. Rust ignores
/// SIGPIPE, so the write fails and `println!` panics; the hook sees that panic's message.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = (info.payload().downcast_ref::<String>().map(String::as_str))
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// `bakeoff __client`: one client process of a `clients=N` run. Ctrl-C reaches it as well as
/// the parent: it stops its run and reports, as the parent's `stop` makes it do.
fn client() -> std::process::ExitCode {
    let code = match commands::measure::interrupt_flag() {
        Ok(flag) => bakeoff_engine::clients::serve(flag),
        Err(Failure { error, .. }) => {
            eprintln!("bakeoff: error: {error:#}");
            2
        }
    };
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Help and version go to stdout as clap prints them; command-line errors get the one prefix
/// every bakeoff failure has (`bakeoff: error: ...`) and exit 2.
fn usage_error(e: clap::Error) -> std::process::ExitCode {
    if !e.use_stderr()
        || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    {
        e.exit();
    }
    let rendered = e.render();
    let text = if std::io::stderr().is_terminal() {
        rendered.ansi().to_string()
    } else {
        rendered.to_string()
    };
    // clap starts its message with "error: " (possibly coloured): put "bakeoff: " before it.
    eprint!("bakeoff: {text}");
    exit::Code::Usage.into()
}
