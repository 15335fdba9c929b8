//! Stack specs as written: `TYPE[:key=value,...]` (e.g. `zfs:recordsize=8k,primarycache=metadata`,
//! `xfs:mkfs=-b size=4096,mount=noatime`, `dir=/srv/data`), validated into a [`StackSpec`].
//! `mount=` and `mkfs=` values may themselves contain commas: a following piece that is not a
//! key of the stack type belongs to them (`mount=noatime,nodiratime`).

use bakeoff_core::units::{parse_bool, parse_size};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// A kind of stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StackKind {
    /// ext4 on loop devices (or named devices).
    Ext4,
    /// xfs.
    Xfs,
    /// btrfs, possibly over several devices.
    Btrfs,
    /// ZFS: OpenZFS if its module is loaded, else zfs-fuse.
    Zfs,
    /// tmpfs (memory).
    Tmpfs,
    /// A block device handed to the workload (the Oracle ASM analogue).
    Raw,
    /// An existing directory; nothing provisioned.
    Dir,
}

impl StackKind {
    /// Every kind, in the order `bakeoff stack list` shows them.
    pub const ALL: [StackKind; 7] = [
        StackKind::Raw,
        StackKind::Ext4,
        StackKind::Xfs,
        StackKind::Btrfs,
        StackKind::Zfs,
        StackKind::Tmpfs,
        StackKind::Dir,
    ];

    /// The name in specs.
    pub fn name(self) -> &'static str {
        match self {
            StackKind::Ext4 => "ext4",
            StackKind::Xfs => "xfs",
            StackKind::Btrfs => "btrfs",
            StackKind::Zfs => "zfs",
            StackKind::Tmpfs => "tmpfs",
            StackKind::Raw => "raw",
            StackKind::Dir => "dir",
        }
    }

    /// Keys this kind accepts besides ZFS dataset properties.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            StackKind::Ext4 | StackKind::Xfs => &["size", "devices", "mkfs", "mount", "offset"],
            StackKind::Btrfs => &[
                "size", "devices", "mkfs", "mount", "offset", "profile", "metadata",
            ],
            StackKind::Zfs => &[
                "size",
                "devices",
                "offset",
                "layout",
                "log",
                "arc",
                "vdev_cache",
                "prefetch",
                "mount",
            ],
            StackKind::Tmpfs => &["size", "mount"],
            StackKind::Raw => &["size", "offset"],
            StackKind::Dir => &["path"],
        }
    }
}

/// ZFS dataset properties bakeoff passes to `zfs create -o` (and reads back).
pub const ZFS_PROPERTIES: &[&str] = &[
    "recordsize",
    "primarycache",
    "secondarycache",
    "compression",
    "checksum",
    "atime",
    "logbias",
    "sync",
    "dedup",
    "copies",
    "redundant_metadata",
    "xattr",
];

/// How a ZFS pool arranges its devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolLayout {
    /// All devices striped.
    Stripe,
    /// One mirror of all devices.
    Mirror,
    /// One raidz of all devices.
    Raidz,
    /// Stripe of two-way mirrors (RAID 1+0).
    MirrorStripe,
}

/// A validated stack spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StackSpec {
    /// The spec as given.
    pub text: String,
    /// Kind.
    pub kind: StackKind,
    /// Bytes per backing device (`None`: the command's `--size` or the default).
    pub size: Option<u64>,
    /// Number of backing devices.
    pub devices: u32,
    /// Extra mkfs arguments, split on white space.
    pub mkfs: Vec<String>,
    /// Mount options.
    pub mount: Option<String>,
    /// Byte offset of the file system inside each device (a misaligned partition).
    pub offset: u64,
    /// ZFS dataset properties, as given.
    pub zfs_props: BTreeMap<String, String>,
    /// ZFS pool layout.
    pub layout: PoolLayout,
    /// ZFS: a separate log device.
    pub log: bool,
    /// ZFS ARC cap in bytes.
    pub arc: Option<u64>,
    /// ZFS (zfs-fuse) vdev cache size in bytes.
    pub vdev_cache: Option<u64>,
    /// ZFS prefetch on or off.
    pub prefetch: Option<bool>,
    /// btrfs data profile.
    pub profile: Option<String>,
    /// btrfs metadata profile.
    pub metadata: Option<String>,
    /// `dir`: the existing directory.
    pub path: Option<PathBuf>,
}

