//! A stack spec, validated ([`StackSpec`]): its kind, the keys common to many types
//! ([`COMMON_KEYS`]: size, devices, offset, mount, mkfs) as fields, and the type's own keys.
//! The grammar that makes one from text is the parent module's; the drivers read it.

use bakeoff_core::job::KeyDoc;
use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Keys a type may take from this common set (its driver says which).
pub const COMMON_KEYS: &[KeyDoc] = &[
    KeyDoc {
        key: "size",
        default: "--size",
        help: "bytes per backing device (tmpfs: its size); --size (1g) if not given",
    },
    KeyDoc {
        key: "devices",
        default: "1",
        help: "number of backing devices, 1 to 16",
    },
    KeyDoc {
        key: "offset",
        default: "0",
        help: "the file system starts this many bytes into each loop device (a misaligned \
               partition); a multiple of 512",
    },
    KeyDoc {
        key: "mount",
        default: "-",
        help: "mount options; may contain commas (mount=noatime,nodiratime)",
    },
    KeyDoc {
        key: "mkfs",
        default: "-",
        help: "extra mkfs arguments; may contain commas and spaces (mkfs=-b size=4096)",
    },
];

/// A kind of stack: a registered driver, by its place in the registry of drivers (`fs`'s
/// `DRIVERS`, which says what the kind is: its name, keys and hooks).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StackKind(pub(crate) usize);

/// A type's own keys as its driver's check parsed them (`ZfsSpec` for zfs, `()` for a type
/// without keys of its own), kept in the spec for the driver's hooks ([`StackSpec::typed`]).
pub trait OwnKeys: Any + fmt::Debug + Send + Sync {
    /// Itself, for [`StackSpec::typed`] to downcast.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + fmt::Debug + Send + Sync> OwnKeys for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What a driver's check makes of the type's own keys.
pub type Parsed = Arc<dyn OwnKeys>;

/// A validated stack spec.
#[derive(Clone, Debug)]
pub struct StackSpec {
    /// The spec as given.
    pub text: String,
    /// Kind.
    pub kind: StackKind,
    /// Bytes per backing device (`None`: the command's `--size` or the default).
    pub size: Option<u64>,
    /// Number of backing devices (data devices; a type may add others, such as a ZFS log).
    pub devices: u32,
    /// Extra mkfs arguments, split on white space.
    pub mkfs: Vec<String>,
    /// Mount options.
    pub mount: Option<String>,
    /// Byte offset of the file system inside each device (a misaligned partition).
    pub offset: u64,
    /// The type's own keys as written (`recordsize` = `8k`), checked by its driver.
    pub options: BTreeMap<String, String>,
    /// The same keys as the driver's check parsed them: what its hooks read.
    pub(crate) typed: Parsed,
    /// The role of each backing device to provision, from the driver's `roles`.
    pub(crate) roles: Vec<&'static str>,
}

/// Two specs are the same if they say the same: the parsed keys and the roles follow from that.
impl PartialEq for StackSpec {
    fn eq(&self, other: &StackSpec) -> bool {
        (
            &self.text,
            self.kind,
            self.size,
            self.devices,
            &self.mkfs,
            &self.mount,
            self.offset,
            &self.options,
        ) == (
            &other.text,
            other.kind,
            other.size,
            other.devices,
            &other.mkfs,
            &other.mount,
            other.offset,
            &other.options,
        )
    }
}

impl fmt::Display for StackSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// An error unless `spec` has at least `n` devices; `what` is the key that needs them.
pub fn need_devices(spec: &StackSpec, n: u32, what: &str) -> Result<(), String> {
    if spec.devices < n {
        return Err(format!(
            "{what} needs devices={n} or more (have {})",
            spec.devices
        ));
    }
    Ok(())
}

impl StackSpec {
    /// The type's own keys as its driver's check parsed them: a driver's hooks ask for the type
    /// its check makes (`spec.typed::<ZfsSpec>()`).
    ///
    /// # Panics
    ///
    /// If the spec's keys were parsed into another type: a driver asking for a type its check
    /// does not make, a bug.
    pub fn typed<T: OwnKeys>(&self) -> &T {
        let any: &dyn Any = (*self.typed).as_any();
        any.downcast_ref().unwrap_or_else(|| {
            panic!(
                "stack {}: its keys were parsed into {:?}, not a {}",
                self.text,
                self.typed,
                std::any::type_name::<T>()
            )
        })
    }

    /// The role of each backing device to provision (`data`, a ZFS `log`), in order.
    pub fn roles(&self) -> &[&'static str] {
        &self.roles
    }

    /// Number of backing devices to provision, including a ZFS log device.
    pub fn backing_devices(&self) -> u32 {
        self.roles.len() as u32
    }
}
