//! Recipes: named phases run in order on a stack, each timed and accounted like a run (seed
//! 001's bringover and builds, seed 002's database creation, load, indexes and queries).
//!
//! A recipe is TOML: an optional `description`, `[params]` (declared keys with defaults, which
//! `--set` overrides and every phase gets as environment variables of the same name), and one
//! `[[phase]]` table per phase. A phase either runs a shell command (`run`, a string given to
//! `/bin/sh -c`, as a Makefile or a CI step does) or a built-in action (`action`, see
//! [`ACTIONS`]), with `parallel`, `stagger`, `cwd`, `env` and `timeout`. Reading one is pure: a
//! file is checked key by key with every error at its `file:line`; nothing runs until the user
//! names the recipe on the command line (its commands are theirs).

use crate::doc::{self, Entry, Node, Place, Table};
use crate::job::KeyDoc;
use crate::settings::{SettingError, Settings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Component;
use std::time::Duration;

/// Built-in recipes: name and TOML text (`recipes/<name>.toml`).
const BUILTINS: &[(&str, &str)] = &[("build", include_str!("../../../recipes/build.toml"))];

/// Most instances of one phase.
pub const MAX_PARALLEL: u32 = 64;

use crate::keys::doc as key;

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

/// A recipe as written: a built-in or a user's file.
#[derive(Clone, Debug)]
pub struct Recipe {
    /// Name (`build`, or the file's stem).
    pub name: String,
    /// One line saying what it does.
    pub description: String,
    /// The TOML it was read from.
    pub source: String,
    /// The file it was read from; `None` for a built-in.
    pub path: Option<String>,
    /// Declared parameters and their defaults, in the order written.
    pub params: Vec<(String, String)>,
    /// The phases, in order.
    pub phases: Vec<PhaseDef>,
}

/// A recipe with its parameters resolved: what a run executes and records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecipePlan {
    /// The recipe's name (`exec` for `bakeoff exec`).
    pub recipe: String,
    /// Every parameter's value (defaults with `--set` applied).
    pub params: BTreeMap<String, String>,
    /// The phases, in order.
    pub phases: Vec<PhaseDef>,
}

/// The built-in recipes' names.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(name, _)| *name)
}

/// The built-in recipes.
pub fn builtins() -> Vec<Recipe> {
    BUILTINS
        .iter()
        .map(|(name, text)| {
            Recipe::parse(name, text, &format!("<builtin {name}>"))
                .unwrap_or_else(|e| panic!("built-in recipe {name} is invalid: {e}"))
        })
        .collect()
}

/// The built-in recipe called `name`.
pub fn builtin(name: &str) -> Option<Recipe> {
    builtins().into_iter().find(|r| r.name == name)
}

/// True if `text` is a recipe rather than a workload: it has `[[phase]]` tables. A file that
/// does not parse is not a recipe (the workload reader then names its error).
pub fn is_recipe_text(text: &str) -> bool {
    doc::parse(text, &Place::file("-")).is_ok_and(|d| d.get("phase").is_some())
}

impl Recipe {
    /// Parses a recipe. `path` is used in error messages (`<builtin NAME>` for a built-in).
    pub fn parse(name: &str, text: &str, path: &str) -> Result<Recipe, SettingError> {
        let place = if path.starts_with("<builtin") {
            Place::builtin(name)
        } else {
            Place::file(path)
        };
        let doc = doc::parse(text, &place)?;
        doc.refuse_unknown(&place, "", &["description", "params", "phase"])?;
        let description = match doc.get("description") {
            Some(d) => d.string(&place, "description")?,
            None => String::new(),
        };
        let params = match doc.get("params") {
            Some(e) => scalars(e, &place, "params", true)?,
            None => Vec::new(),
        };
        let Some(entry) = doc.get("phase") else {
            let message = "a recipe needs at least one [[phase]] with a name and run or action";
            return Err(SettingError::new(place.at(1), "phase", message));
        };
        let mut phases: Vec<PhaseDef> = Vec::new();
        for t in entry.items(&place, "phase", "tables ([[phase]])", Node::table)? {
            let phase = crate::recipe_parse::phase(t, &place)?;
            if phases.iter().any(|p| p.name == phase.name) {
                let message = format!("\"{}\" names two phases; give each its own", phase.name);
                return Err(SettingError::new(place.at(t.line), "phase.name", message));
            }
            phases.push(phase);
        }
        Ok(Recipe {
            name: name.to_string(),
            description,
            source: text.to_string(),
            path: place.is_file().then(|| path.to_string()),
            params,
            phases,
        })
    }

    /// Applies `user` settings to the declared parameters (a key the recipe does not declare
    /// is refused, naming those it does). No side effects.
    pub fn plan(&self, user: &Settings) -> Result<RecipePlan, SettingError> {
        let mut params: BTreeMap<String, String> = self.params.iter().cloned().collect();
        for (k, setting) in user.iter() {
            let Some(value) = params.get_mut(k) else {
                let declared: Vec<&str> = self.params.iter().map(|(k, _)| k.as_str()).collect();
                let allowed = match declared.is_empty() {
                    true => format!("recipe '{}' declares no parameters", self.name),
                    false => format!("recipe '{}' declares: {}", self.name, declared.join(", ")),
                };
                return Err(SettingError::new(
                    setting.origin.clone(),
                    k.as_str(),
                    format!("unknown parameter ({allowed})"),
                ));
            };
            *value = setting.value.clone();
        }
        Ok(RecipePlan {
            recipe: self.name.clone(),
            params,
            phases: self.phases.clone(),
        })
    }
}

impl RecipePlan {
    /// The plan of `bakeoff exec`: one phase, `exec`, running `argv`.
    pub fn exec(phase: PhaseDef) -> RecipePlan {
        RecipePlan {
            recipe: "exec".into(),
            params: BTreeMap::new(),
            phases: vec![phase],
        }
    }
}

/// A table of scalars (`[params]`, `env`, `with`) as (key, text) pairs in the order written;
/// the keys of all but `with` become environment variables, so must be names a shell exports.
pub(crate) fn scalars(
    entry: &Entry,
    place: &Place,
    label: &str,
    env_names: bool,
) -> Result<Vec<(String, String)>, SettingError> {
    let table: &Table = entry.table(place, label)?;
    let mut out = Vec::new();
    for e in &table.entries {
        let what = doc::join_key(label, &e.key);
        if env_names && !is_env_name(&e.key) {
            let message = "not an environment variable name (letters, digits and _, not \
                           starting with a digit)";
            return Err(e.error(place, &what, message));
        }
        out.push((e.key.clone(), e.scalar(place, &what)?));
    }
    Ok(out)
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

/// `[A-Za-z_][A-Za-z0-9_]*`: what a shell exports.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "recipe_tests.rs"]
mod tests;
