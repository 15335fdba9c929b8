//! The two checks of a user's `my.KEY=VALUE` before anything is created: the key must be one
//! of the server's own variables (the table `mariadbd --verbose --help` prints; the places bakeoff
//! decides are refused), then the server's own option parser reads the whole option file
//! (`mariadbd --defaults-file=CNF --verbose --help`), and what it refuses or adjusts is passed on
//! in its own words, naming the user's key.

use super::variables::{normalize, render, Variables, RESERVED};
use super::{Binaries, MyError};
use crate::sizing::Sizing;
use bakeoff_stack::exec::{Cmd, Exec, Outcome, PROBE_TIMEOUT};
use std::collections::BTreeMap;

/// Every variable of the server and the value its help table shows.
pub type Catalog = BTreeMap<String, String>;

/// The variables in `mariadbd --verbose --help`'s table (after `Variables (--variable-name=
/// value)` and its `----` rule, up to the blank line), by `_` name, with the value shown.
pub fn parse_help(text: &str) -> Result<Catalog, String> {
    let mut lines = text.lines();
    lines
        .by_ref()
        .find(|l| l.starts_with("Variables (--variable-name=value)"))
        .ok_or("`mariadbd --verbose --help` printed no table of variables")?;
    lines
        .by_ref()
        .find(|l| l.starts_with("----"))
        .ok_or("`mariadbd --verbose --help` printed no rule under its table's header")?;
    let catalog: Catalog = lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let (name, value) = l.trim().split_once(' ').unwrap_or((l.trim(), ""));
            (normalize(name), value.trim().to_string())
        })
        .collect();
    match catalog.is_empty() {
        true => Err("`mariadbd --verbose --help` listed no variables".into()),
        false => Ok(catalog),
    }
}

/// The server's variables, as `mariadbd --no-defaults --verbose --help` lists them.
pub fn catalog(binaries: &Binaries, exec: &mut Exec) -> Result<Catalog, MyError> {
    let out = help(binaries, "--no-defaults", exec)?;
    if !out.success() {
        return Err(MyError::Environment(format!(
            "`mariadbd --verbose --help` failed ({}): {}",
            out.describe(),
            out.stderr
        )));
    }
    parse_help(&out.stdout).map_err(MyError::Environment)
}

fn help(binaries: &Binaries, defaults: &str, exec: &mut Exec) -> Result<Outcome, MyError> {
    let program = Binaries::path(&binaries.mariadbd);
    let cmd = Cmd::new(&program, &[defaults, "--verbose", "--help"]).timeout(PROBE_TIMEOUT);
    Ok(exec.output(&cmd)?)
}

/// Refuses a user's variable that the run decides or that this server does not have, naming
/// it and what is allowed.
pub fn check_user_variables(catalog: &Catalog, user: &Variables) -> Result<(), MyError> {
    for (key, value) in user {
        let key = normalize(key);
        let refuse = |reason: String| MyError::Setting {
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
        if !catalog.contains_key(&key) {
            let hint = nearest(catalog, &key)
                .map(|k| format!(" (did you mean {k}?)"))
                .unwrap_or_default();
            return Err(refuse(format!(
                "not a variable of this MariaDB{hint}; `mariadbd --verbose --help` lists them"
            )));
        }
    }
    Ok(())
}

/// The known variable nearest to `key` by edit distance, if one is close.
pub fn nearest<'a>(catalog: &'a Catalog, key: &str) -> Option<&'a str> {
    catalog
        .keys()
        .map(|k| (strsim::levenshtein(k, key), k))
        .filter(|(d, _)| *d <= 3.max(key.len() / 4))
        .min()
        .map(|(_, k)| k.as_str())
}

