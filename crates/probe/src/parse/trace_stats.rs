//! `/sys/kernel/tracing/instances/<name>/per_cpu/cpu<N>/stats`: the counters of one CPU's ring
//! buffer of a tracefs instance. bakeoff never reads the events themselves: an instance that
//! records one filtered event counts it, and these counters say how many were written.

use super::number;
use crate::error::ProbeError;

const FILE: &str = "tracing per_cpu/cpu<N>/stats";

/// Events written to one CPU's buffer since it was created: those still in it (`entries`) plus
/// those the buffer overwrote when it was full (`overrun`). Events dropped because the buffer
/// could not take them (`dropped events`, only in no-overwrite mode) are not written, so they
/// are an error here: the count would be short.
pub fn parse_trace_events_written(text: &str) -> Result<u64, ProbeError> {
    let field = |name: &str| -> Result<u64, ProbeError> {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .ok_or_else(|| ProbeError::parse(FILE, format!("no {name:?} line")))?;
        number(FILE, name, line.trim())
    };
    let dropped = text
        .lines()
        .find_map(|l| l.strip_prefix("dropped events:"))
        .map_or(Ok(0), |v| number(FILE, "dropped events", v.trim()))?;
    if dropped > 0 {
        return Err(ProbeError::parse(
            FILE,
            format!("{dropped} events dropped: the count is incomplete"),
        ));
    }
    Ok(field("entries")? + field("overrun")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_entries_and_overwritten_events() {
        let text = include_str!("../../tests/fixtures/proc/6.18.44/tracing_per_cpu_stats");
        assert_eq!(parse_trace_events_written(text).unwrap(), 127 + 67160);
    }

    #[test]
    fn refuses_missing_fields_and_dropped_events() {
        assert!(parse_trace_events_written("entries: 3\n").is_err());
        assert!(parse_trace_events_written("entries: x\noverrun: 0\n").is_err());
        let dropped = "entries: 3\noverrun: 0\ndropped events: 2\n";
        assert!(parse_trace_events_written(dropped).is_err());
        assert_eq!(
            parse_trace_events_written("entries: 3\noverrun: 4\n").unwrap(),
            7
        );
    }
}
