//! `--anonymize`: each path component is replaced, in order of first appearance, by `d<N>` (a
//! directory) or `f<N>` (a file), the same name always by the same replacement, so the trace
//! keeps its shape (which files share a directory, which name a rename reused) and none of its
//! names. The table lives only while the capture runs: no dictionary is written.

use std::collections::HashMap;

/// The replacement table of one capture.
#[derive(Debug, Default)]
pub struct Anonymizer {
    dirs: HashMap<String, String>,
    files: HashMap<String, String>,
}

impl Anonymizer {
    /// The anonymized form of a `/`-separated relative path whose last component is a
    /// directory when `is_dir`.
    pub fn path(&mut self, path: &str, is_dir: bool) -> String {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let last = parts.len().saturating_sub(1);
        let named: Vec<String> = (parts.iter().enumerate())
            .map(|(i, part)| self.name(part, is_dir || i < last))
            .collect();
        named.join("/")
    }

    fn name(&mut self, part: &str, dir: bool) -> String {
        let (table, prefix) = if dir {
            (&mut self.dirs, 'd')
        } else {
            (&mut self.files, 'f')
        };
        let next = table.len();
        (table.entry(part.to_string()))
            .or_insert_with(|| format!("{prefix}{next}"))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_numbered_in_order_of_appearance() {
        let mut a = Anonymizer::default();
        assert_eq!(a.path("base/16384/2619", false), "d0/d1/f0");
        assert_eq!(a.path("base/16384/2620", false), "d0/d1/f1");
        assert_eq!(a.path("pg_wal", true), "d2");
        assert_eq!(a.path("pg_wal/000000010000000000000001", false), "d2/f2");
    }

    #[test]
    fn the_same_name_is_replaced_the_same_way_throughout() {
        let mut a = Anonymizer::default();
        let first = a.path("base/16384/2619", false);
        a.path("global/pg_control", false);
        assert_eq!(a.path("base/16384/2619", false), first);
        // A file and a directory of the same name are numbered apart.
        assert_eq!(a.path("x", false), "f2");
        assert_eq!(a.path("x", true), "d3");
        assert_eq!(a.path("", true), "");
    }

    #[test]
    fn no_real_name_survives() {
        let mut a = Anonymizer::default();
        let out = a.path("secret/customer_db/ledger.ibd", false);
        assert!(!out.contains("secret") && !out.contains("customer") && !out.contains("ledger"));
    }
}
