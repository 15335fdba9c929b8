//! Exit codes (documented in README and `bakeoff --help`; tested in tests/cli.rs).

use std::process::ExitCode;

/// What a command's exit status means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// 0: ran, and everything measured is a result.
    Ok = 0,
    /// 2: the command line or a workload file is wrong; nothing was done.
    Usage = 2,
    /// 3: the environment refused: a missing target, a block device `--target` does not take
    /// (not a loop device), a missing privilege or kernel feature.
    Environment = 3,
    /// 4: an I/O error during layout or the run; its figures are not results.
    Io = 4,
    /// 5: the safety gate refused a device (mounted, swap, held, a pool member, a signature not
    /// confirmed), whether named as `--target` or `--device`; nothing was written to it.
    Refused = 5,
    /// 6: a report was printed, but some run records could not be read: each was named on
    /// stderr and in the report's notes, and left out (its cell shows one run fewer).
    Unreadable = 6,
    /// 7: a command bakeoff ran for the user (`exec`, a recipe's phase) failed: it exited
    /// non-zero, was killed by a signal or outlived `--timeout`. Its status is in the message
    /// and the record; its figures are not results.
    CommandFailed = 7,
    /// 130: interrupted (Ctrl-C / SIGTERM); what was measured was printed and marked so.
    Interrupted = 130,
}

impl Code {
    /// Every code.
    const ALL: [Code; 8] = [
        Code::Ok,
        Code::Usage,
        Code::Environment,
        Code::Io,
        Code::Refused,
        Code::Unreadable,
        Code::CommandFailed,
        Code::Interrupted,
    ];

    /// The code whose exit status is `status` (one process telling another how it ended);
    /// an unknown status is an environment failure.
    pub fn from_status(status: u8) -> Code {
        (Code::ALL.into_iter())
            .find(|c| *c as u8 == status)
            .unwrap_or(Code::Environment)
    }
}

impl From<Code> for ExitCode {
    fn from(c: Code) -> ExitCode {
        ExitCode::from(c as u8)
    }
}

/// An error with the exit code it maps to.
#[derive(Debug)]
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

/// At most [`ECHO_MAX`] characters of a value the user gave, for error messages: a pasted
/// megabyte must not flood the terminal.
pub fn clip(value: &str) -> String {
    match value.char_indices().nth(ECHO_MAX) {
        Some((end, _)) => format!("{}…", &value[..end]),
        None => value.to_string(),
    }
}

/// How many characters of a bad value an error message repeats.
pub const ECHO_MAX: usize = 200;

/// `message` with every quote of `value` in it clipped to [`ECHO_MAX`] characters.
pub fn clip_in(message: &str, value: &str) -> String {
    if value.chars().count() <= ECHO_MAX {
        return message.to_string();
    }
    message.replace(value, &clip(value))
}

/// A usage error about `flag`'s `value`: `message` (which may quote the value) with the value
/// clipped to [`ECHO_MAX`] characters.
pub fn bad_value(flag: &str, value: &str, message: &str) -> Failure {
    failure(Code::Usage, format!("{flag}: {}", clip_in(message, value)))
}

/// The exit code of a stack error.
pub fn stack_failure(e: bakeoff_stack::StackError) -> Failure {
    let code = match &e {
        bakeoff_stack::StackError::Spec(_) => Code::Usage,
        bakeoff_stack::StackError::Refused { .. } => Code::Refused,
        bakeoff_stack::StackError::Io { .. } => Code::Io,
        bakeoff_stack::StackError::Interrupted(_) => Code::Interrupted,
        _ => Code::Environment,
    };
    failure(code, e)
}

#[cfg(test)]
mod tests {
    #[test]
    fn clip_keeps_short_values_and_cuts_long_ones() {
        assert_eq!(super::clip("1g"), "1g");
        let long = "é".repeat(5000);
        let clipped = super::clip(&long);
        assert_eq!(clipped.chars().count(), super::ECHO_MAX + 1);
        assert!(clipped.ends_with('…'));
        let f = super::bad_value("--size", &long, &format!("'{long}' is not a size"));
        assert!(f.error.to_string().chars().count() < 300, "{}", f.error);
    }
}
