//! A managed server's postgresql.conf settings: defaults sized to the machine (or to the run's
//! memory limit), the user's `pg.KEY=VALUE` on top, validated before initdb in two steps:
//! against `postgres --describe-config` ([`super::describe`]: the key exists, the type and
//! unitless range fit), then by the server's own parser (`postgres -C` on a scratch copy of
//! the settings: enum words, units, ranges with units), whose complaints are passed on with
//! PostgreSQL's own hint of what is allowed.

use super::describe::{check_value, nearest, parse_describe_config, Catalog};
use super::{Binaries, PgError};
use bakeoff_stack::exec::{Cmd, Exec, PROBE_TIMEOUT};
use std::collections::BTreeMap;
use std::path::Path;

/// postgresql.conf keys and values.
pub type Settings = BTreeMap<String, String>;

/// Settings the run decides and the user cannot: where the server listens and where its files
/// are are what makes it private and what bakeoff's cleanup relies on.
pub const RESERVED: [&str; 7] = [
    "listen_addresses",
    "port",
    "unix_socket_directories",
    "data_directory",
    "config_file",
    "hba_file",
    "ident_file",
];

/// The port in the socket's name (`.s.PGSQL.5432`): the private socket directory makes it
/// private, so every server can use the same one.
pub const PORT: u16 = 5432;

/// `shared_buffers` is a quarter of memory up to this: beyond it PostgreSQL's own advice is
/// that the page cache serves better than more buffers.
pub const SHARED_BUFFERS_CAP: u64 = 8 << 30;

/// Connections beyond the clients': bakeoff's own (statistics, setup), pgbench's initial one,
/// and the superuser reserve.
pub const CONNECTION_MARGIN: u32 = 10;

pub use crate::sizing::Sizing;

/// bakeoff's defaults (see docs/postgres.md for why each): a quarter of the memory the server
/// may use as `shared_buffers` (at most [`SHARED_BUFFERS_CAP`]), connections for the clients
/// and a margin, no TCP, the private socket directory, no logging collector (the log goes to
/// `pg_ctl -l`). Durability settings stay PostgreSQL's unless the user sets them.
pub fn defaults(sizing: &Sizing, socket_dir: &Path) -> Settings {
    let buffers_mb = (sizing.server_memory() / 4).min(SHARED_BUFFERS_CAP) >> 20;
    let mut s = Settings::new();
    let mut set = |k: &str, v: String| s.insert(k.to_string(), v);
    set("shared_buffers", format!("{}MB", buffers_mb.max(16)));
    set(
        "max_connections",
        (sizing.clients + CONNECTION_MARGIN).to_string(),
    );
    set("listen_addresses", String::new());
    set(
        "unix_socket_directories",
        socket_dir.to_string_lossy().into_owned(),
    );
    set("port", PORT.to_string());
    set("logging_collector", "off".into());
    s
}

/// Checkpoint intervals in a measured window by default: `checkpoint_timeout` is the window
/// divided by this (docs/methodology.md, "Checkpoint cycles").
pub const CHECKPOINT_CYCLES_PER_WINDOW: u64 = 2;

/// PostgreSQL's smallest `checkpoint_timeout`, s.
pub const MIN_CHECKPOINT_TIMEOUT_S: u64 = 30;

/// PostgreSQL's largest `checkpoint_timeout`, s (a day).
pub const MAX_CHECKPOINT_TIMEOUT_S: u64 = 86_400;

/// The `checkpoint_timeout` bakeoff sets for a measured window of `window`: the window divided
/// into [`CHECKPOINT_CYCLES_PER_WINDOW`] intervals, whole seconds rounded up, within
/// PostgreSQL's range (so a window under a minute has one interval of 30 s and a shorter last
/// one).
pub fn checkpoint_timeout_for(window: std::time::Duration) -> String {
    let per = window.as_secs().div_ceil(CHECKPOINT_CYCLES_PER_WINDOW);
    let s = per.clamp(MIN_CHECKPOINT_TIMEOUT_S, MAX_CHECKPOINT_TIMEOUT_S);
    format!("{s}s")
}

/// The defaults with the user's settings over them (keys lower-cased, as PostgreSQL's are).
pub fn merge(defaults: Settings, user: &Settings) -> Settings {
    let mut all = defaults;
    for (k, v) in user {
        all.insert(k.to_ascii_lowercase(), v.clone());
    }
    all
}

