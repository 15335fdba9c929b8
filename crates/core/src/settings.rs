//! Settings as the user wrote them: `key = value` pairs from a TOML file or `--set`, each with
//! where it came from, so validation errors can point at `file:line` (ripgrep's "low args").

use std::collections::BTreeMap;
use std::fmt;

/// Where a setting came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A line of a workload file.
    File { path: String, line: usize },
    /// `--set` on the command line.
    CommandLine,
    /// The default declared by a workload.
    Default { workload: String },
    /// Another command-line option, e.g. `--sweep`.
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{path}:{line}"),
            Origin::CommandLine => write!(f, "--set"),
            Origin::Default { workload } => write!(f, "default of workload '{workload}'"),
            Origin::Flag(flag) => write!(f, "{flag}"),
        }
    }
}

/// A validation error that names the setting, where it came from and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {key}: {message}")]
pub struct SettingError {
    /// Where the offending value was written.
    pub origin: Origin,
    /// The key (or `role.key`) that failed.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl SettingError {
    /// Builds an error for `key` written at `origin`.
    pub fn new(origin: Origin, key: impl Into<String>, message: impl Into<String>) -> Self {
        SettingError {
            origin,
            key: echo(&key.into()).into_owned(),
            message: message.into(),
        }
    }
}

/// Most characters of a value a message echoes: enough to recognise it, not a screenful.
pub const ECHO_MAX_CHARS: usize = 200;

/// `text` as a message may echo it: at most [`ECHO_MAX_CHARS`] characters, cut with "…".
pub fn echo(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(ECHO_MAX_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &text[..cut])),
    }
}

/// One value as written, in text form (TOML numbers and booleans are turned into text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The value as text, e.g. `8k`, `true`, `32`.
    pub value: String,
    /// Where it was written.
    pub origin: Origin,
}

/// An ordered set of settings; later inserts win.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    map: BTreeMap<String, Setting>,
}

impl Settings {
    /// Parses one `--set` argument: `key=value[,key=value...]`.
    pub fn parse_set(arg: &str) -> Result<Settings, SettingError> {
        let mut settings = Settings::default();
        for (key, value) in Settings::parse_set_pairs(arg)? {
            settings.insert(&key, &value, Origin::CommandLine);
        }
        Ok(settings)
    }

    /// The `key=value` pairs of one `--set` argument, in the order written.
    pub fn parse_set_pairs(arg: &str) -> Result<Vec<(String, String)>, SettingError> {
        let mut pairs = Vec::new();
        for part in arg.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let pair = part.split_once('=').filter(|(k, _)| !k.trim().is_empty());
            let Some((key, value)) = pair else {
                return Err(SettingError::new(
                    Origin::CommandLine,
                    part,
                    "expected key=value (e.g. --set bs=8k,jobs=4)",
                ));
            };
            pairs.push((key.trim().to_string(), value.trim().to_string()));
        }
        Ok(pairs)
    }

    /// Sets `key` to `value`.
    pub fn insert(&mut self, key: &str, value: &str, origin: Origin) {
        let setting = Setting {
            value: value.to_string(),
            origin,
        };
        self.map.insert(key.to_string(), setting);
    }

    /// Overlays `other` on `self`: its values win.
    pub fn merge(&mut self, other: &Settings) {
        for (k, v) in &other.map {
            self.map.insert(k.clone(), v.clone());
        }
    }

    /// Takes `key` out, returning its setting (a key read before the others are planned,
    /// such as a study workload's `ramp`).
    pub fn remove(&mut self, key: &str) -> Option<Setting> {
        self.map.remove(key)
    }

    /// The setting for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.map.get(key)
    }

    /// Iterates in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Setting)> {
        self.map.iter()
    }

    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The 1-based line of byte offset `pos` in `text`.
pub fn line_of(text: &str, pos: usize) -> usize {
    let before = &text.as_bytes()[..pos.min(text.len())];
    before.iter().filter(|&&b| b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_parses_comma_separated_pairs() {
        let s = Settings::parse_set("bs=8k, direct=true,jobs=4").unwrap();
        assert_eq!(s.get("bs").unwrap().value, "8k");
        assert_eq!(s.get("jobs").unwrap().value, "4");
        assert_eq!(s.get("direct").unwrap().origin, Origin::CommandLine);
        let err = Settings::parse_set("bs").unwrap_err();
        assert!(err.to_string().contains("expected key=value"), "{err}");
    }

    #[test]
    fn later_settings_win() {
        let mut a = Settings::parse_set("bs=4k,jobs=1").unwrap();
        a.merge(&Settings::parse_set("bs=8k").unwrap());
        assert_eq!(a.get("bs").unwrap().value, "8k");
        assert_eq!(a.get("jobs").unwrap().value, "1");
    }
}
