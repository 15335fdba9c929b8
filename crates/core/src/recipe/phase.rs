//! One phase of a recipe as checked: what it runs (a command or a built-in action) and how
//! (instances, stagger, directory, environment, timeout), and the keys and actions a
//! `[[phase]]` table may name.

use crate::keys::{doc as key, KeyDoc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Component;
use std::time::Duration;

/// Most instances of one phase.
pub const MAX_PARALLEL: u32 = 64;

/// The keys of a `[[phase]]` table.
pub const PHASE_KEYS: &[KeyDoc] = &[
    key(
        "name",
        "",
        "the phase's name (unique in the recipe; letters, digits, . _ -)",
    ),
    key(
        "run",
        "",
        "a shell command, run by /bin/sh -c (give run or action)",
    ),
    key(
        "action",
        "",
        "a built-in action instead of a command (see ACTIONS)",
    ),
    key("with", "", "an action's arguments: { key = value, ... }"),
    key(
        "parallel",
        "1",
        "instances run at once, each in its own inst-K/ directory",
    ),
    key(
        "stagger",
        "0s",
        "time between the starts of the instances (parallel > 1)",
    ),
    key(
        "cwd",
        "",
        "directory under the stack's mount to run in (relative; made if missing)",
    ),
    key(
        "env",
        "",
        "environment variables: { NAME = \"value\", ... }",
    ),
    key(
        "timeout",
        "",
        "stop the phase (and fail the run) after this long",
    ),
];

/// The built-in actions a phase can name (`action = "sync"`). Adding one is an entry here and
/// its arm in the runner (`crates/bakeoff/src/commands/phases/action.rs`).
pub const ACTIONS: &[KeyDoc] = &[
    key(
        "sync",
        "",
        "sync(2): writes every dirty page back; times the write-back",
    ),
    key(
        "cold",
        "",
        "the stack's cold-cache rule: sync, drop the page cache, re-import a ZFS pool",
    ),
];

/// What a phase does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseWork {
    /// A shell command (`/bin/sh -c TEXT`).
    Shell(String),
    /// A program and its arguments (`bakeoff exec -- CMD ARGS`).
    Argv(Vec<String>),
    /// A built-in action with its arguments.
    Action {
        /// Its name, one of [`ACTIONS`].
        name: String,
        /// Its `with` table.
        with: BTreeMap<String, String>,
    },
}

impl PhaseWork {
    /// How the run record and the terminal show it: the shell text, the argv quoted as a
    /// shell would need it, or `action NAME key=value ...`.
    pub fn describe(&self) -> String {
        match self {
            PhaseWork::Shell(text) => text.clone(),
            PhaseWork::Argv(argv) => argv
                .iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
            PhaseWork::Action { name, with } => {
                let args = with.iter().map(|(k, v)| format!(" {k}={v}"));
                format!("action {name}{}", args.collect::<String>())
            }
        }
    }
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// One phase, checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseDef {
    /// Its name.
    pub name: String,
    /// What it does.
    pub work: PhaseWork,
    /// Instances run at once (1: the phase runs in `cwd` itself; more: in `cwd/inst-K`).
    pub parallel: u32,
    /// Time between the instances' starts.
    pub stagger: Duration,
    /// Directory under the mount, relative; `None`: the mount itself.
    pub cwd: Option<String>,
    /// Environment variables of its commands (after the recipe's params).
    pub env: Vec<(String, String)>,
    /// Longest it may take; past it the phase is stopped and the run fails.
    pub timeout: Option<Duration>,
}

/// Refuses a working directory that is not a relative path under the mount (absolute, or
/// with `..`): a phase's `cwd` and `bakeoff exec --cwd`.
pub fn check_cwd(text: &str) -> Result<(), String> {
    let inside = std::path::Path::new(text)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if text.is_empty() || !inside {
        return Err(format!(
            "\"{text}\" must be a relative directory under the stack's mount, without .."
        ));
    }
    Ok(())
}

/// Refuses a number of instances outside 1 to [`MAX_PARALLEL`].
pub fn check_parallel(n: i64) -> Result<u32, String> {
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=MAX_PARALLEL).contains(n))
        .ok_or_else(|| format!("{n} is out of range (1 to {MAX_PARALLEL})"))
}
