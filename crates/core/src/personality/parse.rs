//! Reads a personality's tables as written, keeping where every value was written.

use super::{Field, Fields, FilesetDef, ParamDef, PersonalityDef, RoleDef, StepDef};
use crate::doc::{join_key, Entry, Node, Place, Table, Value};
use crate::keys::{
    names, step_companions, DBWRITER_KEYS, FILESET_KEYS, GATE_KEYS, LOGWRITER_KEYS, PARAM_KEYS,
    ROLE_KEYS, RUN_KEYS, STEP_KINDS,
};
use crate::settings::{echo, SettingError, Settings};

/// Longest fileset or role name: it becomes part of file names and messages.
const MAX_NAME_CHARS: usize = 64;

/// Reads `[params]`, `[[fileset]]` and `[[role]]` of a parsed document whose top-level keys
/// the caller checked; `run` holds its run-wide keys. Every key of every table is checked
/// against its [`crate::keys`] table, so nothing written is ignored.
pub(crate) fn parse_personality(
    doc: &Table,
    place: &Place,
    run: Settings,
) -> Result<PersonalityDef, SettingError> {
    let params = params(doc, place)?;
    let declared: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let fileset_tables = tables(doc, place, "fileset")?;
    refuse_duplicates(&fileset_tables, place, "fileset")?;
    let filesets: Vec<FilesetDef> = fileset_tables
        .into_iter()
        .map(|t| fileset(t, place, &declared))
        .collect::<Result<_, _>>()?;
    let role_tables = tables(doc, place, "role")?;
    refuse_duplicates(&role_tables, place, "role")?;
    let roles: Vec<RoleDef> = role_tables
        .into_iter()
        .map(|t| role(t, place, &declared))
        .collect::<Result<_, _>>()?;
    if roles.is_empty() {
        let first = ["params", "fileset", "role"]
            .iter()
            .find_map(|k| doc.get(k))
            .map_or(1, |e| e.line);
        return Err(SettingError::new(
            place.at(first),
            "role",
            "a personality needs at least one [[role]] (a file with no params, filesets or \
             roles is a plain job)",
        ));
    }
    Ok(PersonalityDef {
        params,
        run,
        filesets,
        roles,
    })
}

fn params(doc: &Table, place: &Place) -> Result<Vec<ParamDef>, SettingError> {
    let Some(entry) = doc.get("params") else {
        return Ok(Vec::new());
    };
    let mut params = Vec::new();
    for p in &entry.table(place, "params")?.entries {
        let label = join_key("params", &p.key);
        if names(&[RUN_KEYS]).contains(&p.key.as_str()) {
            return Err(p.error(
                place,
                &label,
                "a parameter cannot be named like a key every workload takes (engine, runtime, \
                 ramp_time, ramp_max, ss, ss_dur, seed, buffer_compress_percentage, clients, \
                 verify)",
            ));
        }
        let (default, help) = match &p.node.value {
            Value::Table(t) => {
                t.refuse_unknown(place, &label, &names(&[PARAM_KEYS]))?;
                let default = match t.get("default") {
                    Some(d) => d.scalar(place, &format!("{label}.default"))?,
                    None => return Err(p.error(place, &label, "a parameter needs a default")),
                };
                let help = match t.get("help") {
                    Some(h) => h.string(place, &format!("{label}.help"))?,
                    None => String::new(),
                };
                (default, help)
            }
            _ => (p.scalar(place, &label)?, String::new()),
        };
        params.push(ParamDef {
            name: p.key.clone(),
            default,
            help,
        });
    }
    Ok(params)
}

/// The tables of `[[key]]`.
fn tables<'a>(doc: &'a Table, place: &Place, key: &str) -> Result<Vec<&'a Table>, SettingError> {
    match doc.get(key) {
        None => Ok(Vec::new()),
        Some(entry) => entry.items(place, key, &format!("tables ([[{key}]])"), Node::table),
    }
}

/// The `name` of a `[[fileset]]` or `[[role]]`, usable in file names and messages, and the
/// line it was written on.
fn name_of(t: &Table, place: &Place, what: &str) -> Result<(String, usize), SettingError> {
    let entry = t
        .get("name")
        .ok_or_else(|| SettingError::new(place.at(t.line), what, "needs a name = \"...\""))?;
    let label = format!("{what}.name");
    let name = entry.string(place, &label)?;
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || !name.chars().all(valid) {
        return Err(entry.error(
            place,
            &label,
            format!(
                "'{}' is not a name: use 1 to {MAX_NAME_CHARS} letters, digits, '_' or '-'",
                echo(&name)
            ),
        ));
    }
    Ok((name, entry.line))
}

/// Refuses a second table with the same name.
fn refuse_duplicates(tables: &[&Table], place: &Place, what: &str) -> Result<(), SettingError> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for t in tables {
        let (name, line) = name_of(t, place, what)?;
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
            return Err(SettingError::new(
                place.at(line),
                format!("{what}.name"),
                format!(
                    "a second {what} named '{name}' (the first is at line {first}): names must \
                     differ"
                ),
            ));
        }
        seen.push((name, line));
    }
    Ok(())
}

