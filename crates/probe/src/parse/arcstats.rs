//! `/proc/spl/kstat/zfs/arcstats`: the ZFS ARC (OpenZFS kstat table).

/// The current ARC size in bytes: the data column of the `size` row, whose kstat type must be 4
/// (`KSTAT_DATA_UINT64`). `None` when there is no such row or it does not parse.
pub fn parse_arc_size(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut tokens = line.split_ascii_whitespace();
        match (tokens.next(), tokens.next(), tokens.next()) {
            (Some("size"), Some("4"), Some(data)) => data.parse().ok(),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kstat_table() {
        // Not captured here (this machine has no ZFS): an excerpt in the real kstat layout.
        let text = include_str!("../../tests/fixtures/proc/zfs/arcstats");
        assert_eq!(parse_arc_size(text), Some(3942745216));
    }

    #[test]
    fn garbage_is_none() {
        assert_eq!(parse_arc_size(""), None);
        assert_eq!(parse_arc_size("size 3 12"), None, "wrong kstat type");
        assert_eq!(parse_arc_size("size 4 x"), None);
        assert_eq!(parse_arc_size("size 4"), None);
        assert_eq!(parse_arc_size("c_size 4 1\nsize 4 7\n"), Some(7));
    }
}