/// What `postgres --describe-config` says about every setting of these binaries.
pub fn catalog(binaries: &Binaries, exec: &mut Exec) -> Result<Catalog, PgError> {
    let cmd = Cmd::new(&binaries.tool("postgres"), &["--describe-config"]).timeout(PROBE_TIMEOUT);
    let out = exec.run_cmd(&cmd)?;
    parse_describe_config(&out).map_err(PgError::Environment)
}

/// Refuses a user's setting that the run decides, that does not exist, or whose value does not
/// fit its type or range, naming it and what is allowed.
pub fn check_user_settings(catalog: &Catalog, user: &Settings) -> Result<(), PgError> {
    for (key, value) in user {
        let key = key.to_ascii_lowercase();
        let refuse = |reason: String| PgError::Setting {
            key: key.clone(),
            value: value.clone(),
            reason,
        };
        if RESERVED.contains(&key.as_str()) {
            return Err(refuse(
                "bakeoff decides it: the server listens only on a private unix socket and keeps \
                 its files where the run put them"
                    .into(),
            ));
        }
        let Some(doc) = catalog.get(&key) else {
            let hint = nearest(catalog, &key)
                .map(|k| format!(" (did you mean {k}?)"))
                .unwrap_or_default();
            return Err(refuse(format!(
                "not a setting of this PostgreSQL{hint}; `postgres --describe-config` lists them"
            )));
        };
        check_value(doc, value).map_err(|allowed| refuse(format!("{key} takes {allowed}")))?;
    }
    Ok(())
}

/// postgresql.conf lines for `settings`, every value quoted (valid for every type).
pub fn render(settings: &Settings) -> String {
    let mut text = String::from("# Written by bakeoff: the run's settings (docs/postgres.md).\n");
    for (k, v) in settings {
        let quoted = v.replace('\\', "\\\\").replace('\'', "''");
        text.push_str(&format!("{k} = '{quoted}'\n"));
    }
    text
}

/// Has the server's own parser read `settings` (`postgres -C` on a scratch directory holding
/// only them, which root may run): a value it refuses is an error with its hint of what is
/// allowed. Then `shared_buffers` must fit in the memory the server may use (the server
/// would fail to start, after initdb).
pub fn server_check(
    binaries: &Binaries,
    settings: &Settings,
    sizing: &Sizing,
    exec: &mut Exec,
) -> Result<(), PgError> {
    let scratch = tempfile::tempdir().map_err(PgError::io("creating", "a scratch directory"))?;
    let conf = scratch.path().join("postgresql.conf");
    std::fs::write(&conf, render(settings)).map_err(PgError::io("writing", &conf))?;
    let dir = scratch.path().to_string_lossy().into_owned();
    // Each -C reads the whole file: the first refuses any wrong value.
    let buffers = show(binaries, &dir, "shared_buffers", settings, exec)?;
    let block = show(binaries, &dir, "block_size", settings, exec)?;
    let bytes = buffers.saturating_mul(block);
    let memory = sizing.server_memory();
    if bytes > memory {
        return Err(PgError::Setting {
            key: "shared_buffers".into(),
            value: settings.get("shared_buffers").cloned().unwrap_or_default(),
            reason: format!(
                "{bytes} bytes is more than the {memory} bytes of memory the server may use \
                 (the machine's, or the run's memory limit)"
            ),
        });
    }
    Ok(())
}

/// `postgres -C key`: the number the server reads for `key` (in its own unit), or an error
/// with the server's complaints about the settings.
fn show(
    binaries: &Binaries,
    dir: &str,
    key: &str,
    settings: &Settings,
    exec: &mut Exec,
) -> Result<u64, PgError> {
    let cmd = Cmd::new(&binaries.tool("postgres"), &["-C", key, "-D", dir]).timeout(PROBE_TIMEOUT);
    let out = exec.output(&cmd)?;
    if out.success() {
        return out.stdout.trim().parse().map_err(|_| {
            PgError::Environment(format!(
                "`postgres -C {key}` printed {:?}, not a number",
                out.stdout.trim()
            ))
        });
    }
    let complaints = server_complaints(&out.stderr);
    let Some(first) = complaints.first() else {
        return Err(PgError::Environment(format!(
            "`postgres -C` could not check the settings ({}): {}",
            out.describe(),
            out.stderr
        )));
    };
    let key = settings
        .keys()
        .find(|k| first.contains(&format!("\"{k}\"")))
        .cloned()
        .unwrap_or_default();
    Err(PgError::Setting {
        value: settings.get(&key).cloned().unwrap_or_default(),
        key,
        reason: complaints.join("; "),
    })
}

