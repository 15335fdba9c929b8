//! Reading a recipe's tables: one `[[phase]]` checked key by key (every error names the
//! phase's key and the line it was written on, and a key that would be ignored is refused),
//! and the tables of scalars (`[params]`, a phase's `env` and `with`).

use super::phase::{check_cwd, check_parallel, PhaseDef, PhaseWork, ACTIONS, PHASE_KEYS};
use crate::doc::{join_key, Entry, Place, Table};
use crate::settings::SettingError;
use std::time::Duration;

/// Longest phase name: it heads a table column and a report row.
const MAX_NAME: usize = 64;

/// Reads and checks one phase.
pub(crate) fn phase(t: &Table, place: &Place) -> Result<PhaseDef, SettingError> {
    let allowed: Vec<&str> = PHASE_KEYS.iter().map(|k| k.key).collect();
    t.refuse_unknown(place, "phase", &allowed)?;
    let name = name(t, place)?;
    let section = format!("phase.{name}");
    let label = |k: &str| join_key(&section, k);
    let work = work(t, place, &name)?;
    let parallel = match t.get("parallel") {
        None => 1,
        Some(e) => parallel(e, place, &label("parallel"))?,
    };
    let stagger = match t.get("stagger") {
        None => Duration::ZERO,
        Some(e) if parallel < 2 => {
            let message = "needs parallel = 2 or more (it is the time between instances)";
            return Err(e.error(place, &label("stagger"), message));
        }
        Some(e) => duration(e, place, &label("stagger"))?,
    };
    let cwd = t
        .get("cwd")
        .map(|e| cwd(e, place, &label("cwd")))
        .transpose()?;
    let env = match t.get("env") {
        Some(e) => scalars(e, place, &label("env"), true)?,
        None => Vec::new(),
    };
    let timeout = match t.get("timeout") {
        None => None,
        Some(e) => match duration(e, place, &label("timeout"))? {
            d if d.is_zero() => return Err(e.error(place, &label("timeout"), "must be above 0")),
            d => Some(d),
        },
    };
    if matches!(work, PhaseWork::Action { .. }) {
        // An action runs inside bakeoff, once: these would be ignored.
        let ignored = ["parallel", "stagger", "cwd", "env", "timeout"];
        if let Some(e) = ignored.iter().find_map(|k| t.get(k)) {
            let message = "applies to commands (run = ...), not to a built-in action";
            return Err(e.error(place, &label(&e.key), message));
        }
    }
    Ok(PhaseDef {
        name,
        work,
        parallel,
        stagger,
        cwd,
        env,
        timeout,
    })
}

fn name(t: &Table, place: &Place) -> Result<String, SettingError> {
    let Some(e) = t.get("name") else {
        let message = "needs a name = \"...\" (and run = \"command\" or action = \"...\")";
        return Err(SettingError::new(place.at(t.line), "phase", message));
    };
    let name = e.string(place, "phase.name")?;
    let ok = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(ok) {
        let message =
            format!("\"{name}\": 1 to {MAX_NAME} letters, digits, '.', '_' or '-' (build-1)");
        return Err(e.error(place, "phase.name", message));
    }
    Ok(name)
}

/// `run` or `action` (with its `with`), exactly one of them.
fn work(t: &Table, place: &Place, name: &str) -> Result<PhaseWork, SettingError> {
    let label = |k: &str| join_key(&format!("phase.{name}"), k);
    match (t.get("run"), t.get("action")) {
        (Some(run), Some(_)) => {
            Err(run.error(place, &label("run"), "give run or action, not both"))
        }
        (None, None) => Err(SettingError::new(
            place.at(t.line),
            format!("phase.{name}"),
            "needs run = \"command\" or action = \"...\"",
        )),
        (Some(run), None) => {
            if let Some(w) = t.get("with") {
                return Err(w.error(place, &label("with"), "is for actions; a command takes env"));
            }
            let text = run.string(place, &label("run"))?;
            if text.trim().is_empty() {
                return Err(run.error(place, &label("run"), "is empty"));
            }
            Ok(PhaseWork::Shell(text))
        }
        (None, Some(action)) => {
            let action_name = action.string(place, &label("action"))?;
            if !ACTIONS.iter().any(|a| a.key == action_name) {
                let known: Vec<&str> = ACTIONS.iter().map(|a| a.key).collect();
                let message = format!(
                    "unknown action \"{action_name}\" (known: {})",
                    known.join(", ")
                );
                return Err(action.error(place, &label("action"), message));
            }
            let with = match t.get("with") {
                Some(w) => scalars(w, place, &label("with"), false)?,
                None => Vec::new(),
            };
            Ok(PhaseWork::Action {
                name: action_name,
                with: with.into_iter().collect(),
            })
        }
    }
}

fn parallel(e: &Entry, place: &Place, label: &str) -> Result<u32, SettingError> {
    let crate::doc::Value::Int(n) = e.node.value else {
        return Err(e.wrong_kind(place, label, "a whole number (parallel = 2)"));
    };
    check_parallel(n).map_err(|m| e.error(place, label, m))
}

fn duration(e: &Entry, place: &Place, label: &str) -> Result<Duration, SettingError> {
    let text = e.scalar(place, label)?;
    crate::units::parse_duration(&text).map_err(|m| e.error(place, label, m))
}

/// A relative directory under the mount ([`check_cwd`]).
fn cwd(e: &Entry, place: &Place, label: &str) -> Result<String, SettingError> {
    let text = e.string(place, label)?;
    check_cwd(&text).map_err(|m| e.error(place, label, m))?;
    Ok(text)
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
        let what = join_key(label, &e.key);
        if env_names && !is_env_name(&e.key) {
            let message = "not an environment variable name (letters, digits and _, not \
                           starting with a digit)";
            return Err(e.error(place, &what, message));
        }
        out.push((e.key.clone(), e.scalar(place, &what)?));
    }
    Ok(out)
}

/// `[A-Za-z_][A-Za-z0-9_]*`: what a shell exports.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
