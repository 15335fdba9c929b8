//! `compare`'s handling of runs disturbed by other work: the limit, the redo count and
//! `--quiet-wait` (docs/verdicts.md, "Runs disturbed by other work").

use bakeoff_core::disturbance::{DEFAULT_LIMIT_PCT, DEFAULT_MAX_REDO};
use clap::Args;
use std::time::Duration;

/// Which runs are disturbed, and what is done about them.
#[derive(Args, Debug, Clone)]
pub struct DisturbanceOpts {
    /// A run during which other processes and the hypervisor took more than PCT % of all CPU
    /// time, or just before which other processes moved more than 1 MB/s on its devices, is
    /// disturbed: kept beside the results, left out of the verdicts and run again at the end of
    /// its round. 0 turns the rule off.
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = DEFAULT_LIMIT_PCT,
        env = "BAKEOFF_DISTURBANCE_LIMIT",
        value_parser = percent
    )]
    pub disturbance_limit: f64,
    /// How many times a disturbed run is run again; after that its last attempt is kept,
    /// marked disturbed and left out of the verdicts.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_REDO)]
    pub max_redo: u32,
    /// Before each run, wait until the machine has been quiet for 3 s (busy CPU and the run's
    /// devices' I/O under the disturbance limit), saying whom it waits for; at most DUR (default
    /// 5m), then the run starts and the rule judges it.
    #[arg(
        long,
        value_name = "DUR",
        num_args = 0..=1,
        default_missing_value = "5m",
        value_parser = wait_limit
    )]
    pub quiet_wait: Option<Duration>,
}

/// A percentage in 0..=100.
fn percent(text: &str) -> Result<f64, String> {
    text.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or_else(|| format!("'{text}' is not a percentage from 0 to 100"))
}

/// A duration above zero.
fn wait_limit(text: &str) -> Result<Duration, String> {
    super::status::above_zero(text, "30s, 5m")
}
