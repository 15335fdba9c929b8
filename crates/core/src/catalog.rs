//! Every name `bakeoff run NAME` and `compare --workload NAME` take, from the three registries:
//! the I/O and file workloads ([`crate::workload`]'s built-ins), the database workloads
//! ([`crate::dbplan::DB_WORKLOADS`]) and the recipes ([`crate::recipe`]'s built-ins). Help
//! text, completions, errors and `bakeoff workloads` are all made from [`entries`], so adding
//! to a registry adds everywhere; the names must be disjoint (a test).

use crate::dbplan::DB_WORKLOADS;

/// Which registry a name comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An I/O or file workload (a plain job or a personality).
    Io,
    /// A real database driven by bakeoff (TPC-C, pgbench, TPC-H).
    Database,
    /// A recipe: phases timed one by one.
    Recipe,
}

impl Kind {
    /// Every kind, in the order lists show them.
    pub const ALL: [Kind; 3] = [Kind::Io, Kind::Database, Kind::Recipe];

    /// How lists head the kind's names.
    pub fn heading(self) -> &'static str {
        match self {
            Kind::Io => "I/O and file workloads",
            Kind::Database => "databases",
            Kind::Recipe => "recipes",
        }
    }
}

/// Every built-in name and its kind, workloads first, then databases, then recipes.
pub fn entries() -> Vec<(&'static str, Kind)> {
    let io = crate::workload::builtin_names().map(|n| (n, Kind::Io));
    let db = DB_WORKLOADS.iter().map(|(n, _, _)| (*n, Kind::Database));
    let recipes = crate::recipe::builtin_names().map(|n| (n, Kind::Recipe));
    io.chain(db).chain(recipes).collect()
}

/// The names of one kind.
pub fn names(kind: Kind) -> Vec<&'static str> {
    (entries().into_iter())
        .filter(|(_, k)| *k == kind)
        .map(|(n, _)| n)
        .collect()
}

/// Every name, grouped by kind: `I/O and file workloads: randread, ...; databases: tpcc, ...;
/// recipes: build`.
pub fn grouped() -> String {
    Kind::ALL
        .iter()
        .map(|k| format!("{}: {}", k.heading(), names(*k).join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The message for a name that is none of them.
pub fn unknown(name: &str) -> String {
    format!(
        "unknown workload '{}' ({}; or --job FILE, --recipe FILE)",
        crate::settings::echo(name),
        grouped()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_recipe_and_database_names_are_disjoint_and_each_resolves() {
        let all = entries();
        for (i, (name, kind)) in all.iter().enumerate() {
            if let Some((_, other)) = all[..i].iter().find(|(n, _)| n == name) {
                panic!("'{name}' names both a {other:?} and a {kind:?}");
            }
            let found = match kind {
                Kind::Io => crate::workload::builtin(name).is_some(),
                Kind::Database => crate::dbplan::is_db_workload(name),
                Kind::Recipe => crate::recipe::builtin(name).is_some(),
            };
            assert!(found, "{name} ({kind:?}) does not resolve");
        }
        // The database engines are not workload names either (`--set db=sqlite`).
        for db in ["postgres", "sqlite"] {
            assert!(all.iter().all(|(n, _)| *n != db), "{db}");
        }
        assert_eq!(names(Kind::Io).len(), crate::workload::builtins().len());
        assert_eq!(names(Kind::Recipe).len(), crate::recipe::builtins().len());
        let msg = unknown("nope");
        for (name, _) in &all {
            assert!(msg.contains(name), "{name} missing from: {msg}");
        }
    }
}
