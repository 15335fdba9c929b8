//! The `--export-<format>` options, one for each exporter of the report crate's registry.

use bakeoff_report::{Exporter, EXPORTERS};
use clap::Args;
use std::path::PathBuf;

/// Where `run` (`FOR_RUN`) or `compare` export their result (hyperfine's convention): an
/// `--export-<format>` flag for each exporter of [`EXPORTERS`] that renders what the command
/// makes. Each file is created before the work starts and written atomically at the end; "-"
/// is stdout (the human-readable output then goes to stderr).
#[derive(Debug, Clone, Default)]
pub struct ExportOpts<const FOR_RUN: bool> {
    /// The formats asked for and their paths, in [`EXPORTERS`] order.
    pub requested: Vec<(&'static Exporter, PathBuf)>,
}

impl<const FOR_RUN: bool> ExportOpts<FOR_RUN> {
    /// The exporters the command offers.
    fn offered() -> impl Iterator<Item = &'static Exporter> {
        EXPORTERS.iter().filter(|e| match FOR_RUN {
            true => e.run.is_some(),
            false => e.comparison.is_some(),
        })
    }
}

/// The clap id and long name of an exporter's flag (`export-json`).
fn export_id(e: &'static Exporter) -> &'static str {
    e.flag.trim_start_matches('-')
}

impl<const FOR_RUN: bool> clap::FromArgMatches for ExportOpts<FOR_RUN> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut opts = Self::default();
        opts.update_from_arg_matches(matches)?;
        Ok(opts)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.requested = Self::offered()
            .filter_map(|e| Some((e, matches.get_one::<PathBuf>(export_id(e))?.clone())))
            .collect();
        Ok(())
    }
}

impl<const FOR_RUN: bool> Args for ExportOpts<FOR_RUN> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        Self::offered().fold(cmd, |cmd, e| {
            let arg = clap::Arg::new(export_id(e))
                .long(export_id(e))
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help(e.help);
            cmd.arg(match e.alias {
                Some(alias) => arg.visible_alias(alias),
                None => arg,
            })
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}
