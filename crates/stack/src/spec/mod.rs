//! Stack specs as written: `TYPE[:key=value,...]` (e.g. `zfs:recordsize=8k,primarycache=metadata`,
//! `xfs:mkfs=-b size=4096,mount=noatime`, `dir=/srv/data`), validated into a [`StackSpec`].
//! `mount=` and `mkfs=` values may themselves contain commas: a following piece that is not a
//! key of the stack type belongs to them (`mount=noatime,nodiratime`).
//!
//! The grammar lives here, the spec it makes and the keys common to many types
//! ([`COMMON_KEYS`]: size, devices, offset, mount, mkfs) in [`model`], which the drivers read;
//! each type's own keys are documented, parsed and checked by its driver
//! ([`crate::fs::Driver`]), found in the registry by the type's name, and kept as written in
//! [`StackSpec::options`].

pub mod model;

pub use self::model::{need_devices, OwnKeys, Parsed, StackKind, StackSpec, COMMON_KEYS};
pub use crate::error::StackSpecError;
use bakeoff_core::units::parse_size;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Splits `key=value` pieces, gluing pieces that are not keys of `kind` onto a preceding
/// `mount=`/`mkfs=` value.
fn pieces(kind: StackKind, body: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for piece in body.split(',') {
        let key = piece.split_once('=').map(|(k, _)| k.trim());
        let glue = matches!(out.last(), Some((k, _)) if k == "mount" || k == "mkfs");
        match key {
            Some(k) if kind.accepts(k) || !glue => {
                let (k, v) = piece.split_once('=').expect("has =");
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
            _ if glue => {
                let last = out.last_mut().expect("glue has a last");
                last.1.push(',');
                last.1.push_str(piece.trim());
            }
            _ => out.push((piece.trim().to_string(), String::new())),
        }
    }
    out
}

impl StackSpec {
    /// Parses and validates a spec.
    pub fn parse(text: &str) -> Result<StackSpec, StackSpecError> {
        let err = |m: String| StackSpecError {
            spec: text.to_string(),
            message: m,
        };
        let text_t = text.trim();
        let (type_name, body) = match text_t.split_once(':') {
            Some((t, b)) => (t, b),
            None if text_t.starts_with("dir=") => ("dir", text_t),
            None => (text_t, ""),
        };
        let body = if type_name == "dir" && body.starts_with("dir=") {
            body.replacen("dir=", "path=", 1)
        } else {
            body.to_string()
        };
        let kind = StackKind::named(type_name).ok_or_else(|| {
            let names = StackKind::names();
            err(format!(
                "unknown stack type '{type_name}' (allowed: {names})"
            ))
        })?;
        let mut spec = StackSpec {
            text: text_t.to_string(),
            kind,
            size: None,
            devices: 1,
            mkfs: Vec::new(),
            mount: None,
            offset: 0,
            options: BTreeMap::new(),
            typed: Arc::new(()),
            roles: Vec::new(),
        };
        for (key, value) in pieces(kind, &body)
            .into_iter()
            .filter(|(k, _)| !k.is_empty())
        {
            spec.set(&key, &value).map_err(err)?;
        }
        spec.typed = spec.check().map_err(err)?;
        spec.roles = (kind.driver().roles)(&spec);
        Ok(spec)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if !self.kind.accepts(key) {
            let keys: Vec<&str> = self.kind.keys().iter().map(|k| k.key).collect();
            return Err(format!(
                "unknown key '{key}' for {} (allowed: {})",
                self.kind.name(),
                keys.join(", ")
            ));
        }
        let size = |v: &str| parse_size(v).map_err(|m| format!("{key}: {m}"));
        match key {
            "size" => self.size = Some(size(value)?),
            "devices" => {
                let n = value.parse().ok().filter(|n| (1..=16).contains(n));
                self.devices = n.ok_or(format!(
                    "devices: '{value}' is out of range (allowed 1 to 16)"
                ))?
            }
            "mkfs" => self.mkfs = value.split_whitespace().map(str::to_string).collect(),
            "mount" => self.mount = Some(value.to_string()),
            "offset" => self.offset = size(value)?,
            own => {
                self.options.insert(own.to_string(), value.to_string());
            }
        }
        Ok(())
    }

    /// The common rules, then the type's own (values, device counts, required keys): its own
    /// keys, parsed.
    fn check(&self) -> Result<Parsed, String> {
        if self.offset % 512 != 0 {
            return Err(format!(
                "offset {} must be a multiple of 512 (a sector)",
                self.offset
            ));
        }
        (self.kind.driver().check)(self)
    }

    /// Parses a TOML table: `type = "zfs"` plus the same keys as the command-line form, e.g.
    /// `[stack]\ntype = "zfs"\nrecordsize = "8k"\nprimarycache = "metadata"`.
    pub fn from_table(table: &toml::Table) -> Result<StackSpec, StackSpecError> {
        let err = |m: &str| StackSpecError {
            spec: format!("{table}").trim().replace('\n', ", "),
            message: m.to_string(),
        };
        let kind = table.get("type").and_then(|t| t.as_str()).ok_or_else(|| {
            let names = StackKind::names();
            err(&format!("needs type = \"ext4\" (allowed: {names})"))
        })?;
        let mut pieces = Vec::new();
        for (k, v) in table.iter().filter(|(k, _)| *k != "type") {
            let text = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                _ => return Err(err(&format!("{k}: expected a string, number or boolean"))),
            };
            pieces.push(format!("{k}={text}"));
        }
        let text = if pieces.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}:{}", pieces.join(","))
        };
        StackSpec::parse(&text)
    }

    /// Parses the command-line form, or a TOML file holding one `[stack]` table.
    pub fn parse_arg(arg: &str) -> Result<StackSpec, StackSpecError> {
        let path = std::path::Path::new(arg);
        if !arg.ends_with(".toml") || !path.is_file() {
            return StackSpec::parse(arg);
        }
        let err = |m: String| StackSpecError {
            spec: arg.to_string(),
            message: m,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let doc: toml::Table = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
        let table = doc
            .get("stack")
            .and_then(|t| t.as_table())
            .ok_or_else(|| err("expected a [stack] table".into()))?;
        StackSpec::from_table(table)
    }
}

#[cfg(test)]
mod tests;
