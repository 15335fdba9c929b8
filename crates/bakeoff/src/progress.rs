//! Progress on a terminal (indicatif); silent otherwise or with --quiet.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar that is hidden unless stderr is a terminal and output is wanted.
pub fn bar(len: u64, template: &str, quiet: bool) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
