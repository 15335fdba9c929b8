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

use crate::doc::{self, Node, Place};
use crate::settings::{SettingError, Settings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod parse;
mod phase;
pub use phase::{
    check_cwd, check_parallel, PhaseDef, PhaseWork, ACTIONS, MAX_PARALLEL, PHASE_KEYS,
};

/// Built-in recipes: name and TOML text (`recipes/<name>.toml`).
const BUILTINS: &[(&str, &str)] = &[("build", include_str!("../../../recipes/build.toml"))];

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
            Some(e) => parse::scalars(e, &place, "params", true)?,
            None => Vec::new(),
        };
        let Some(entry) = doc.get("phase") else {
            let message = "a recipe needs at least one [[phase]] with a name and run or action";
            return Err(SettingError::new(place.at(1), "phase", message));
        };
        let mut phases: Vec<PhaseDef> = Vec::new();
        for t in entry.items(&place, "phase", "tables ([[phase]])", Node::table)? {
            let phase = parse::phase(t, &place)?;
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

#[cfg(test)]
mod tests;