/// Has the server's own option parser read `all` (a scratch my.cnf holding only them): a value
/// it refuses, or adjusts to another, is an error naming the user's key with the server's
/// words. Then the buffer pool it would allocate must fit in the memory the server may use.
pub fn server_check(
    binaries: &Binaries,
    all: &Variables,
    user: &Variables,
    sizing: &Sizing,
    exec: &mut Exec,
) -> Result<(), MyError> {
    let scratch = tempfile::tempdir().map_err(MyError::io("creating", "a scratch directory"))?;
    let cnf = scratch.path().join("my.cnf");
    std::fs::write(&cnf, render(all)).map_err(MyError::io("writing", &cnf))?;
    let out = help(
        binaries,
        &format!("--defaults-file={}", cnf.display()),
        exec,
    )?;
    if let Some((key, reason)) = refusal(&out.stderr, user) {
        let value = user.get(&key).cloned().unwrap_or_default();
        return Err(MyError::Setting { key, value, reason });
    }
    if !out.success() {
        return Err(MyError::Environment(format!(
            "`mariadbd --verbose --help` could not check the variables ({}): {}",
            out.describe(),
            out.stderr
        )));
    }
    let catalog = parse_help(&out.stdout).map_err(MyError::Environment)?;
    let pool = catalog.get("innodb_buffer_pool_size");
    let bytes: u64 = pool.and_then(|p| p.parse().ok()).unwrap_or(0);
    let memory = sizing.server_memory();
    if bytes > memory {
        let key = "innodb_buffer_pool_size".to_string();
        return Err(MyError::Setting {
            value: all.get(&key).cloned().unwrap_or_default(),
            key,
            reason: format!(
                "{bytes} bytes is more than the {memory} bytes of memory the server may use \
                 (the machine's, or the run's memory limit)"
            ),
        });
    }
    Ok(())
}

