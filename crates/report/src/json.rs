//! The run record as JSON (`--json`): the full record, schema in `docs/schema.md`.

use bakeoff_core::record::RunRecord;

/// Pretty-printed JSON of the record, with a trailing newline.
pub fn render(record: &RunRecord) -> String {
    let mut s = serde_json::to_string_pretty(record).expect("run records serialise");
    s.push('\n');
    s
}