/// The messages and hints of a server that refused its configuration (`LOG:  invalid value
/// for parameter "wal_level": "bogus"`, `HINT:  Available values: ...`), without the notes
/// that are not complaints.
pub fn server_complaints(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|line| {
            ["LOG:", "HINT:", "DETAIL:"]
                .iter()
                .find_map(|tag| line.split_once(tag).map(|(_, rest)| rest.trim()))
        })
        .filter(|m| !m.starts_with("skipping missing configuration file"))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_checkpoint_interval_is_half_the_window_within_postgres_range() {
        let at = |s: u64| checkpoint_timeout_for(std::time::Duration::from_secs(s));
        assert_eq!(at(120), "60s");
        assert_eq!(at(61), "31s");
        assert_eq!(at(20), "30s", "PostgreSQL's minimum");
        assert_eq!(at(10 * 86_400), "86400s", "and its maximum");
    }

    #[test]
    fn defaults_follow_the_memory_the_server_may_use_and_the_clients() {
        let socket = Path::new("/tmp/bakeoff-pg-x");
        let machine = Sizing {
            memory_bytes: 24 * GIB,
            mem_limit_bytes: None,
            clients: 8,
        };
        let d = defaults(&machine, socket);
        assert_eq!(d["shared_buffers"], "6144MB");
        assert_eq!(d["max_connections"], "18");
        assert_eq!(d["listen_addresses"], "");
        assert_eq!(d["unix_socket_directories"], "/tmp/bakeoff-pg-x");
        assert_eq!(d["port"], "5432");
        assert_eq!(d["logging_collector"], "off");
        assert!(!d.contains_key("fsync") && !d.contains_key("synchronous_commit"));
        let limited = Sizing {
            mem_limit_bytes: Some(GIB),
            ..machine
        };
        assert_eq!(defaults(&limited, socket)["shared_buffers"], "256MB");
        let big = Sizing {
            memory_bytes: 256 * GIB,
            ..machine
        };
        assert_eq!(defaults(&big, socket)["shared_buffers"], "8192MB", "capped");
        let user = Settings::from([("Shared_Buffers".to_string(), "1GB".to_string())]);
        assert_eq!(merge(d, &user)["shared_buffers"], "1GB");
    }

    #[test]
    fn rendering_quotes_every_value_as_postgresql_conf_reads_it() {
        let s = Settings::from([
            ("listen_addresses".to_string(), String::new()),
            ("search_path".to_string(), r"it's \here".to_string()),
        ]);
        let text = render(&s);
        assert!(text.contains("listen_addresses = ''\n"), "{text}");
        assert!(text.contains(r"search_path = 'it''s \\here'"), "{text}");
    }

    #[test]
    fn user_settings_are_refused_by_name_with_what_is_allowed() {
        let captured = include_str!("fixtures/describe-config-15.txt");
        let catalog = parse_describe_config(captured).unwrap();
        let one = |k: &str, v: &str| Settings::from([(k.to_string(), v.to_string())]);
        let check = |k: &str, v: &str| check_user_settings(&catalog, &one(k, v));
        assert!(check("work_mem", "8MB").is_ok());
        assert!(check("FSYNC", "off").is_ok(), "keys are case-insensitive");
        let err = check("work_mme", "8MB").unwrap_err().to_string();
        assert!(err.starts_with("pg.work_mme=8MB: not a setting"), "{err}");
        assert!(err.contains("did you mean work_mem?"), "{err}");
        let err = check("max_connections", "-5").unwrap_err().to_string();
        assert!(
            err.contains("max_connections takes an integer from 1"),
            "{err}"
        );
        let err = check("port", "5433").unwrap_err().to_string();
        assert!(err.contains("pg.port=5433: bakeoff decides it"), "{err}");
    }

    #[test]
    fn the_servers_complaints_keep_its_message_and_hint() {
        // Captured from `postgres -C wal_level -D DIR` (PostgreSQL 15.18) with a bad value.
        let stderr = "\
2026-11-23 20:26:33.753 GMT [17193] LOG:  skipping missing configuration file \"/tmp/pgc/postgresql.auto.conf\"
2026-11-23 20:26:33.753 GMT [17193] LOG:  invalid value for parameter \"wal_level\": \"bogus\"
2026-11-23 20:26:33.753 GMT [17193] HINT:  Available values: minimal, replica, logical.
2026-11-23 20:26:33.753 GMT [17193] FATAL:  configuration file \"/tmp/pgc/postgresql.conf\" contains errors";
        assert_eq!(
            server_complaints(stderr),
            vec![
                "invalid value for parameter \"wal_level\": \"bogus\"",
                "Available values: minimal, replica, logical."
            ]
        );
        assert!(server_complaints("FATAL:  something else").is_empty());
    }
}