/// The server's complaints about the user's variables in its standard error: each `[ERROR]`
/// (but `Aborting`), and each line but a `[Note]` that names one of `user`'s keys (a value
/// `adjusted to` another, a variable that does nothing any more); the key of the first that
/// names one, and all of them joined.
pub fn refusal(stderr: &str, user: &Variables) -> Option<(String, String)> {
    let names = |line: &str, key: &str| {
        let dash = key.replace('_', "-");
        [key, dash.as_str()].iter().any(|k| {
            line.contains(&format!("'{k}'"))
                || line.contains(&format!("'{k}="))
                || line.contains(&format!("'--{k}'"))
        })
    };
    let message = |line: &str| {
        let after = ["[ERROR] ", "[Warning] "]
            .iter()
            .find_map(|tag| line.split_once(tag).map(|(_, rest)| rest))
            .unwrap_or(line);
        let after = ["Buffered error: ", "Buffered warning: "]
            .iter()
            .find_map(|noise| after.strip_prefix(noise))
            .unwrap_or(after);
        // `/usr/sbin/mariadbd: Error while ...`: the program's path says nothing.
        let after = match after.split_once(": ") {
            Some((program, rest)) if program.ends_with("mariadbd") => rest,
            _ => after,
        };
        after.trim().to_string()
    };
    // Consequences, not causes: the plugin whose option failed is disabled, the server stops.
    let consequence = |l: &str| {
        l.trim_end().ends_with("[ERROR] Aborting") || l.contains("Parsing options for plugin")
    };
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            let error = l.contains("[ERROR]") && !consequence(l);
            error || (!l.contains("[Note]") && user.keys().any(|k| names(l, k)))
        })
        .collect();
    let key = complaints
        .iter()
        .find_map(|l| user.keys().find(|k| names(l, k)))?;
    let reason: Vec<String> = complaints.iter().map(|l| message(l)).collect();
    Some((key.clone(), reason.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mariadbd --no-defaults --verbose --help` of 10.11, its table of variables.
    const CAPTURED: &str = include_str!("fixtures/mariadbd-help-10.11.txt");

    #[test]
    fn the_help_table_lists_the_servers_variables() {
        let c = parse_help(CAPTURED).unwrap();
        assert_eq!(c["innodb_buffer_pool_size"], "134217728");
        assert_eq!(c["max_connections"], "151");
        assert!(c.contains_key("innodb_flush_log_at_trx_commit"));
        assert!(c.contains_key("skip_networking") && c.contains_key("socket"));
        assert!(!c.keys().any(|k| k.contains('-')), "keys in _ form");
        assert!(parse_help("Usage: mariadbd [OPTIONS]\n").is_err());
    }

    #[test]
    fn user_variables_are_refused_by_name_with_what_is_allowed() {
        let catalog = parse_help(CAPTURED).unwrap();
        let one = |k: &str, v: &str| Variables::from([(k.to_string(), v.to_string())]);
        let check = |k: &str, v: &str| check_user_variables(&catalog, &one(k, v));
        assert!(check("innodb_flush_log_at_trx_commit", "2").is_ok());
        assert!(
            check("Innodb-Flush-Log-At-Trx-Commit", "2").is_ok(),
            "either spelling"
        );
        let err = check("innodb_bufer_pool_size", "1G")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("my.innodb_bufer_pool_size=1G: not a variable"),
            "{err}"
        );
        assert!(
            err.contains("did you mean innodb_buffer_pool_size?"),
            "{err}"
        );
        let err = check("socket", "/tmp/s").unwrap_err().to_string();
        assert!(
            err.contains("my.socket=/tmp/s: bakeoff decides it"),
            "{err}"
        );
        let err = check("colour_scheme", "blue").unwrap_err().to_string();
        assert!(!err.contains("did you mean"), "{err}");
    }

    #[test]
    fn the_servers_complaints_keep_its_words_and_name_the_key() {
        // Captured from `mariadbd --defaults-file=CNF --verbose --help` (10.11.19).
        let one = |k: &str, v: &str| Variables::from([(k.to_string(), v.to_string())]);
        let suffix = "\
2026-11-26 22:16:15 0 [Warning] Could not increase number of max_open_files to more than 20000 (request: 32184)
2026-11-26 22:16:15 0 [ERROR] Buffered error: Unknown suffix 'l' used for variable 'max_connections' (value 'lots'). Legal suffix characters are: K, M, G, T, P, E
2026-11-26 22:16:15 0 [ERROR] Buffered error: /usr/sbin/mariadbd: Error while setting value 'lots' to 'max_connections'";
        let (key, reason) = refusal(suffix, &one("max_connections", "lots")).unwrap();
        assert_eq!(key, "max_connections");
        assert_eq!(
            reason,
            "Unknown suffix 'l' used for variable 'max_connections' (value 'lots'). Legal suffix \
             characters are: K, M, G, T, P, E; Error while setting value 'lots' to 'max_connections'"
        );
        let plugin = "\
2026-11-26 22:16:15 0 [ERROR] /usr/sbin/mariadbd: Error while setting value 'bogus' to 'innodb-flush-method'
2026-11-26 22:16:15 0 [ERROR] Parsing options for plugin 'InnoDB' failed. Disabling plugin";
        let (key, reason) = refusal(plugin, &one("innodb_flush_method", "bogus")).unwrap();
        assert_eq!(key, "innodb_flush_method");
        assert_eq!(
            reason,
            "Error while setting value 'bogus' to 'innodb-flush-method'"
        );
        let adjusted = "2026-11-26 22:16:16 0 [Warning] Buffered warning: option 'max_connections': unsigned value 0 adjusted to 10";
        let (_, reason) = refusal(adjusted, &one("max_connections", "0")).unwrap();
        assert_eq!(
            reason,
            "option 'max_connections': unsigned value 0 adjusted to 10"
        );
        let ignored = "x [Warning] /usr/sbin/mariadbd: ignoring option '--innodb-file-per-table' due to invalid value 'maybe'";
        let (key, _) = refusal(ignored, &one("innodb_file_per_table", "maybe")).unwrap();
        assert_eq!(key, "innodb_file_per_table");
        let unrelated =
            "x [Warning] Could not increase number of max_open_files to more than 20000";
        assert_eq!(refusal(unrelated, &one("max_connections", "20")), None);
    }
}
