//! `/proc/spl/kstat/zfs/arcstats`: the ZFS ARC (OpenZFS kstat table).

/// ARC counters of one reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArcCounters {
    /// Current size in bytes.
    pub size: Option<u64>,
    /// Reads served by the ARC since the module (daemon) started.
    pub hits: Option<u64>,
    /// Reads the ARC had to fetch.
    pub misses: Option<u64>,
}

/// The `size`, `hits` and `misses` rows of a kstat table (`name type data`, type 4 =
/// `KSTAT_DATA_UINT64`; a plain `name data` row is read too).
pub fn parse_arc_counters(text: &str) -> ArcCounters {
    let row = |name: &str| {
        text.lines().find_map(|line| {
            let t: Vec<&str> = line.split_ascii_whitespace().collect();
            match t.as_slice() {
                [n, "4", data] if *n == name => data.parse().ok(),
                [n, data] if *n == name => data.parse().ok(),
                _ => None,
            }
        })
    };
    ArcCounters {
        size: row("size"),
        hits: row("hits"),
        misses: row("misses"),
    }
}

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
    fn counters_of_the_kstat_table() {
        let text = "hits 4 1000\nmisses 4 250\nsize 4 4096\nother 3 5\n";
        let c = parse_arc_counters(text);
        assert_eq!(
            (c.size, c.hits, c.misses),
            (Some(4096), Some(1000), Some(250))
        );
        assert_eq!(parse_arc_counters("hits x"), ArcCounters::default());
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
