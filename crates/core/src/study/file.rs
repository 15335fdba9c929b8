//! Study files: the same study as the flags, in TOML, with every key checked, every value of
//! the right type, and every error at the line it was written on.

use std::collections::BTreeMap;

use super::{parse_fraction, pick_baseline, StackDef, Study, StudyWorkload, Sweep, MAX_REPEAT};
use crate::doc::{self, join_key, Entry, Node, Place, Table, Value};
use crate::keys::{default_of, names, STUDY_KEYS};
use crate::ramp::{RampSpec, RAMP_KEY};
use crate::settings::{Origin, SettingError};

/// Reads a study file: `stacks = [...]`, `[[workload]]` tables (`name`, other keys are the
/// workload's settings, checked when the workload is planned), `sweep = ["zfs.recordsize=8k,128k"]`,
/// `repeat`, `baseline` (a stack, or the start of one), `min_effect` ("5%"), `size`,
/// `mem_limit`, `ramp` (every workload's, unless it has its own), `[[stack]]` tables.
pub fn parse_study(text: &str, path: &str) -> Result<Study, SettingError> {
    let place = Place::file(path);
    let doc = doc::parse(text, &place)?;
    doc.refuse_unknown(&place, "", &names(&[STUDY_KEYS]))?;
    let mut stacks: Vec<String> = strings(&doc, &place, "stacks")?
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let stack_defs = stack_tables(&doc, &place, &mut stacks)?;
    if stacks.is_empty() {
        let line = doc.get("stacks").map_or(1, |e| e.line);
        return Err(SettingError::new(
            place.at(line),
            "stacks",
            "a study needs at least one stack: stacks = [\"ext4\", \"xfs\"] or [[stack]] tables",
        ));
    }
    let sweeps = strings(&doc, &place, "sweep")?
        .into_iter()
        .map(|(text, line)| {
            let mut sweep =
                Sweep::parse(&text).map_err(|m| SettingError::new(place.at(line), "sweep", m))?;
            sweep.origin = place.at(line);
            Ok(sweep)
        })
        .collect::<Result<_, SettingError>>()?;
    let baseline = match doc.get("baseline") {
        None => None,
        Some(e) => {
            let wanted = e.string(&place, "baseline")?;
            let picked =
                pick_baseline(&stacks, &wanted).map_err(|m| e.error(&place, "baseline", m))?;
            Some(picked)
        }
    };
    let mut workloads = workloads(&doc, &place)?;
    study_ramp(&doc, &place, &mut workloads)?;
    Ok(Study {
        stacks,
        stack_defs,
        workloads,
        sweeps,
        repeat: repeat(&doc, &place)?,
        baseline,
        min_effect: min_effect(&doc, &place)?,
        size: size(&doc, &place)?,
        mem_limit: mem_limit(&doc, &place)?,
        crash_states: crash_states(&doc, &place)?,
    })
}

/// A list of strings, each with its line.
fn strings(doc: &Table, place: &Place, key: &str) -> Result<Vec<(String, usize)>, SettingError> {
    match doc.get(key) {
        None => Ok(Vec::new()),
        Some(entry) => entry.items(place, key, "strings", |n| match &n.value {
            Value::Str(s) => Some((s.clone(), n.line)),
            _ => None,
        }),
    }
}

/// `[[stack]]` tables (`name`, `spec`, `log`, `set = { key = value }`), appended to `stacks`
/// in the order written; a name may not repeat or be another stack's spec.
fn stack_tables(
    doc: &Table,
    place: &Place,
    stacks: &mut Vec<String>,
) -> Result<BTreeMap<String, StackDef>, SettingError> {
    let mut defs = BTreeMap::new();
    let Some(entry) = doc.get("stack") else {
        return Ok(defs);
    };
    for t in entry.items(place, "stack", "tables ([[stack]])", Node::table)? {
        t.refuse_unknown(place, "stack", &["name", "spec", "log", "set"])?;
        let required = |key: &str| match t.get(key) {
            Some(e) => e.string(place, &join_key("stack", key)),
            None => Err(SettingError::new(
                place.at(t.line),
                "stack",
                format!("needs {key} = \"...\" (name, spec; log and set are optional)"),
            )),
        };
        let (name, spec) = (required("name")?, required("spec")?);
        let log = match t.get("log") {
            Some(e) => Some(e.string(place, "stack.log")?),
            None => None,
        };
        let mut set = Vec::new();
        if let Some(e) = t.get("set") {
            for s in &e.table(place, "stack.set")?.entries {
                let label = join_key(&format!("stack.{name}.set"), &s.key);
                set.push((s.key.clone(), s.scalar(place, &label)?));
            }
        }
        if stacks.contains(&name) {
            let message = format!("\"{name}\" names two stacks; give each its own name");
            return Err(SettingError::new(place.at(t.line), "stack.name", message));
        }
        stacks.push(name.clone());
        defs.insert(name, StackDef { spec, log, set });
    }
    Ok(defs)
}

