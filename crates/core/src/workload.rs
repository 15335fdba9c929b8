//! Workload definitions as data: a plain job in fio's vocabulary (flat `key = value` TOML) or a
//! personality (declared `[params]`, `[[fileset]]` and `[[role]]` tables). Built-ins are the
//! TOML files under `personalities/`, embedded at build time.

use crate::doc::{self, Place, Table};
use crate::keys::{names, JOB_FILE_KEYS, JOB_KEYS, PERSONALITY_KEYS, RUN_KEYS};
use crate::plan::Plan;
use crate::settings::{SettingError, Settings};

pub use crate::personality::{ParamDef, PersonalityDef};

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
    (
        "fileserver",
        include_str!("../../../personalities/fileserver.toml"),
    ),
    (
        "varmail",
        include_str!("../../../personalities/varmail.toml"),
    ),
    (
        "webserver",
        include_str!("../../../personalities/webserver.toml"),
    ),
    ("nfsmix", include_str!("../../../personalities/nfsmix.toml")),
];

/// The body of a workload.
#[derive(Clone, Debug)]
pub enum Body {
    /// A plain job: its settings are fio keys (see [`crate::job::JOB_KEYS`]).
    Job(Settings),
    /// A personality: parameters, filesets and roles.
    Personality(PersonalityDef),
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

/// The built-in workloads' names, in the order `bakeoff workloads` lists them.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(name, _)| *name)
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
    /// Parses a workload TOML document. `path` is used in error messages (`<builtin NAME>`
    /// for a built-in).
    pub fn parse(name: &str, text: &str, path: &str) -> Result<Workload, SettingError> {
        let place = if path.starts_with("<builtin") {
            Place::builtin(name)
        } else {
            Place::file(path)
        };
        let doc = doc::parse(text, &place)?;
        let description = match doc.get("description") {
            Some(d) => d.string(&place, "description")?,
            None => String::new(),
        };
        let tables = ["description", "params", "fileset", "role"];
        // Any personality table makes a personality: a file with filesets but no roles is an
        // error, not a plain job that ignores them.
        let personality = tables[1..].iter().any(|t| doc.get(t).is_some());
        let allowed = if personality {
            names(&[PERSONALITY_KEYS, RUN_KEYS])
        } else {
            names(&[JOB_FILE_KEYS, RUN_KEYS, JOB_KEYS])
        };
        doc.refuse_unknown(&place, "", &allowed)?;
        let top = top_settings(&doc, &place, &tables)?;
        let body = if personality {
            Body::Personality(crate::personality::parse_personality(&doc, &place, top)?)
        } else {
            Body::Job(top)
        };
        Ok(Workload {
            name: name.to_string(),
            description,
            source: text.to_string(),
            body,
            path: place.is_file().then(|| path.to_string()),
        })
    }

    /// Validates `user` settings against this workload and resolves the plan. No side effects.
    pub fn plan(&self, user: &Settings) -> Result<Plan, SettingError> {
        match &self.body {
            Body::Job(defaults) => {
                let mut merged = defaults.clone();
                merged.merge(user);
                crate::job::plan_job(&self.name, &merged)
            }
            Body::Personality(def) => crate::personality::plan_personality(&self.name, def, user),
        }
    }
}

/// The top-level `key = value` pairs of a document except `skip`, each located where written.
pub(crate) fn top_settings(
    doc: &Table,
    place: &Place,
    skip: &[&str],
) -> Result<Settings, SettingError> {
    let mut settings = Settings::default();
    for e in doc
        .entries
        .iter()
        .filter(|e| !skip.contains(&e.key.as_str()))
    {
        let value = e.scalar(place, &e.key)?;
        settings.insert(&e.key, &value, place.at(e.line));
    }
    Ok(settings)
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
    fn errors_in_a_users_personality_name_the_line_of_the_value() {
        let text = builtin("slob")
            .unwrap()
            .source
            .replace("io = \"randread\"", "io = \"sideways\"");
        let w = Workload::parse("mine", &text, "mine.toml").unwrap();
        let e = w.plan(&Settings::default()).unwrap_err();
        let line = text.lines().position(|l| l.contains("sideways")).unwrap() + 1;
        assert_eq!(e.origin.to_string(), format!("mine.toml:{line}"), "{e}");
        assert_eq!(e.key, "role.reader.steps[0].io");
        assert!(e.message.contains("allowed: read, write"), "{e}");
    }

    #[test]
    fn toml_values_carry_their_line() {
        let text = "# a job\nrw = \"randread\"\n\nbs = 8192\ndirect = true\n";
        let w = Workload::parse("job", text, "job.toml").unwrap();
        let Body::Job(s) = w.body else {
            panic!("a flat file is a plain job")
        };
        let bs = s.get("bs").unwrap();
        assert_eq!(bs.value, "8192");
        assert_eq!(bs.origin.to_string(), "job.toml:4");
        assert_eq!(s.get("direct").unwrap().value, "true");
    }

    #[test]
    fn toml_syntax_errors_name_file_and_line() {
        let err = Workload::parse("bad", "rw = \"read\"\nbs = = 4\n", "bad.toml").unwrap_err();
        assert_eq!(err.origin.to_string(), "bad.toml:2");
    }

    #[test]
    fn builtin_lookup_by_name() {
        assert!(builtin("slob").is_some());
        assert!(builtin("nope").is_none());
    }
}
