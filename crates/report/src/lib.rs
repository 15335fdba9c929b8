//! Exporters of run records. Each format is one file with one entry point:
//! [`terminal::render`] (what a DBA pastes into a post), [`json::render`] (the full run record),
//! [`csv::render_timeseries`] (per-second samples); comparisons of several runs ([`study`], whose
//! figures are the one table in [`figures`]) render through [`study_table`].

pub mod csv;
pub mod figures;
pub mod json;
pub mod study;
pub mod study_table;
pub mod terminal;
mod terminal_db;

mod fmt;

#[cfg(test)]
mod fixture;
