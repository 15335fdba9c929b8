//! `compare --until decided` and `--search best|pareto`: repetitions that stop when the answer
//! is known (docs/verdicts.md, "Deciding sooner").

use clap::{Args, ValueEnum};
use std::time::Duration;

/// When a study stops repeating its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Until {
    /// Until every cell's verdict against its baseline is decided: better, worse or
    /// equivalent within the minimum effect.
    Decided,
}

/// What a search over the study's cells looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Search {
    /// The one best cell on the figure.
    Best,
    /// The cells no other beats on both of two figures.
    Pareto,
}

/// Adaptive repetitions.
#[derive(Args, Debug, Clone)]
pub struct AdaptiveOpts {
    /// Repeat cells after the first --repeat rounds until each one's verdict against its
    /// baseline on the decided figure is decided (better, worse, or equivalent within the
    /// minimum effect) or --max-repeat or --budget is reached; only undecided cells (and their
    /// baselines) run again.
    #[arg(long, value_enum, value_name = "WHEN", conflicts_with = "search")]
    pub until: Option<Until>,
    /// Race the study's cells: after each round drop those shown worse than the best (best)
    /// or beaten on both --figures by another (pareto); the survivors run again.
    #[arg(long, value_enum, value_name = "GOAL")]
    pub search: Option<Search>,
    /// Most repetitions of a cell under --until or --search.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_repeat: u32,
    /// Start no round that would not finish within this time of the study's start (30m, 2h),
    /// by the pace of its runs so far.
    #[arg(long, value_name = "DUR", value_parser = budget)]
    pub budget: Option<Duration>,
    /// The figure --until decides on or --search races on (default: the headline figure, tps
    /// for databases, read or write IOPS for I/O, the replay's time for replays); --search
    /// pareto takes two: tps,device_write_bytes_per_txn.
    #[arg(long, value_name = "KEY[,KEY]")]
    pub figures: Option<String>,
    /// Let a cell whose crash states lost acknowledged writes win --search.
    #[arg(long)]
    pub allow_risk: bool,
}

impl AdaptiveOpts {
    /// Whether the study repeats adaptively.
    pub fn on(&self) -> bool {
        self.until.is_some() || self.search.is_some()
    }
}

fn budget(text: &str) -> Result<Duration, String> {
    super::status::above_zero(text, "40m, 2h")
}
