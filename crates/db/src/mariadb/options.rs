//! What to build a managed MariaDB server with: its data directory, the redo log's directory
//! (maybe on a log stack), the user's `my.KEY=VALUE` variables, the clients and the benchmark
//! database.

use super::variables::{normalize, Variables};
use super::MyError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What to build and how.
#[derive(Clone, Debug)]
pub struct MyOptions {
    /// The data directory, on the stack's file system; created (it may exist empty).
    pub data_dir: PathBuf,
    /// The redo log's directory (`innodb_log_group_home_dir`), e.g. on a log stack's mount;
    /// the data directory when `None`.
    pub redo_dir: Option<PathBuf>,
    /// The user's `my.KEY=VALUE` variables (keys in `_` form, lower case), over bakeoff's
    /// defaults.
    pub variables: Variables,
    /// Names the server's socket directory; the stack's name when `None`.
    pub name: Option<String>,
    /// Client connections the workload opens (`max_connections` is this and a margin).
    pub clients: u32,
    /// The benchmark database, created at the first start.
    pub dbname: String,
}

impl MyOptions {
    /// Defaults: 10 clients, database `bakeoff`, the redo log in the data directory.
    pub fn new(data_dir: impl Into<PathBuf>) -> MyOptions {
        MyOptions {
            data_dir: data_dir.into(),
            redo_dir: None,
            variables: Variables::new(),
            name: None,
            clients: 10,
            dbname: "bakeoff".into(),
        }
    }

    /// Takes one `my.KEY=VALUE` (the prefix may be left out), checked when the server starts.
    /// `KEY` may use `-` or `_` and any case, as MariaDB does.
    pub fn set(&mut self, arg: &str) -> Result<(), MyError> {
        let variable = arg.strip_prefix("my.").unwrap_or(arg);
        let Some((key, value)) = variable
            .split_once('=')
            .filter(|(k, _)| !k.trim().is_empty())
        else {
            return Err(MyError::Environment(format!(
                "{arg:?} is not my.KEY=VALUE (e.g. my.innodb_buffer_pool_size=2G, \
                 my.innodb_flush_log_at_trx_commit=2)"
            )));
        };
        self.variables.insert(normalize(key), value.to_string());
        Ok(())
    }

    /// Takes a plan's `my.` variables (keys without the prefix).
    pub fn set_all(&mut self, my: &BTreeMap<String, String>) -> Result<(), MyError> {
        my.iter()
            .try_for_each(|(k, v)| self.set(&format!("{k}={v}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_take_my_variables_in_either_spelling() {
        let mut opts = MyOptions::new("/srv/data/mariadb");
        opts.set("my.Innodb-Buffer-Pool-Size=2G").unwrap();
        let plan = BTreeMap::from([
            ("sync_binlog".to_string(), "0".to_string()),
            ("init_connect".to_string(), "SET a=b".to_string()),
        ]);
        opts.set_all(&plan).unwrap();
        assert_eq!(opts.variables["innodb_buffer_pool_size"], "2G");
        assert_eq!(opts.variables["sync_binlog"], "0");
        assert_eq!(
            opts.variables["init_connect"], "SET a=b",
            "only the first = splits"
        );
        for bad in ["my.innodb_buffer_pool_size", "my.=2G", ""] {
            let err = opts.set(bad).unwrap_err().to_string();
            assert!(err.contains("is not my.KEY=VALUE"), "{bad}: {err}");
        }
    }
}
