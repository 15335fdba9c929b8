//! The keys of `zfs` specs: pool layout, log device, cache settings and the dataset properties
//! passed to `zfs create -o`, documented ([`KEYS`]) and parsed into a [`ZfsSpec`].

use crate::spec::{Parsed, StackSpec};
use bakeoff_core::job::KeyDoc;
use bakeoff_core::units::{parse_bool, parse_size};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The keys of `zfs` specs besides the common ones.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc {
        key: "layout",
        default: "stripe",
        help: "pool layout: stripe, mirror, raidz, mirror-stripe (RAID 1+0; also raid10)",
    },
    KeyDoc {
        key: "log",
        default: "false",
        help: "a separate log device (one more backing device)",
    },
    KeyDoc {
        key: "arc",
        default: "zfsrc's",
        help: "ARC cap (zfs-fuse --max-arc-size, whole MiB 16-16384; OpenZFS zfs_arc_max)",
    },
    KeyDoc {
        key: "vdev_cache",
        default: "zfsrc's",
        help: "zfs-fuse vdev cache size (0 turns it off)",
    },
    KeyDoc {
        key: "prefetch",
        default: "on",
        help: "ZFS prefetch on or off",
    },
    KeyDoc {
        key: "recordsize",
        default: "128k",
        help: "dataset record size: a power of two from 512 to 128k",
    },
    KeyDoc {
        key: "primarycache",
        default: "all",
        help: "what the ARC caches: all, metadata, none",
    },
    KeyDoc {
        key: "secondarycache",
        default: "all",
        help: "what the L2ARC caches: all, metadata, none",
    },
    KeyDoc {
        key: "compression",
        default: "off",
        help: "dataset compression (zfs validates the value)",
    },
    KeyDoc {
        key: "checksum",
        default: "on",
        help: "dataset checksum (zfs validates the value)",
    },
    KeyDoc {
        key: "atime",
        default: "on",
        help: "update access times: on, off",
    },
    KeyDoc {
        key: "logbias",
        default: "latency",
        help: "latency, throughput",
    },
    KeyDoc {
        key: "sync",
        default: "standard",
        help: "standard, always, disabled",
    },
    KeyDoc {
        key: "dedup",
        default: "off",
        help: "on, off",
    },
    KeyDoc {
        key: "copies",
        default: "1",
        help: "copies of each block: 1, 2, 3",
    },
    KeyDoc {
        key: "redundant_metadata",
        default: "all",
        help: "dataset property (zfs validates the value)",
    },
    KeyDoc {
        key: "xattr",
        default: "on",
        help: "on, off",
    },
];

/// The keys that are settings of the pool or the daemon; every other key of [`KEYS`] is a
/// dataset property.
const POOL_KEYS: [&str; 5] = ["layout", "log", "arc", "vdev_cache", "prefetch"];

/// How a ZFS pool arranges its devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A `zfs` spec's own keys, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct ZfsSpec {
    /// Pool layout.
    pub layout: PoolLayout,
    /// A separate log device.
    pub log: bool,
    /// ARC cap in bytes.
    pub arc: Option<u64>,
    /// zfs-fuse vdev cache size in bytes.
    pub vdev_cache: Option<u64>,
    /// Prefetch on or off.
    pub prefetch: Option<bool>,
    /// Dataset properties, as given.
    pub props: BTreeMap<String, String>,
}

impl ZfsSpec {
    /// Parses and checks the spec's ZFS keys and the device count its layout needs.
    pub fn of(spec: &StackSpec) -> Result<ZfsSpec, String> {
        let mut z = ZfsSpec {
            layout: PoolLayout::Stripe,
            log: false,
            arc: None,
            vdev_cache: None,
            prefetch: None,
            props: BTreeMap::new(),
        };
        for (key, value) in &spec.options {
            let size = |v: &str| parse_size(v).map_err(|m| format!("{key}: {m}"));
            let flag = |v: &str| parse_bool(v).map_err(|m| format!("{key}: {m}"));
            match key.as_str() {
                "layout" => z.layout = layout(value)?,
                "log" => z.log = flag(value)?,
                "arc" => z.arc = Some(size(value)?),
                "vdev_cache" => z.vdev_cache = Some(size(value)?),
                "prefetch" => z.prefetch = Some(flag(value)?),
                prop => {
                    check_property(prop, value)?;
                    z.props.insert(prop.to_string(), value.clone());
                }
            }
        }
        let need = match z.layout {
            PoolLayout::Stripe => 1,
            PoolLayout::Mirror => 2,
            PoolLayout::Raidz => 3,
            PoolLayout::MirrorStripe => 4,
        };
        let name = layout_name(z.layout);
        crate::spec::need_devices(spec, need, &format!("layout={name}"))?;
        if z.layout == PoolLayout::MirrorStripe && spec.devices % 2 != 0 {
            return Err(format!(
                "layout=mirror-stripe needs an even number of devices (have {})",
                spec.devices
            ));
        }
        Ok(z)
    }

    /// True if `key` is a pool or daemon setting rather than a dataset property.
    pub fn is_pool_key(key: &str) -> bool {
        POOL_KEYS.contains(&key)
    }
}