/// A spec that cannot be built as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stack '{spec}': {message}")]
pub struct SpecError {
    /// The spec as written.
    pub spec: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for StackSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Splits `key=value` pieces, gluing pieces that are not keys of `kind` onto a preceding
/// `mount=`/`mkfs=` value.
fn pieces(kind: StackKind, body: &str) -> Vec<(String, String)> {
    let is_key = |k: &str| {
        kind.keys().contains(&k) || (kind == StackKind::Zfs && ZFS_PROPERTIES.contains(&k))
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for piece in body.split(',') {
        let key = piece.split_once('=').map(|(k, _)| k.trim());
        let glue = matches!(out.last(), Some((k, _)) if k == "mount" || k == "mkfs");
        match key {
            Some(k) if is_key(k) || !glue => {
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
    pub fn parse(text: &str) -> Result<StackSpec, SpecError> {
        let err = |m: String| SpecError {
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
        let kind = StackKind::ALL
            .into_iter()
            .find(|k| k.name() == type_name)
            .ok_or_else(|| {
                let names: Vec<&str> = StackKind::ALL.iter().map(|k| k.name()).collect();
                err(format!(
                    "unknown stack type '{type_name}' (allowed: {})",
                    names.join(", ")
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
            zfs_props: BTreeMap::new(),
            layout: PoolLayout::Stripe,
            log: false,
            arc: None,
            vdev_cache: None,
            prefetch: None,
            profile: None,
            metadata: None,
            path: None,
        };
        for (key, value) in pieces(kind, &body)
            .into_iter()
            .filter(|(k, _)| !k.is_empty())
        {
            spec.set(&key, &value).map_err(err)?;
        }
        spec.check().map_err(err)?;
        Ok(spec)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let allowed = || {
            let mut all: Vec<&str> = self.kind.keys().to_vec();
            if self.kind == StackKind::Zfs {
                all.extend(ZFS_PROPERTIES);
            }
            format!(
                "unknown key '{key}' for {} (allowed: {})",
                self.kind.name(),
                all.join(", ")
            )
        };
        let size = |v: &str| parse_size(v).map_err(|m| format!("{key}: {m}"));
        match key {
            k if !(self.kind.keys().contains(&k)
                || self.kind == StackKind::Zfs && ZFS_PROPERTIES.contains(&k)) =>
            {
                return Err(allowed())
            }
            "size" => self.size = Some(size(value)?),
            "devices" => {
                self.devices =
                    value
                        .parse()
                        .ok()
                        .filter(|n| (1..=16).contains(n))
                        .ok_or(format!(
                            "devices: '{value}' is out of range (allowed 1 to 16)"
                        ))?
            }
            "mkfs" => self.mkfs = value.split_whitespace().map(str::to_string).collect(),
            "mount" => self.mount = Some(value.to_string()),
            "offset" => self.offset = size(value)?,
            "layout" => {
                self.layout = match value {
                    "stripe" => PoolLayout::Stripe,
                    "mirror" => PoolLayout::Mirror,
                    "raidz" => PoolLayout::Raidz,
                    "mirror-stripe" | "raid10" => PoolLayout::MirrorStripe,
                    _ => {
                        return Err(format!(
                            "layout: '{value}' (allowed: stripe, mirror, raidz, mirror-stripe)"
                        ))
                    }
                }
            }
            "log" => self.log = parse_bool(value).map_err(|m| format!("log: {m}"))?,
            "arc" => self.arc = Some(size(value)?),
            "vdev_cache" => self.vdev_cache = Some(size(value)?),
            "prefetch" => {
                self.prefetch = Some(parse_bool(value).map_err(|m| format!("prefetch: {m}"))?)
            }
            "profile" | "metadata" => {
                let profiles = ["single", "dup", "raid0", "raid1", "raid10"];
                if !profiles.contains(&value) {
                    return Err(format!(
                        "{key}: '{value}' (allowed: {})",
                        profiles.join(", ")
                    ));
                }
                let slot = if key == "profile" {
                    &mut self.profile
                } else {
                    &mut self.metadata
                };
                *slot = Some(value.to_string());
            }
            "path" => self.path = Some(PathBuf::from(value)),
            prop => {
                check_zfs_property(prop, value)?;
                self.zfs_props.insert(prop.to_string(), value.to_string());
            }
        }
        Ok(())
    }

    /// Cross-key rules: device counts per layout, sizes, required keys.
    fn check(&self) -> Result<(), String> {
        let need = |n: u32, what: &str| {
            if self.devices < n {
                Err(format!(
                    "{what} needs devices={n} or more (have {})",
                    self.devices
                ))
            } else {
                Ok(())
            }
        };
        match self.layout {
            PoolLayout::Mirror => need(2, "layout=mirror")?,
            PoolLayout::Raidz => need(3, "layout=raidz")?,
            PoolLayout::MirrorStripe => {
                need(4, "layout=mirror-stripe")?;
                if self.devices % 2 != 0 {
                    return Err(format!(
                        "layout=mirror-stripe needs an even number of devices (have {})",
                        self.devices
                    ));
                }
            }
            PoolLayout::Stripe => {}
        }
        match self.profile.as_deref() {
            Some("raid1") => need(2, "profile=raid1")?,
            Some("raid10") => need(4, "profile=raid10")?,
            _ => {}
        }
        if self.kind == StackKind::Dir && self.path.is_none() {
            return Err("dir needs a path: dir=/srv/data".into());
        }
        if self.kind == StackKind::Raw && self.devices != 1 {
            return Err("raw hands one device to the workload: devices=1".into());
        }
        if self.offset % 512 != 0 {
            return Err(format!(
                "offset {} must be a multiple of 512 (a sector)",
                self.offset
            ));
        }
        Ok(())
    }

    /// Parses a TOML table: `type = "zfs"` plus the same keys as the command-line form, e.g.
    /// `[stack]\ntype = "zfs"\nrecordsize = "8k"\nprimarycache = "metadata"`.
    pub fn from_table(table: &toml::Table) -> Result<StackSpec, SpecError> {
        let err = |m: &str| SpecError {
            spec: format!("{table}").trim().replace('\n', ", "),
            message: m.to_string(),
        };
        let kind = table
            .get("type")
            .and_then(|t| t.as_str())
            .ok_or_else(|| err("needs type = \"ext4\" (or xfs, btrfs, zfs, tmpfs, raw, dir)"))?;
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
    pub fn parse_arg(arg: &str) -> Result<StackSpec, SpecError> {
        let path = std::path::Path::new(arg);
        if !arg.ends_with(".toml") || !path.is_file() {
            return StackSpec::parse(arg);
        }
        let err = |m: String| SpecError {
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

    /// Number of backing devices to provision, including a ZFS log device.
    pub fn backing_devices(&self) -> u32 {
        match self.kind {
            StackKind::Dir | StackKind::Tmpfs => 0,
            _ => self.devices + u32::from(self.log),
        }
    }
}

fn check_zfs_property(prop: &str, value: &str) -> Result<(), String> {
    let one_of = |allowed: &[&str]| {
        if allowed.contains(&value) {
            Ok(())
        } else {
            Err(format!(
                "{prop}: '{value}' (allowed: {})",
                allowed.join(", ")
            ))
        }
    };
    match prop {
        "recordsize" => {
            let v = parse_size(value).map_err(|m| format!("recordsize: {m}"))?;
            if !(512..=(128 << 10)).contains(&v) || !v.is_power_of_two() {
                return Err(format!(
                    "recordsize: '{value}' must be a power of two from 512 to 128k"
                ));
            }
            Ok(())
        }
        "primarycache" | "secondarycache" => one_of(&["all", "metadata", "none"]),
        "atime" | "dedup" | "xattr" => one_of(&["on", "off"]),
        "logbias" => one_of(&["latency", "throughput"]),
        "sync" => one_of(&["standard", "always", "disabled"]),
        "copies" => one_of(&["1", "2", "3"]),
        _ => Ok(()), // compression, checksum, ...: zfs itself validates, and its message is shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zfs_properties_and_pool_keys() {
        let s =
            StackSpec::parse("zfs:recordsize=8k,primarycache=metadata,atime=off,arc=100m").unwrap();
        assert_eq!(s.kind, StackKind::Zfs);
        assert_eq!(s.zfs_props["recordsize"], "8k");
        assert_eq!(s.zfs_props["primarycache"], "metadata");
        assert_eq!(s.arc, Some(100 << 20));
        let s = StackSpec::parse("zfs:devices=4,layout=mirror-stripe,log=1").unwrap();
        assert_eq!(
            (s.layout, s.backing_devices()),
            (PoolLayout::MirrorStripe, 5)
        );
    }

    #[test]
    fn mount_and_mkfs_values_keep_their_commas() {
        let s = StackSpec::parse("xfs:mkfs=-b size=4096,mount=noatime,nodiratime").unwrap();
        assert_eq!(s.mkfs, vec!["-b", "size=4096"]);
        assert_eq!(s.mount.as_deref(), Some("noatime,nodiratime"));
        let s = StackSpec::parse("ext4:mount=noatime,commit=60,devices=1").unwrap();
        assert_eq!(s.mount.as_deref(), Some("noatime,commit=60"));
    }

    #[test]
    fn toml_tables_mean_the_same_as_the_command_line() {
        let t: toml::Table = toml::from_str(
            "type = \"zfs\"\nrecordsize = \"8k\"\nprimarycache = \"metadata\"\narc = \"100m\"",
        )
        .unwrap();
        let a = StackSpec::from_table(&t).unwrap();
        let b = StackSpec::parse("zfs:arc=100m,primarycache=metadata,recordsize=8k").unwrap();
        assert_eq!((a.zfs_props, a.arc), (b.zfs_props, b.arc));
        let t: toml::Table =
            toml::from_str("type = \"btrfs\"\ndevices = 4\nprofile = \"raid10\"").unwrap();
        assert_eq!(StackSpec::from_table(&t).unwrap().devices, 4);
        let t: toml::Table = toml::from_str("recordsize = \"8k\"").unwrap();
        assert!(StackSpec::from_table(&t)
            .unwrap_err()
            .to_string()
            .contains("needs type"));
    }

    #[test]
    fn dir_and_raw() {
        let s = StackSpec::parse("dir=/srv/data").unwrap();
        assert_eq!(
            (s.kind, s.path.clone()),
            (StackKind::Dir, Some(PathBuf::from("/srv/data")))
        );
        assert_eq!(StackSpec::parse("raw").unwrap().backing_devices(), 1);
    }

    #[test]
    fn refusals_list_what_is_allowed() {
        let e = StackSpec::parse("ext4:recordsize=8k")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown key 'recordsize' for ext4") && e.contains("mount"),
            "{e}"
        );
        let e = StackSpec::parse("ntfs").unwrap_err().to_string();
        assert!(e.contains("allowed: raw, ext4"), "{e}");
        let e = StackSpec::parse("zfs:recordsize=3k")
            .unwrap_err()
            .to_string();
        assert!(e.contains("power of two"), "{e}");
        let e = StackSpec::parse("btrfs:profile=raid10")
            .unwrap_err()
            .to_string();
        assert!(e.contains("devices=4"), "{e}");
        let e = StackSpec::parse("zfs:primarycache=some")
            .unwrap_err()
            .to_string();
        assert!(e.contains("all, metadata, none"), "{e}");
        assert!(StackSpec::parse("dir").is_err());
    }
}