/// The scalar entries of `t` except `skip`, each located at its own line; `$param`
/// placeholders must name a `declared` parameter.
fn fields(
    t: &Table,
    place: &Place,
    section: &str,
    skip: &[&str],
    declared: &[&str],
) -> Result<Fields, SettingError> {
    let mut entries = Vec::new();
    for e in t.entries.iter().filter(|e| !skip.contains(&e.key.as_str())) {
        let label = join_key(section, &e.key);
        let field = field(e, place, &label, declared)?;
        entries.push((e.key.clone(), field));
    }
    Ok(Fields {
        section: section.to_string(),
        origin: place.at(t.line),
        entries,
    })
}

fn field(e: &Entry, place: &Place, label: &str, declared: &[&str]) -> Result<Field, SettingError> {
    let text = e.scalar(place, label)?;
    let field = Field {
        text,
        origin: place.at(e.line),
    };
    if let Some(param) = field.param() {
        if !declared.contains(&param) {
            return Err(e.error(
                place,
                label,
                format!(
                    "refers to undeclared parameter ${} (declared in [params]: {})",
                    echo(param),
                    declared.join(", ")
                ),
            ));
        }
    }
    Ok(field)
}

fn fileset(t: &Table, place: &Place, declared: &[&str]) -> Result<FilesetDef, SettingError> {
    let (name, _) = name_of(t, place, "fileset")?;
    let section = format!("fileset.{name}");
    t.refuse_unknown(place, &section, &names(&[FILESET_KEYS]))?;
    Ok(FilesetDef {
        fields: fields(t, place, &section, &["name"], declared)?,
        name,
    })
}

fn role(t: &Table, place: &Place, declared: &[&str]) -> Result<RoleDef, SettingError> {
    let (name, _) = name_of(t, place, "role")?;
    let section = format!("role.{name}");
    t.refuse_unknown(place, &section, &names(&[ROLE_KEYS]))?;
    let writer_keys = match t.get("kind").and_then(|k| k.node.text()).as_deref() {
        Some("logwriter") => Some(("logwriter", LOGWRITER_KEYS, "the redo that commit steps")),
        Some("dbwriter") => Some(("dbwriter", DBWRITER_KEYS, "the blocks that dirty steps")),
        _ => None,
    };
    if let Some((kind, allowed, what)) = writer_keys {
        if let Some(e) = t
            .entries
            .iter()
            .find(|e| !allowed.contains(&e.key.as_str()))
        {
            return Err(e.error(
                place,
                &join_key(&section, &e.key),
                format!(
                    "does not apply to a {kind} role: it writes {what} hand it (allowed: {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    let gate = match t.get("gate") {
        None => None,
        Some(g) => {
            let label = format!("{section}.gate");
            let table = g.table(place, &label)?;
            table.refuse_unknown(place, &label, &names(&[GATE_KEYS]))?;
            Some(fields(table, place, &label, &[], declared)?)
        }
    };
    let mut steps = Vec::new();
    if let Some(entry) = t.get("steps") {
        let label = format!("{section}.steps");
        for (i, st) in entry
            .items(place, &label, "step tables", Node::table)?
            .into_iter()
            .enumerate()
        {
            steps.push(step(st, place, &format!("{label}[{i}]"), declared)?);
        }
    }
    Ok(RoleDef {
        fields: fields(t, place, &section, &["name", "gate", "steps"], declared)?,
        name,
        gate,
        steps,
    })
}

fn step(
    t: &Table,
    place: &Place,
    section: &str,
    declared: &[&str],
) -> Result<StepDef, SettingError> {
    let mut kinds = STEP_KINDS
        .into_iter()
        .filter_map(|k| t.get(k).map(|e| (k, e)));
    let Some((kind, entry)) = kinds.next() else {
        return Err(SettingError::new(
            place.at(t.line),
            section,
            "a step needs one of io, file, hog, post, wait, commit, sync, aiowait or dirty",
        ));
    };
    if let Some((other, e)) = kinds.next() {
        return Err(e.error(
            place,
            &join_key(section, other),
            format!("a step does one thing: this one has both {kind} and {other} (make two steps)"),
        ));
    }
    let mut allowed = vec![kind];
    allowed.extend(step_companions(kind));
    t.refuse_unknown(place, section, &allowed)?;
    let label = join_key(section, kind);
    let mut targets = Vec::new();
    match kind {
        "wait" | "aiowait" if entry.node.value != Value::Bool(true) => {
            return Err(entry.error(place, &label, format!("write {kind} = true")));
        }
        "post" => {
            let names = entry.items(place, &label, "role names", |n| match &n.value {
                Value::Str(text) => Some(Field {
                    text: text.clone(),
                    origin: place.at(n.line),
                }),
                _ => None,
            })?;
            targets.extend(names);
        }
        _ => {}
    }
    Ok(StepDef {
        kind,
        fields: fields(t, place, section, &["post"], declared)?,
        targets,
    })
}
