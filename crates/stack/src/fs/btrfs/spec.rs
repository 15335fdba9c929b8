//! The keys of `btrfs` specs: the data and metadata profiles mkfs.btrfs lays out, documented
//! ([`KEYS`]) and parsed into a [`BtrfsSpec`].

use crate::spec::{need_devices, Parsed, StackSpec};
use bakeoff_core::job::KeyDoc;
use std::sync::Arc;

/// The keys of `btrfs` specs besides the common ones.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc {
        key: "profile",
        default: "mkfs's",
        help: "data profile: single, dup, raid0, raid1 (2 devices), raid10 (4 devices)",
    },
    KeyDoc {
        key: "metadata",
        default: "mkfs's",
        help: "metadata profile: single, dup, raid0, raid1, raid10",
    },
];

/// How btrfs lays out data or metadata over its devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// One copy.
    Single,
    /// Two copies on the same device.
    Dup,
    /// Striped, one copy.
    Raid0,
    /// Two copies on two devices.
    Raid1,
    /// Striped over mirrored pairs.
    Raid10,
}

impl Profile {
    /// Every profile bakeoff knows.
    const ALL: [Profile; 5] = [
        Profile::Single,
        Profile::Dup,
        Profile::Raid0,
        Profile::Raid1,
        Profile::Raid10,
    ];

    /// Its name in specs and for mkfs.btrfs (`raid10`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::Single => "single",
            Profile::Dup => "dup",
            Profile::Raid0 => "raid0",
            Profile::Raid1 => "raid1",
            Profile::Raid10 => "raid10",
        }
    }

    /// Copies it stores of each byte.
    pub fn copies(self) -> u64 {
        match self {
            Profile::Dup | Profile::Raid1 | Profile::Raid10 => 2,
            Profile::Single | Profile::Raid0 => 1,
        }
    }
}

/// A `btrfs` spec's own keys, parsed; `None` leaves the profile to mkfs.btrfs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BtrfsSpec {
    /// The data profile (`profile=`).
    pub data: Option<Profile>,
    /// The metadata profile (`metadata=`).
    pub metadata: Option<Profile>,
}

/// Profiles are among those bakeoff knows, with the devices they need; the keys parsed.
pub fn check(spec: &StackSpec) -> Result<Parsed, String> {
    let mut b = BtrfsSpec::default();
    for (key, value) in &spec.options {
        let known = Profile::ALL.into_iter().find(|p| p.name() == value);
        let profile = known.ok_or_else(|| {
            let allowed: Vec<&str> = Profile::ALL.map(Profile::name).to_vec();
            format!("{key}: '{value}' (allowed: {})", allowed.join(", "))
        })?;
        // Its only keys: `profile` (data) and `metadata`.
        match key.as_str() {
            "profile" => b.data = Some(profile),
            _ => b.metadata = Some(profile),
        }
    }
    match b.data {
        Some(Profile::Raid1) => need_devices(spec, 2, "profile=raid1")?,
        Some(Profile::Raid10) => need_devices(spec, 4, "profile=raid10")?,
        _ => {}
    }
    Ok(Arc::new(b))
}
