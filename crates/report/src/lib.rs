//! Exporters of run records. Each format is one file with one entry point:
//! [`terminal::render`] (what a DBA pastes into a post), [`json::render`] (the full run record),
//! [`csv::render_timeseries`] (per-second samples); comparisons of several runs
//! ([`comparison`], whose figures are the one table in [`figures`]) render through
//! [`comparison_text`].

pub mod comparison;
pub mod comparison_text;
pub mod csv;
pub mod figures;
pub mod json;
pub mod terminal;

mod fmt;

#[cfg(test)]
mod fixture;
