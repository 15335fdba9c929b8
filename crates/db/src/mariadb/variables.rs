//! A managed MariaDB server's variables (its option file): defaults sized to the machine (or to
//! the run's memory limit), the user's `my.KEY=VALUE` on top (checked by `checks.rs`
//! before anything is created), written as a `[mysqld]` section. Keys are kept in `_` form,
//! lower case: MariaDB takes `-` and `_` alike.

use crate::sizing::Sizing;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// my.cnf keys (`_` form) and values.
pub type Variables = BTreeMap<String, String>;

/// Variables the run decides and the user cannot: where the server listens and where its
/// files are make it private, and are what bakeoff's cleanup relies on.
pub const RESERVED: [&str; 14] = [
    "socket",
    "port",
    "skip_networking",
    "bind_address",
    "datadir",
    "innodb_log_group_home_dir",
    "innodb_data_home_dir",
    "innodb_undo_directory",
    "pid_file",
    "log_error",
    "user",
    "basedir",
    "plugin_dir",
    "tmpdir",
];

/// Connections beyond the clients': bakeoff's own (statistics, setup) and sysbench's.
pub const CONNECTION_MARGIN: u32 = 10;

/// InnoDB grows and shrinks its buffer pool in chunks of this (`innodb_buffer_pool_chunk_size`).
pub const BUFFER_POOL_CHUNK: u64 = 128 << 20;

/// The buffer pool is half of memory up to this.
pub const BUFFER_POOL_CAP: u64 = 16 << 30;

/// The redo log's size unless the user says: PostgreSQL's `max_wal_size` default, so that the
/// two servers' runs checkpoint after the same amount of log.
pub const REDO_LOG_SIZE: &str = "1G";

/// Where the server keeps what bakeoff decides (see [`RESERVED`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Places {
    /// The data directory.
    pub data_dir: PathBuf,
    /// The redo log's directory, when not the data directory.
    pub redo_dir: Option<PathBuf>,
    /// The socket.
    pub socket: PathBuf,
    /// The pid file.
    pub pid_file: PathBuf,
    /// The error log.
    pub log_error: PathBuf,
}

/// A key as MariaDB's variables are listed: lower case, `_` for `-`.
pub fn normalize(key: &str) -> String {
    key.trim().to_ascii_lowercase().replace('-', "_")
}

/// bakeoff's defaults (docs/mariadb.md says why each): half the memory the server may use as
/// InnoDB's buffer pool in whole chunks (at least one, at most [`BUFFER_POOL_CAP`]; InnoDB reads
/// with O_DIRECT, so nothing is cached twice), a 1 GiB redo log, no buffer-pool dump or load (a
/// cold restart must be cold), connections for the clients and a margin, no TCP, no
/// performance schema, and the places. Durability stays MariaDB's unless the user sets it.
pub fn defaults(sizing: &Sizing, places: &Places) -> Variables {
    let half = (sizing.server_memory() / 2).min(BUFFER_POOL_CAP);
    let pool = (half / BUFFER_POOL_CHUNK).max(1) * BUFFER_POOL_CHUNK;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mut v = Variables::new();
    let mut set = |k: &str, value: String| v.insert(k.to_string(), value);
    set("innodb_buffer_pool_size", format!("{}M", pool >> 20));
    set("innodb_log_file_size", REDO_LOG_SIZE.into());
    set("innodb_flush_method", "O_DIRECT".into());
    set("innodb_buffer_pool_dump_at_shutdown", "OFF".into());
    set("innodb_buffer_pool_load_at_startup", "OFF".into());
    let clients = sizing.clients.saturating_add(CONNECTION_MARGIN);
    set("max_connections", clients.to_string());
    set("performance_schema", "OFF".into());
    set("skip_networking", "ON".into());
    set("skip_name_resolve", "ON".into());
    set("datadir", path(&places.data_dir));
    let redo = places.redo_dir.as_ref().unwrap_or(&places.data_dir);
    set("innodb_log_group_home_dir", path(redo));
    set("socket", path(&places.socket));
    set("pid_file", path(&places.pid_file));
    set("log_error", path(&places.log_error));
    v
}

