//! Pure: the tracer's keys as bytes, what they name, and the window between two readings.

use std::collections::HashMap;

/// Bytes of one label in the tracer's key: kind, number, a 24-byte name (`kwork.bpf.c`).
const LABEL_BYTES: usize = 32;
/// Bytes of a key: what ran, and what queued it.
const KEY_BYTES: usize = 2 * LABEL_BYTES;
/// Bytes of a value: nanoseconds.
const VALUE_BYTES: usize = 8;

/// What a stretch of kernel work was, or what queued it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Label {
    /// Nothing known (a work item queued before tracing began has no origin).
    Unknown,
    /// A workqueue, by name (`loop7`, `xfs-cil/loop7`, `ext4-rsv-conversion`, `events`).
    Workqueue(String),
    /// A block device: what follows its request's completion in an interrupt.
    Device {
        /// Major number.
        major: u32,
        /// Minor number.
        minor: u32,
    },
    /// A process, by thread-group id and command name: it queued the work.
    Process {
        /// Thread-group id.
        tgid: u32,
        /// Command name.
        comm: String,
    },
    /// A hard interrupt's handler.
    Irq {
        /// The line.
        line: u32,
        /// Its handler's name (`virtio1-req.0`, `nvme0q1`).
        name: String,
    },
    /// A soft interrupt's vector, before any completion relabelled it (`4` is BLOCK).
    Softirq(u32),
    /// A writeback work item, by the device it wrote back (`7:1`).
    Writeback(String),
}

fn name(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_ne_bytes(b)
}

/// One label from its 32 bytes (`struct label`).
fn parse_label(bytes: &[u8]) -> Label {
    let (kind, num, text) = (
        u32_at(bytes, 0),
        u32_at(bytes, 4),
        name(&bytes[8..LABEL_BYTES]),
    );
    match kind {
        1 => Label::Workqueue(text),
        // The kernel's dev_t inside: 12 bits of major, 20 of minor.
        2 => Label::Device {
            major: num >> 20,
            minor: num & 0xf_ffff,
        },
        3 => Label::Process {
            tgid: num,
            comm: text,
        },
        4 => Label::Irq {
            line: num,
            name: text,
        },
        5 => Label::Softirq(num),
        6 => Label::Writeback(text),
        _ => Label::Unknown,
    }
}

/// A key's two labels, what ran and what queued it; `None` if it is not a whole key.
pub fn parse_key(bytes: &[u8]) -> Option<(Label, Label)> {
    (bytes.len() == KEY_BYTES).then(|| {
        (
            parse_label(&bytes[..LABEL_BYTES]),
            parse_label(&bytes[LABEL_BYTES..]),
        )
    })
}

/// A value's nanoseconds; `None` if it is not a whole value.
pub fn parse_value_ns(bytes: &[u8]) -> Option<u64> {
    (bytes.len() == VALUE_BYTES).then(|| u64_at(bytes, 0))
}

/// The tracer's totals at one instant: nanoseconds by (what ran, what queued it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelWorkTotals {
    /// Nanoseconds so far, by key.
    pub ns: HashMap<(Label, Label), u64>,
    /// Stretches the tracer could not store (its table was full) so far.
    pub lost: u64,
}

/// Kernel CPU of one kind over a window.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    /// What ran.
    pub what: Label,
    /// What queued it.
    pub origin: Label,
    /// Nanoseconds over the window.
    pub ns: u64,
}

/// The kernel work between two readings, and whether the tracer lost any of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelWindow {
    /// Time by key, the keys that grew.
    pub times: Vec<KernelTime>,
    /// Stretches the tracer could not store in the window.
    pub lost: u64,
}

impl KernelWindow {
    /// The growth from `start` to `end`.
    pub fn between(start: &KernelWorkTotals, end: &KernelWorkTotals) -> KernelWindow {
        let times = (end.ns.iter())
            .filter_map(|(key, &ns)| {
                let grown = ns.saturating_sub(start.ns.get(key).copied().unwrap_or(0));
                (grown > 0).then(|| KernelTime {
                    what: key.0.clone(),
                    origin: key.1.clone(),
                    ns: grown,
                })
            })
            .collect();
        KernelWindow {
            times,
            lost: end.lost.saturating_sub(start.lost),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(kind: u32, num: u32, text: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(kind.to_ne_bytes());
        b.extend(num.to_ne_bytes());
        let mut n = [0u8; 24];
        n[..text.len()].copy_from_slice(text.as_bytes());
        b.extend(n);
        b
    }

    #[test]
    fn keys_parse_into_what_ran_and_what_queued_it() {
        let mut key = label(1, 0, "ext4-rsv-conversion");
        key.extend(label(2, (7 << 20) | 1, ""));
        assert_eq!(
            parse_key(&key),
            Some((
                Label::Workqueue("ext4-rsv-conversion".into()),
                Label::Device { major: 7, minor: 1 }
            ))
        );
        let mut key = label(6, 0, "254:0");
        key.extend(label(3, 4242, "dd"));
        let (what, origin) = parse_key(&key).unwrap();
        assert_eq!(what, Label::Writeback("254:0".into()));
        assert_eq!(
            origin,
            Label::Process {
                tgid: 4242,
                comm: "dd".into()
            }
        );
        assert_eq!(parse_key(&key[..10]), None);
        let value = 1234u64.to_ne_bytes();
        assert_eq!(parse_value_ns(&value), Some(1234));
    }

    #[test]
    fn a_window_is_the_growth_of_each_key() {
        let key = |n: &str| (Label::Workqueue(n.into()), Label::Unknown);
        let start = KernelWorkTotals {
            ns: HashMap::from([(key("loop7"), 100), (key("events"), 50)]),
            lost: 1,
        };
        let end = KernelWorkTotals {
            ns: HashMap::from([
                (key("loop7"), 350),
                (key("events"), 50),
                (key("kblockd"), 9),
            ]),
            lost: 3,
        };
        let mut w = KernelWindow::between(&start, &end);
        w.times.sort_by_key(|t| t.ns);
        let got: Vec<_> = w.times.iter().map(|t| (t.what.clone(), t.ns)).collect();
        assert_eq!(
            got,
            [
                (Label::Workqueue("kblockd".into()), 9),
                (Label::Workqueue("loop7".into()), 250)
            ]
        );
        assert_eq!(w.lost, 2);
    }
}
