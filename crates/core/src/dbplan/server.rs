//! A server's own settings (`pg.KEY`, `my.KEY`) taken apart from the workload's keys: passed
//! through as text, checked later against the server's own list of its settings.

use super::Db;
use crate::settings::{SettingError, Settings};
use crate::values::Val;
use std::collections::BTreeMap;

/// A server's own settings as the user gave them: `pg.KEY` and `my.KEY`, by key without the
/// prefix (lower case).
#[derive(Default)]
pub(super) struct ServerSettings {
    pub(super) pg: BTreeMap<String, String>,
    pub(super) my: BTreeMap<String, String>,
}

impl ServerSettings {
    /// Refuses the settings of a database other than `db`, naming the first such key.
    pub(super) fn check_for(&self, db: Db, user: &Settings) -> Result<(), SettingError> {
        for (prefix, of, map) in [
            ("pg.", Db::Postgres, &self.pg),
            ("my.", Db::Mariadb, &self.my),
        ] {
            if db == of || map.is_empty() {
                continue;
            }
            let given = (user.iter().map(|(k, _)| k))
                .find(|k| k.starts_with(prefix))
                .expect("a key with the prefix");
            return Err(user_val(user, given).invalid(format!(
                "{prefix}* settings apply to db={} (this run's database is {})",
                of.name(),
                db.name()
            )));
        }
        Ok(())
    }
}

/// The `pg.*` and `my.*` settings apart from the others (such a key must name a setting).
pub(super) fn split_server_settings(
    user: &Settings,
) -> Result<(Settings, ServerSettings), SettingError> {
    let mut plain = Settings::default();
    let mut server = ServerSettings::default();
    for (k, s) in user.iter() {
        let (prefix, map, example) = if k.starts_with("pg.") {
            ("pg.", &mut server.pg, "pg.shared_buffers=1GB")
        } else if k.starts_with("my.") {
            ("my.", &mut server.my, "my.innodb_doublewrite=OFF")
        } else {
            plain.insert(k, &s.value, s.origin.clone());
            continue;
        };
        let name = &k[prefix.len()..];
        let setting_name = |b: u8| b.is_ascii_alphanumeric() || b"_.-".contains(&b);
        if name.is_empty() || !name.bytes().all(setting_name) {
            return Err(SettingError::new(
                s.origin.clone(),
                k,
                format!("{prefix} must be followed by a setting name, e.g. {example}"),
            ));
        }
        // MariaDB takes `-` and `_` alike in a variable's name; its list and record use `_`.
        let name = match prefix {
            "my." => name.to_ascii_lowercase().replace('-', "_"),
            _ => name.to_ascii_lowercase(),
        };
        map.insert(name, s.value.clone());
    }
    Ok((plain, server))
}

pub(super) fn user_val(user: &Settings, key: &str) -> Val {
    let s = user.get(key).expect("present");
    Val {
        key: key.to_string(),
        text: s.value.clone(),
        origin: s.origin.clone(),
    }
}
