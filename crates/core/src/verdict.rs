//! Verdicts: is a cell better, worse, or not significantly different from the baseline?
