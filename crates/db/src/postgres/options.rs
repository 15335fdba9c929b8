//! What to build a managed PostgreSQL server with: its binaries, data directory, WAL directory
//! (maybe on a log stack), the user's `pg.KEY=VALUE` settings, the clients and the benchmark
//! database.

use super::settings::Settings;
use super::PgError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What to build and how.
#[derive(Clone, Debug)]
pub struct PgOptions {
    /// The binaries' directory (`pg.bindir`); the highest Debian version when `None`.
    pub bindir: Option<PathBuf>,
    /// The data directory, on the stack's file system; created (it may exist empty).
    pub data_dir: PathBuf,
    /// The WAL directory (`initdb --waldir`), e.g. on a log stack's mount: `pg_wal` links to it.
    pub wal_dir: Option<PathBuf>,
    /// The user's `pg.KEY=VALUE` settings, over bakeoff's defaults.
    pub settings: Settings,
    /// Names the server's socket directory; the stack's name when `None`.
    pub name: Option<String>,
    /// Client connections the workload opens (`max_connections` is this and a margin).
    pub clients: u32,
    /// The benchmark database, created at the first start.
    pub dbname: String,
    /// Pages carry checksums (`initdb --data-checksums`): what a check after a crash state
    /// reads to find torn or corrupt pages. Off by default, as initdb has it.
    pub data_checksums: bool,
}

impl PgOptions {
    /// Defaults: the highest installed PostgreSQL, 10 clients, database `bakeoff`.
    pub fn new(data_dir: impl Into<PathBuf>) -> PgOptions {
        PgOptions {
            bindir: None,
            data_dir: data_dir.into(),
            wal_dir: None,
            settings: Settings::new(),
            name: None,
            clients: 10,
            dbname: "bakeoff".into(),
            data_checksums: false,
        }
    }

    /// Takes one `pg.KEY=VALUE` (`pg.bindir=DIR` names the binaries; every other key is a
    /// setting, checked when the server starts).
    pub fn set(&mut self, arg: &str) -> Result<(), PgError> {
        let setting = arg.strip_prefix("pg.").unwrap_or(arg);
        let Some((key, value)) = setting
            .split_once('=')
            .filter(|(k, _)| !k.trim().is_empty())
        else {
            return Err(PgError::Environment(format!(
                "{arg:?} is not pg.KEY=VALUE (e.g. pg.work_mem=8MB, pg.bindir=/usr/lib/postgresql/15/bin)"
            )));
        };
        match key.trim() {
            "bindir" => self.bindir = Some(PathBuf::from(value)),
            key => {
                self.settings
                    .insert(key.to_ascii_lowercase(), value.to_string());
            }
        }
        Ok(())
    }
}

impl PgOptions {
    /// Takes a plan's `pg.` settings (keys without the prefix; `bindir` names the binaries).
    pub fn set_all(&mut self, pg: &BTreeMap<String, String>) -> Result<(), PgError> {
        pg.iter()
            .try_for_each(|(k, v)| self.set(&format!("{k}={v}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_take_pg_settings_and_the_bindir() {
        let mut opts = PgOptions::new("/srv/data/pg");
        opts.set("pg.Work_Mem=8MB").unwrap();
        opts.set("pg.bindir=/opt/pg/bin").unwrap();
        let plan = BTreeMap::from([
            ("fsync".to_string(), "off".to_string()),
            ("search_path".to_string(), "a=b".to_string()),
        ]);
        opts.set_all(&plan).unwrap();
        assert_eq!(opts.bindir, Some(PathBuf::from("/opt/pg/bin")));
        assert_eq!(opts.settings["work_mem"], "8MB");
        assert_eq!(opts.settings["fsync"], "off");
        assert_eq!(
            opts.settings["search_path"], "a=b",
            "only the first = splits"
        );
        for bad in ["pg.work_mem", "pg.=8MB", ""] {
            let err = opts.set(bad).unwrap_err().to_string();
            assert!(err.contains("is not pg.KEY=VALUE"), "{bad}: {err}");
        }
    }
}