fn layout(value: &str) -> Result<PoolLayout, String> {
    Ok(match value {
        "stripe" => PoolLayout::Stripe,
        "mirror" => PoolLayout::Mirror,
        "raidz" => PoolLayout::Raidz,
        "mirror-stripe" | "raid10" => PoolLayout::MirrorStripe,
        _ => {
            return Err(format!(
                "layout: '{value}' (allowed: stripe, mirror, raidz, mirror-stripe)"
            ))
        }
    })
}

fn layout_name(layout: PoolLayout) -> &'static str {
    match layout {
        PoolLayout::Stripe => "stripe",
        PoolLayout::Mirror => "mirror",
        PoolLayout::Raidz => "raidz",
        PoolLayout::MirrorStripe => "mirror-stripe",
    }
}

/// The spec's check: its keys parse and its layout has the devices it needs; the keys parsed.
pub fn check(spec: &StackSpec) -> Result<Parsed, String> {
    Ok(Arc::new(ZfsSpec::of(spec)?))
}

/// The data devices, and a log device last when `log=` asks for one.
pub fn roles(spec: &StackSpec) -> Vec<&'static str> {
    let mut roles = vec!["data"; spec.devices as usize];
    roles.extend(spec.typed::<ZfsSpec>().log.then_some("log"));
    roles
}

fn check_property(prop: &str, value: &str) -> Result<(), String> {
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
        "compression" => check_compression(value),
        "checksum" => one_of(&[
            "on",
            "off",
            "fletcher2",
            "fletcher4",
            "sha256",
            "noparity",
            "sha512",
            "skein",
            "edonr",
            "blake3",
        ]),
        _ => Ok(()), // redundant_metadata, ...: zfs itself validates, and its message is shown
    }
}

/// Compression algorithms: zfs-fuse (ZFS pool version 23) knows lzjb, gzip and zle; lz4 and
/// zstd need OpenZFS, so they are refused before anything is built where only zfs-fuse runs.
fn check_compression(value: &str) -> Result<(), String> {
    let level = |rest: &str, max: u32| rest.parse::<u32>().is_ok_and(|n| (1..=max).contains(&n));
    let old = matches!(value, "on" | "off" | "lzjb" | "gzip" | "zle")
        || value.strip_prefix("gzip-").is_some_and(|l| level(l, 9));
    let new = value == "lz4"
        || value == "zstd"
        || value
            .strip_prefix("zstd-fast-")
            .is_some_and(|l| level(l, 1000))
        || value.strip_prefix("zstd-").is_some_and(|l| level(l, 19));
    if old || (new && super::model::openzfs_loaded()) {
        return Ok(());
    }
    if new {
        return Err(format!(
            "compression: '{value}' needs OpenZFS; the ZFS here is zfs-fuse, which has lzjb, \
             gzip, gzip-1 to gzip-9 and zle"
        ));
    }
    Err(format!(
        "compression: '{value}' (allowed: on, off, lzjb, gzip, gzip-1 to gzip-9, zle; with \
         OpenZFS also lz4, zstd, zstd-1 to zstd-19, zstd-fast-N)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zfs(text: &str) -> Result<ZfsSpec, String> {
        ZfsSpec::of(&StackSpec::parse(text).map_err(|e| e.to_string())?)
    }

    #[test]
    fn pool_keys_and_dataset_properties() {
        let z = zfs("zfs:recordsize=8k,primarycache=metadata,atime=off,arc=100m").unwrap();
        assert_eq!(z.props["recordsize"], "8k");
        assert_eq!(z.props["primarycache"], "metadata");
        assert_eq!((z.arc, z.layout), (Some(100 << 20), PoolLayout::Stripe));
        assert!(!z.props.contains_key("arc"));
        let z = zfs("zfs:devices=4,layout=raid10,log=1,prefetch=off").unwrap();
        assert_eq!(
            (z.layout, z.log, z.prefetch),
            (PoolLayout::MirrorStripe, true, Some(false))
        );
        let spec = StackSpec::parse("zfs:devices=4,layout=mirror-stripe,log=1").unwrap();
        assert_eq!(roles(&spec), ["data", "data", "data", "data", "log"]);
        assert!(ZfsSpec::is_pool_key("arc") && !ZfsSpec::is_pool_key("recordsize"));
    }

    #[test]
    fn layouts_need_their_devices() {
        let e = zfs("zfs:layout=mirror").unwrap_err();
        assert!(e.contains("layout=mirror needs devices=2"), "{e}");
        let e = zfs("zfs:devices=5,layout=mirror-stripe").unwrap_err();
        assert!(e.contains("even number"), "{e}");
        assert!(zfs("zfs:devices=3,layout=raidz").is_ok());
    }

    #[test]
    fn compression_and_checksum_values_are_checked_before_anything_is_built() {
        for ok in [
            "zfs:compression=lzjb",
            "zfs:compression=gzip-9",
            "zfs:checksum=sha256",
        ] {
            assert!(zfs(ok).is_ok(), "{ok}");
        }
        let e = zfs("zfs:compression=gzip-10").unwrap_err();
        assert!(e.contains("allowed: on, off, lzjb"), "{e}");
        assert!(zfs("zfs:checksum=crc").unwrap_err().contains("fletcher4"));
        let lz4 = zfs("zfs:compression=lz4");
        if super::super::openzfs_loaded() {
            assert!(lz4.is_ok());
        } else {
            assert!(lz4.unwrap_err().contains("needs OpenZFS"));
        }
    }
}
