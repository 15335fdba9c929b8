//! Exporters of run records. Each format is one file with one entry point:
//! [`terminal::render`] (what a DBA pastes into a post), [`json::render`] (the full run record),
//! [`csv::render_timeseries`] (per-second samples) and [`side_by_side::render`] (several runs
//! as columns).

pub mod csv;
pub mod json;
pub mod side_by_side;
pub mod study;
pub mod study_table;
pub mod terminal;

mod fmt;

#[cfg(test)]
mod fixture;
