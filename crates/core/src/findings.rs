//! Findings: rules over measured figures that explain results, with evidence and a suggestion.