fn workloads(doc: &Table, place: &Place) -> Result<Vec<StudyWorkload>, SettingError> {
    let Some(entry) = doc.get("workload") else {
        return Err(SettingError::new(
            place.at(1),
            "workload",
            "a study needs at least one [[workload]] with a name",
        ));
    };
    let mut out = Vec::new();
    for t in entry.items(place, "workload", "tables ([[workload]])", Node::table)? {
        let name = match t.get("name") {
            Some(n) => n.string(place, "workload.name")?,
            None => {
                return Err(SettingError::new(
                    place.at(t.line),
                    "workload",
                    "needs a name = \"...\" (a built-in such as slob, or a workload file)",
                ))
            }
        };
        let (mut set, mut origins) = (Vec::new(), Vec::new());
        for e in t.entries.iter().filter(|e| e.key != "name") {
            let label = join_key(&format!("workload.{name}"), &e.key);
            set.push((e.key.clone(), e.scalar(place, &label)?));
            origins.push(place.at(e.line));
        }
        out.push(StudyWorkload { name, set, origins });
    }
    Ok(out)
}

/// The study's `ramp`, checked at its line, given to every workload without its own.
fn study_ramp(
    doc: &Table,
    place: &Place,
    workloads: &mut [StudyWorkload],
) -> Result<(), SettingError> {
    let Some(e) = doc.get(RAMP_KEY) else {
        return Ok(());
    };
    let text = e.string(place, RAMP_KEY)?;
    RampSpec::parse(&text).map_err(|m| e.error(place, RAMP_KEY, m))?;
    for w in workloads.iter_mut() {
        if !w.set.iter().any(|(k, _)| k == RAMP_KEY) {
            w.set.push((RAMP_KEY.to_string(), text.clone()));
            w.origins.push(place.at(e.line));
        }
    }
    Ok(())
}

fn repeat(doc: &Table, place: &Place) -> Result<u32, SettingError> {
    let Some(e) = doc.get("repeat") else {
        return Ok(default_of(STUDY_KEYS, "repeat").parse().unwrap_or(3));
    };
    match e.node.value {
        Value::Int(n) => u32::try_from(n)
            .ok()
            .filter(|r| (1..=MAX_REPEAT).contains(r))
            .ok_or_else(|| {
                e.error(
                    place,
                    "repeat",
                    format!("{n} is out of range (allowed 1 to {MAX_REPEAT})"),
                )
            }),
        _ => Err(e.wrong_kind(place, "repeat", "a whole number (repeat = 3)")),
    }
}

/// Crash states every run checks: a whole number from 1.
fn crash_states(doc: &Table, place: &Place) -> Result<Option<u32>, SettingError> {
    let Some(e) = doc.get("crash_states") else {
        return Ok(None);
    };
    match e.node.value {
        Value::Int(n) => u32::try_from(n)
            .ok()
            .filter(|&n| n >= 1)
            .map(Some)
            .ok_or_else(|| e.error(place, "crash_states", format!("{n}: give 1 or more"))),
        _ => Err(e.wrong_kind(place, "crash_states", "a whole number (crash_states = 200)")),
    }
}

fn min_effect(doc: &Table, place: &Place) -> Result<f64, SettingError> {
    let text = scalar_or_default(doc, place, "min_effect")?;
    parse_fraction(&text.0).map_err(|m| SettingError::new(text.1, "min_effect", m))
}

fn mem_limit(doc: &Table, place: &Place) -> Result<Option<String>, SettingError> {
    let Some(e) = doc.get("mem_limit") else {
        return Ok(None);
    };
    let text = scalar_not_bool(e, place, "mem_limit")?;
    crate::units::parse_size(&text).map_err(|m| e.error(place, "mem_limit", m))?;
    Ok(Some(text))
}

fn size(doc: &Table, place: &Place) -> Result<String, SettingError> {
    let (text, origin) = scalar_or_default(doc, place, "size")?;
    // `auto`: each stack sized to its cells' dataset, as `--size auto`.
    if text != "auto" {
        crate::units::parse_size(&text)
            .map_err(|m| SettingError::new(origin.clone(), "size", m))?;
    }
    Ok(text)
}

/// A scalar key's text and where it was written, or its documented default.
fn scalar_or_default(
    doc: &Table,
    place: &Place,
    key: &str,
) -> Result<(String, Origin), SettingError> {
    match doc.get(key) {
        Some(e) => Ok((scalar_not_bool(e, place, key)?, place.at(e.line))),
        None => Ok((
            default_of(STUDY_KEYS, key).to_string(),
            Origin::Default {
                workload: "study".into(),
            },
        )),
    }
}

fn scalar_not_bool(e: &Entry, place: &Place, key: &str) -> Result<String, SettingError> {
    match e.node.value {
        Value::Str(_) | Value::Int(_) | Value::Float(_) => e.scalar(place, key),
        _ => Err(e.wrong_kind(place, key, "text or a number")),
    }
}