/// The defaults with the user's variables over them.
pub fn merge(defaults: Variables, user: &Variables) -> Variables {
    let mut all = defaults;
    all.extend(user.iter().map(|(k, v)| (normalize(k), v.clone())));
    all
}

/// A `[mysqld]` section for `variables`, every value double-quoted (MariaDB's option files
/// strip the quotes and read `\\`, `\"` and `\n` as escapes).
pub fn render(variables: &Variables) -> String {
    let mut text = String::from("# Written by bakeoff: the run's variables (docs/mariadb.md).\n");
    text.push_str("[mysqld]\n");
    for (k, v) in variables {
        let quoted = v
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        text.push_str(&format!("{k} = \"{quoted}\"\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn places() -> Places {
        Places {
            data_dir: "/mnt/s/mariadb".into(),
            redo_dir: None,
            socket: "/tmp/bakeoff-my-s/mysqld.sock".into(),
            pid_file: "/tmp/bakeoff-my-s/mariadbd.pid".into(),
            log_error: "/mnt/s/mariadb.log".into(),
        }
    }

    #[test]
    fn defaults_follow_the_memory_the_server_may_use_and_the_clients() {
        let machine = Sizing {
            memory_bytes: 24 * GIB,
            mem_limit_bytes: None,
            clients: 8,
        };
        let d = defaults(&machine, &places());
        assert_eq!(d["innodb_buffer_pool_size"], "12288M");
        assert_eq!(d["max_connections"], "18");
        assert_eq!(d["innodb_log_file_size"], "1G");
        assert_eq!(d["innodb_flush_method"], "O_DIRECT");
        assert_eq!(d["innodb_buffer_pool_load_at_startup"], "OFF");
        assert_eq!(d["innodb_buffer_pool_dump_at_shutdown"], "OFF");
        assert_eq!(d["skip_networking"], "ON");
        assert_eq!(d["socket"], "/tmp/bakeoff-my-s/mysqld.sock");
        assert_eq!(
            d["innodb_log_group_home_dir"], "/mnt/s/mariadb",
            "no redo dir: the data's"
        );
        assert!(
            !d.contains_key("innodb_flush_log_at_trx_commit"),
            "durability stays MariaDB's"
        );
        let limited = Sizing {
            mem_limit_bytes: Some(GIB + 100),
            ..machine
        };
        assert_eq!(
            defaults(&limited, &places())["innodb_buffer_pool_size"],
            "512M"
        );
        let tiny = Sizing {
            mem_limit_bytes: Some(200 << 20),
            ..machine
        };
        assert_eq!(
            defaults(&tiny, &places())["innodb_buffer_pool_size"],
            "128M",
            "one chunk"
        );
        let big = Sizing {
            memory_bytes: 256 * GIB,
            ..machine
        };
        assert_eq!(
            defaults(&big, &places())["innodb_buffer_pool_size"],
            "16384M",
            "capped"
        );
        let redo = Places {
            redo_dir: Some("/mnt/log/myredo".into()),
            ..places()
        };
        assert_eq!(
            defaults(&machine, &redo)["innodb_log_group_home_dir"],
            "/mnt/log/myredo"
        );
        let user = Variables::from([("Innodb-Buffer-Pool-Size".to_string(), "1G".to_string())]);
        assert_eq!(merge(d, &user)["innodb_buffer_pool_size"], "1G");
    }

    #[test]
    fn rendering_quotes_every_value_as_an_option_file_reads_it() {
        let v = Variables::from([
            (
                "init_connect".to_string(),
                r#"SET @a = "it's \here""#.to_string(),
            ),
            ("socket".to_string(), "/tmp/x y/mysqld.sock".to_string()),
        ]);
        let text = render(&v);
        assert!(text.contains("\n[mysqld]\n"), "{text}");
        assert!(
            text.contains(r#"init_connect = "SET @a = \"it's \\here\"""#),
            "{text}"
        );
        assert!(
            text.contains("socket = \"/tmp/x y/mysqld.sock\"\n"),
            "{text}"
        );
    }
}
