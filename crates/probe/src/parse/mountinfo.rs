//! `/proc/self/mountinfo`: the mount table (kernel `Documentation/filesystems/proc.rst` 3.5).

/// One mount, with the kernel's octal escapes (`\040` for a space, …) decoded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MountEntry {
    /// Unique id of the mount.
    pub mount_id: u32,
    /// Id of the parent mount.
    pub parent_id: u32,
    /// Major number of the file system's device (`st_dev`); 0 for anonymous devices.
    pub major: u32,
    /// Minor number of the file system's device.
    pub minor: u32,
    /// The directory within the file system that forms the root of this mount (bind mounts).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// Per-mount options, e.g. `rw,relatime`.
    pub options: String,
    /// File system type, e.g. `ext4`, `fuse.zfs-fuse`.
    pub fstype: String,
    /// Mount source, e.g. `/dev/vda`, `tmpfs`.
    pub source: String,
    /// Per-superblock (file-system specific) options, e.g. `rw,discard`.
    pub super_options: String,
}

/// Parses `/proc/self/mountinfo`, in file order (later entries are mounted over earlier ones).
/// Malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`
fn parse_line(line: &str) -> Option<MountEntry> {
    let mut fields = line.split_ascii_whitespace();
    let mount_id = fields.next()?.parse().ok()?;
    let parent_id = fields.next()?.parse().ok()?;
    let (major, minor) = fields.next()?.split_once(':')?;
    let root = unescape(fields.next()?);
    let mount_point = unescape(fields.next()?);
    let options = unescape(fields.next()?);
    // Optional fields (`shared:1`, `master:2`, …) up to the separator.
    fields.by_ref().find(|f| *f == "-")?;
    let fstype = unescape(fields.next()?);
    let source = unescape(fields.next()?);
    let super_options = fields.next().map(unescape).unwrap_or_default();
    Some(MountEntry {
        mount_id,
        parent_id,
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        root,
        mount_point,
        options,
        fstype,
        source,
        super_options,
    })
}

/// Decodes `\ooo` octal escapes; anything else, including a lone backslash, is kept as is.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| {
            bytes[i] == b'\\' && d[0] <= b'3' && d.iter().all(|c| (b'0'..=b'7').contains(c))
        });
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_fixture() {
        let text = include_str!("../../tests/fixtures/proc/6.18.44/mountinfo");
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.len(), text.lines().count());
        let root = mounts.iter().find(|m| m.mount_point == "/").unwrap();
        assert_eq!(
            *root,
            MountEntry {
                mount_id: 27,
                parent_id: 1,
                major: 254,
                minor: 0,
                root: "/".into(),
                mount_point: "/".into(),
                options: "rw,relatime".into(),
                fstype: "ext4".into(),
                source: "/dev/vda".into(),
                super_options: "rw,discard,resv_strict,resuid=65534,resgid=65534".into(),
            }
        );
        let shm: Vec<_> = mounts
            .iter()
            .filter(|m| m.mount_point == "/dev/shm")
            .collect();
        assert_eq!(shm.len(), 2, "mounted twice, the later on top");
        assert_eq!((shm[1].fstype.as_str(), shm[1].major), ("tmpfs", 0));
    }

    #[test]
    fn optional_fields_and_escapes() {
        let text = "36 35 98:0 /a\\040b /mnt/my\\040disk\\134x rw,noatime shared:1 master:2 - \
                    fuse.zfs-fuse tank/with\\011tab rw\n";
        let m = &parse_mountinfo(text)[0];
        assert_eq!(m.root, "/a b");
        assert_eq!(m.mount_point, "/mnt/my disk\\x");
        assert_eq!(m.fstype, "fuse.zfs-fuse");
        assert_eq!(m.source, "tank/with\ttab");
        assert_eq!(m.super_options, "rw");
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let text = "garbage\n1 2 3:4 / /x rw\n1 2 x:4 / /x rw - ext4 /dev/a rw\n\n\
                    1 2 3:4 / /ok rw - ext4 /dev/a\n";
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.len(), 1);
        assert_eq!(mounts[0].mount_point, "/ok");
        assert_eq!(unescape("\\"), "\\");
        assert_eq!(unescape("a\\04"), "a\\04");
        assert_eq!(unescape("\\777"), "\\777", "not a byte");
        assert_eq!(unescape("\\303\\251"), "é");
    }
}
