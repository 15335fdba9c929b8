//! Workload definitions as data: a plain job in fio's vocabulary (flat `key = value` TOML) or a
//! personality (declared `[params]`, `[[fileset]]` and `[[role]]` tables). Built-ins are the
//! TOML files under `personalities/`, embedded at build time.

use crate::plan::Plan;
use crate::settings::{toml_error, Origin, Settings, SpecError};

/// Built-in workloads: name and TOML text. Adding one is one file plus one line here.
const BUILTINS: &[(&str, &str)] = &[
    (
        "randread",
        include_str!("../../../personalities/randread.toml"),
    ),
    (
        "randwrite",
        include_str!("../../../personalities/randwrite.toml"),
    ),
    ("randrw", include_str!("../../../personalities/randrw.toml")),
    ("read", include_str!("../../../personalities/read.toml")),
    ("write", include_str!("../../../personalities/write.toml")),
    ("slob", include_str!("../../../personalities/slob.toml")),
    ("oltp", include_str!("../../../personalities/oltp.toml")),
];

/// The body of a workload.
#[derive(Clone, Debug)]
pub enum Body {
    /// A plain job: its settings are fio keys (see [`crate::job::JOB_KEYS`]).
    Job(Settings),
    /// A personality: parameters, filesets and roles.
    Personality(PersonalityDef),
}

/// A personality as written: its tables still hold `$param` placeholders.
#[derive(Clone, Debug)]
pub struct PersonalityDef {
    /// Declared parameters with their defaults and help.
    pub params: Vec<ParamDef>,
    /// Run-wide keys given by the personality (e.g. `runtime`).
    pub run: Settings,
    /// `[[fileset]]` tables.
    pub filesets: Vec<toml::Table>,
    /// `[[role]]` tables.
    pub roles: Vec<toml::Table>,
}

/// A declared personality parameter.
#[derive(Clone, Debug)]
pub struct ParamDef {
    /// Name, used as `$name` in tables and as `--set name=...`.
    pub name: String,
    /// Default value as text.
    pub default: String,
    /// One line of help.
    pub help: String,
}

/// A workload definition: a built-in or a user's file.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Name (`slob`, or the file's stem).
    pub name: String,
    /// One line saying what it models.
    pub description: String,
    /// The TOML it was read from (printed by `bakeoff workloads show`).
    pub source: String,
    /// Job or personality.
    pub body: Body,
    /// The file it was read from; `None` for a built-in.
    pub path: Option<String>,
}

/// Names and descriptions of the built-in workloads.
pub fn builtins() -> Vec<Workload> {
    BUILTINS
        .iter()
        .map(|(name, text)| {
            Workload::parse(name, text, &format!("<builtin {name}>"))
                .unwrap_or_else(|e| panic!("built-in workload {name} is invalid: {e}"))
        })
        .collect()
}

/// The built-in workload called `name`.
pub fn builtin(name: &str) -> Option<Workload> {
    builtins().into_iter().find(|w| w.name == name)
}

impl Workload {
    /// Parses a workload TOML document. `path` is used in error messages.
    pub fn parse(name: &str, text: &str, path: &str) -> Result<Workload, SpecError> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| toml_error(&e, text, path))?;
        let description = doc
            .get("description")
            .and_then(|d| d.as_str())
            .unwrap_or("")
            .to_string();
        let tables = ["description", "params", "fileset", "role"];
        let mut top = Settings::from_toml(text, path, &tables)?;
        let body = if doc.contains_key("role") {
            Body::Personality(parse_personality(&doc, path, std::mem::take(&mut top))?)
        } else {
            Body::Job(top)
        };
        Ok(Workload {
            name: name.to_string(),
            description,
            source: text.to_string(),
            body,
            path: (!path.starts_with("<builtin")).then(|| path.to_string()),
        })
    }

    /// Validates `user` settings against this workload and resolves the plan. No side effects.
    pub fn plan(&self, user: &Settings) -> Result<Plan, SpecError> {
        match &self.body {
            Body::Job(defaults) => {
                let mut merged = self.defaults_as(defaults);
                merged.merge(user);
                crate::job::plan_job(&self.name, &merged)
            }
            Body::Personality(def) => crate::expand::plan_personality(self, def, user),
        }
    }

    /// Re-labels a workload's own settings as its defaults, so errors say where they came from.
    fn defaults_as(&self, settings: &Settings) -> Settings {
        let mut out = Settings::default();
        for (k, s) in settings.iter() {
            let origin = match &s.origin {
                Origin::File { path, .. } if path.starts_with("<builtin") => Origin::Default {
                    workload: self.name.clone(),
                },
                other => other.clone(),
            };
            out.insert(k, &s.value, origin);
        }
        out
    }
}

fn parse_personality(
    doc: &toml::Table,
    path: &str,
    run: Settings,
) -> Result<PersonalityDef, SpecError> {
    let at = |key: &str, msg: String| {
        SpecError::new(
            Origin::File {
                path: path.to_string(),
                line: 1,
            },
            key,
            msg,
        )
    };
    let mut params = Vec::new();
    if let Some(table) = doc.get("params").and_then(|p| p.as_table()) {
        for (name, value) in table {
            let (default, help) = match value {
                toml::Value::Table(t) => (
                    t.get("default").and_then(crate::settings::value_text),
                    t.get("help").and_then(|h| h.as_str()).unwrap_or(""),
                ),
                other => (crate::settings::value_text(other), ""),
            };
            let default = default.ok_or_else(|| {
                at(
                    &format!("params.{name}"),
                    "a parameter needs a scalar default".into(),
                )
            })?;
            params.push(ParamDef {
                name: name.clone(),
                default,
                help: help.to_string(),
            });
        }
    }
    let tables = |key: &str| -> Result<Vec<toml::Table>, SpecError> {
        match doc.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_table()
                        .cloned()
                        .ok_or_else(|| at(key, format!("each [[{key}]] must be a table")))
                })
                .collect(),
            Some(_) => Err(at(key, format!("write [[{key}]] tables"))),
        }
    };
    Ok(PersonalityDef {
        params,
        run,
        filesets: tables("fileset")?,
        roles: tables("role")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_plans_with_defaults() {
        for w in builtins() {
            assert!(!w.description.is_empty(), "{} lacks a description", w.name);
            let plan = w
                .plan(&Settings::default())
                .unwrap_or_else(|e| panic!("{}: {e}", w.name));
            assert!(plan.threads() > 0);
            assert!(plan.dataset_bytes() > 0);
        }
    }

    #[test]
    fn errors_in_a_users_personality_name_the_role_line() {
        let text = builtin("slob")
            .unwrap()
            .source
            .replace("io = \"randread\"", "io = \"sideways\"");
        let w = Workload::parse("mine", &text, "mine.toml").unwrap();
        let e = w.plan(&Settings::default()).unwrap_err();
        let line = text
            .lines()
            .position(|l| l.trim() == "name = \"reader\"")
            .unwrap()
            + 1;
        assert_eq!(e.origin.to_string(), format!("mine.toml:{line}"), "{e}");
        assert!(e.message.contains("allowed: read, write"), "{e}");
    }

    #[test]
    fn builtin_lookup_by_name() {
        assert!(builtin("slob").is_some());
        assert!(builtin("nope").is_none());
    }
}
