//! Personalities: applications modelled as data. A personality declares `[params]`,
//! `[[fileset]]` and `[[role]]` tables whose values may be `$param` placeholders;
//! [`parse`] reads them as written (with where each was written) and [`expand`] substitutes the
//! parameters and hands filesets and roles to the one planner.

mod expand;
mod parse;

use crate::settings::{Origin, Settings};

pub(crate) use expand::plan_personality;
pub(crate) use parse::parse_personality;

/// A personality as written: its tables still hold `$param` placeholders.
#[derive(Clone, Debug)]
pub struct PersonalityDef {
    /// Declared parameters with their defaults and help.
    pub params: Vec<ParamDef>,
    /// Run-wide keys given by the personality (e.g. `runtime`).
    pub run: Settings,
    /// `[[fileset]]` tables.
    pub filesets: Vec<FilesetDef>,
    /// `[[role]]` tables.
    pub roles: Vec<RoleDef>,
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

/// A `[[fileset]]` as written.
#[derive(Clone, Debug)]
pub struct FilesetDef {
    /// Its name, unique in the personality.
    pub name: String,
    pub(crate) fields: Fields,
}

/// A `[[role]]` as written.
#[derive(Clone, Debug)]
pub struct RoleDef {
    /// Its name, unique in the personality.
    pub name: String,
    pub(crate) fields: Fields,
    pub(crate) gate: Option<Fields>,
    pub(crate) steps: Vec<StepDef>,
}

/// One step of a role's loop as written.
#[derive(Clone, Debug)]
pub(crate) struct StepDef {
    /// The key that names its kind: one of [`crate::keys::STEP_KINDS`].
    pub kind: &'static str,
    pub fields: Fields,
    /// The role names of a `post` step.
    pub targets: Vec<Field>,
}

/// The scalar values of one table, by key, with where the table starts.
#[derive(Clone, Debug)]
pub(crate) struct Fields {
    /// How messages name the table: `role.reader`, `fileset.data`, `role.writer.steps[1]`.
    pub section: String,
    /// Where the table was written.
    pub origin: Origin,
    pub entries: Vec<(String, Field)>,
}

/// One value as written: literal text, or `$name` of a declared parameter.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub text: String,
    pub origin: Origin,
}

impl Fields {
    /// The value written for `key`.
    pub fn get(&self, key: &str) -> Option<&Field> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, f)| f)
    }
}

impl Field {
    /// The parameter this value refers to, if it is a `$param` placeholder.
    pub fn param(&self) -> Option<&str> {
        self.text.strip_prefix('$')
    }
}

#[cfg(test)]
mod file_tests;
#[cfg(test)]
mod tests;
