//! The comparison of a study's cells (`compare`, `report`): one row per cell, each headline
//! figure as a median with its range and, against the baseline cell, a ratio and a verdict;
//! the load ramps' and the recipes' tables beside it; rendered as text, Markdown, CSV and JSON.
//!
//! From the bottom up: `cells` (one figure of a cell against its baseline's, the unit of every
//! table), [`phases`] and [`ramp`] (the recipes' and the ramps' tables, each with its `text`),
//! `study` (the comparison: [`StudyReport`], [`build`]), `cell_text` and `fit` (a cell's text, a
//! table that fits the terminal), `table` and `answer` (the table of headline figures and the
//! sentence it opens with), and [`text`], which renders the whole.

pub mod adaptive;
pub(crate) mod answer;
pub(crate) mod cell_text;
mod cells;
mod cost;
pub(crate) mod fit;
pub mod phases;
pub mod ramp;
mod study;
pub(crate) mod table;
pub mod text;

pub use cells::{CellRuns, FigureCell};
pub use cost::StudyCost;
pub use study::{build, CellRow, StudyReport, REPORT_SCHEMA_VERSION};
