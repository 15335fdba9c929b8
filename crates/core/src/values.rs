//! Typed reading of one setting with its range, so every message names the key, where the
//! value came from and what is allowed.

use crate::settings::{echo, Origin, SettingError, Settings};
use crate::units;
use std::time::Duration;

/// One value to validate: its key, text and origin.
#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub key: String,
    pub text: String,
    pub origin: Origin,
}

impl Val {
    /// A value the workload itself supplies (a default, or a fixed part of a plain job).
    pub fn fixed(key: &str, text: &str, workload: &str) -> Val {
        Val {
            key: key.to_string(),
            text: text.to_string(),
            origin: Origin::Default {
                workload: workload.to_string(),
            },
        }
    }

    /// True when the user did not write this value: it is a workload's default.
    pub fn is_default(&self) -> bool {
        matches!(self.origin, Origin::Default { .. })
    }

    /// The text as messages echo it (quoted, shortened).
    pub fn shown(&self) -> String {
        format!("'{}'", echo(&self.text))
    }

    fn err(&self, msg: impl Into<String>) -> SettingError {
        SettingError::new(self.origin.clone(), &self.key, msg)
    }

    /// A byte size in `min..=max`.
    pub fn size(&self, min: u64, max: u64) -> Result<u64, SettingError> {
        let v = units::parse_size(&self.text).map_err(|m| self.err(m))?;
        if v < min || v > max {
            return Err(self.err(format!(
                "{} is out of range (allowed {} to {})",
                self.shown(),
                units::format_bytes(min),
                units::format_bytes(max)
            )));
        }
        Ok(v)
    }

    /// A whole number in `min..=max`.
    pub fn int(&self, min: u64, max: u64) -> Result<u64, SettingError> {
        let v: u64 = self.text.trim().parse().map_err(|_| {
            self.err(format!(
                "{} is not a whole number (allowed {min} to {max})",
                self.shown()
            ))
        })?;
        if v < min || v > max {
            return Err(self.err(format!(
                "{} is out of range (allowed {min} to {max})",
                self.shown()
            )));
        }
        Ok(v)
    }

    /// A positive rate (operations per second) up to `max`.
    pub fn rate(&self, max: f64) -> Result<f64, SettingError> {
        let v: f64 = self.text.trim().parse().map_err(|_| {
            self.err(format!(
                "{} is not a number of operations per second",
                self.shown()
            ))
        })?;
        if !(v > 0.0 && v <= max) {
            return Err(self.err(format!(
                "{} is out of range (allowed more than 0, up to {max})",
                self.shown()
            )));
        }
        Ok(v)
    }

    /// A duration in `min..=max`.
    pub fn duration(&self, min: Duration, max: Duration) -> Result<Duration, SettingError> {
        let v = units::parse_duration(&self.text).map_err(|m| self.err(m))?;
        if v < min || v > max {
            return Err(self.err(format!(
                "{} is out of range (allowed {:?} to {:?})",
                self.shown(),
                min,
                max
            )));
        }
        Ok(v)
    }

    /// A boolean.
    pub fn boolean(&self) -> Result<bool, SettingError> {
        units::parse_bool(&self.text).map_err(|m| self.err(m))
    }

    /// One of `allowed`.
    pub fn choice<'a>(&self, allowed: &[&'a str]) -> Result<&'a str, SettingError> {
        allowed
            .iter()
            .find(|a| **a == self.text.trim())
            .copied()
            .ok_or_else(|| {
                self.err(format!(
                    "{} is not allowed (allowed: {})",
                    self.shown(),
                    allowed.join(", ")
                ))
            })
    }

    /// An error about this value.
    pub fn invalid(&self, msg: impl Into<String>) -> SettingError {
        self.err(msg)
    }
}

/// Reads keys from settings, falling back to declared defaults.
pub(crate) struct Lookup<'a> {
    pub settings: &'a Settings,
    pub workload: &'a str,
}

impl Lookup<'_> {
    /// The value of `key`, or `default` labelled as the workload's default.
    pub fn get(&self, key: &str, default: &str) -> Val {
        match self.settings.get(key) {
            Some(s) => Val {
                key: key.to_string(),
                text: s.value.clone(),
                origin: s.origin.clone(),
            },
            None => Val {
                key: key.to_string(),
                text: default.to_string(),
                origin: Origin::Default {
                    workload: self.workload.to_string(),
                },
            },
        }
    }
}
