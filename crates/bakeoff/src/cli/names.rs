//! The workload names the command line offers, from the registries
//! ([`bakeoff_core::catalog`]): in `--help`, in shell completions, and (from the same list) in
//! the unknown-workload error.

use bakeoff_core::catalog::{entries, grouped, Kind};
use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};

/// A workload name: any text (a `compare --workload` may also be a file, and an unknown name
/// gets bakeoff's own error, which lists the names), offering the built-in names to
/// completions.
#[derive(Clone, Debug)]
pub struct WorkloadName;

impl TypedValueParser for WorkloadName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let values = entries().into_iter().map(|(name, kind)| {
            PossibleValue::new(name).help(match kind {
                Kind::Io => "I/O or file workload",
                Kind::Database => "database",
                Kind::Recipe => "recipe",
            })
        });
        Some(Box::new(values))
    }
}

/// The help of a workload argument: `what`, then every name by kind.
pub fn help(what: &str) -> String {
    format!("{what} ({})", grouped())
}
