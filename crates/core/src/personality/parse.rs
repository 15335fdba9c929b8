//! Reads a personality's tables as written, keeping where every value was written.

use super::{Field, Fields, FilesetDef, ParamDef, PersonalityDef, RoleDef, StepDef};
use crate::doc::{join_key, Place, Table, Value};
use crate::settings::{Settings, SpecError};

/// The kinds of step, in the order a step's keys are tried.
const STEP_KINDS: [&str; 6] = ["io", "hog", "post", "wait", "commit", "sync"];

/// Reads `[params]`, `[[fileset]]` and `[[role]]` of a parsed document; `run` holds its
/// run-wide keys.
pub(crate) fn parse_personality(
    doc: &Table,
    place: &Place,
    run: Settings,
) -> Result<PersonalityDef, SpecError> {
    let filesets = tables(doc, place, "fileset")?
        .into_iter()
        .map(|t| fileset(t, place))
        .collect::<Result<_, _>>()?;
    let roles = tables(doc, place, "role")?
        .into_iter()
        .map(|t| role(t, place))
        .collect::<Result<_, _>>()?;
    Ok(PersonalityDef {
        params: params(doc, place)?,
        run,
        filesets,
        roles,
    })
}

fn params(doc: &Table, place: &Place) -> Result<Vec<ParamDef>, SpecError> {
    let Some(entry) = doc.get("params") else {
        return Ok(Vec::new());
    };
    let mut params = Vec::new();
    for p in &entry.table(place, "params")?.entries {
        let label = join_key("params", &p.key);
        let (default, help) = match &p.node.value {
            Value::Table(t) => {
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
fn tables<'a>(doc: &'a Table, place: &Place, key: &str) -> Result<Vec<&'a Table>, SpecError> {
    let Some(entry) = doc.get(key) else {
        return Ok(Vec::new());
    };
    entry
        .list(place, key)?
        .iter()
        .map(|n| match &n.value {
            Value::Table(t) => Ok(t),
            other => Err(SpecError::new(
                place.at(n.line),
                key,
                format!("each [[{key}]] must be a table, not {}", other.kind()),
            )),
        })
        .collect()
}

/// The `name` of a `[[fileset]]` or `[[role]]`, and the line it was written on.
fn name_of(t: &Table, place: &Place, what: &str) -> Result<(String, usize), SpecError> {
    let entry = t
        .get("name")
        .ok_or_else(|| SpecError::new(place.at(t.line), what, "needs a name = \"...\""))?;
    Ok((entry.string(place, &format!("{what}.name"))?, entry.line))
}

/// The scalar entries of `t` except `skip`; each is located at `line`.
fn fields(
    t: &Table,
    place: &Place,
    section: &str,
    line: usize,
    skip: &[&str],
) -> Result<Fields, SpecError> {
    let mut entries = Vec::new();
    for e in t.entries.iter().filter(|e| !skip.contains(&e.key.as_str())) {
        let text = e.scalar(place, &join_key(section, &e.key))?;
        let origin = place.at(line);
        entries.push((e.key.clone(), Field { text, origin }));
    }
    Ok(Fields {
        section: section.to_string(),
        origin: place.at(line),
        entries,
    })
}

fn fileset(t: &Table, place: &Place) -> Result<FilesetDef, SpecError> {
    let (name, line) = name_of(t, place, "fileset")?;
    let section = format!("fileset.{name}");
    Ok(FilesetDef {
        fields: fields(t, place, &section, line, &["name"])?,
        name,
    })
}

fn role(t: &Table, place: &Place) -> Result<RoleDef, SpecError> {
    let (name, line) = name_of(t, place, "role")?;
    let section = format!("role.{name}");
    let gate = match t.get("gate") {
        None => None,
        Some(g) => {
            let label = format!("{section}.gate");
            Some(fields(g.table(place, &label)?, place, &label, line, &[])?)
        }
    };
    let mut steps = Vec::new();
    if let Some(entry) = t.get("steps") {
        for (i, node) in entry
            .list(place, &format!("{section}.steps"))?
            .iter()
            .enumerate()
        {
            let step_section = format!("{section}.steps[{i}]");
            let Value::Table(st) = &node.value else {
                return Err(SpecError::new(
                    place.at(node.line),
                    &step_section,
                    format!("a step is a table, not {}", node.value.kind()),
                ));
            };
            steps.push(step(st, place, &step_section, line)?);
        }
    }
    Ok(RoleDef {
        fields: fields(t, place, &section, line, &["name", "gate", "steps"])?,
        name,
        gate,
        steps,
    })
}

fn step(t: &Table, place: &Place, section: &str, line: usize) -> Result<StepDef, SpecError> {
    let kind = STEP_KINDS
        .into_iter()
        .find(|k| t.get(k).is_some())
        .ok_or_else(|| {
            SpecError::new(
                place.at(line),
                section,
                "unknown step (use io, hog, post, wait, commit or sync)",
            )
        })?;
    let mut targets = Vec::new();
    if let Some(post) = t.get("post") {
        for node in post.list(place, &format!("{section}.post"))? {
            let text = node.text().ok_or_else(|| {
                post.error(
                    place,
                    &format!("{section}.post"),
                    "post takes a list of role names",
                )
            })?;
            targets.push(Field {
                text,
                origin: place.at(line),
            });
        }
    }
    Ok(StepDef {
        kind,
        fields: fields(t, place, section, line, &["post"])?,
        targets,
    })
}
