//! Exit codes (documented in README and `bakeoff --help`; tested in tests/cli.rs).

use std::process::ExitCode;

/// What a command's exit status means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// 0: ran, and everything measured is a result.
    Ok = 0,
    /// 2: the command line or a workload file is wrong; nothing was done.
    Usage = 2,
    /// 3: the environment refused: a missing target, a device bakeoff will not write to, a
    /// missing privilege or kernel feature.
    Environment = 3,
    /// 4: an I/O error during layout or the run; its figures are not results.
    Io = 4,
    /// 5: the safety gate refused a device; nothing was written to it.
    Refused = 5,
    /// 130: interrupted (Ctrl-C / SIGTERM); what was measured was printed and marked so.
    Interrupted = 130,
}

impl From<Code> for ExitCode {
    fn from(c: Code) -> ExitCode {
        ExitCode::from(c as u8)
    }
}

/// An error with the exit code it maps to.
pub struct Failure {
    /// Exit code.
    pub code: Code,
    /// What happened, with context.
    pub error: anyhow::Error,
}

/// A failure from a message.
pub fn failure(code: Code, msg: impl std::fmt::Display) -> Failure {
    Failure {
        code,
        error: anyhow::anyhow!("{msg}"),
    }
}

/// The exit code of a stack error.
pub fn stack_failure(e: bakeoff_stack::StackError) -> Failure {
    let code = match &e {
        bakeoff_stack::StackError::Spec(_) => Code::Usage,
        bakeoff_stack::StackError::Refused { .. } => Code::Refused,
        bakeoff_stack::StackError::Io { .. } => Code::Io,
        _ => Code::Environment,
    };
    failure(code, e)
}
