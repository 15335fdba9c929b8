//! Copies of images that cost what they hold, not their size: a reflink where the file system
//! shares extents (xfs with reflink, btrfs), else only the data extents (`SEEK_DATA` /
//! `SEEK_HOLE` and `copy_file_range`), so a hole stays a hole.

use crate::error::StackError;
use rustix::fs::SeekFrom;
use std::fs::{File, OpenOptions};
use std::path::Path;

/// How a copy was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    /// The extents are shared (`FICLONE`): instant, and no room taken until written.
    Reflink,
    /// The data extents were copied; holes stayed holes.
    Sparse,
}

/// Copies the image `from` to the new file `to` (which must not exist).
pub fn copy_image(from: &Path, to: &Path) -> Result<CopyKind, StackError> {
    let src = File::open(from).map_err(StackError::io("opening the image", from))?;
    let dst = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(StackError::io("creating the copy", to))?;
    if rustix::fs::ioctl_ficlone(&dst, &src).is_ok() {
        return Ok(CopyKind::Reflink);
    }
    let size = src
        .metadata()
        .map_err(StackError::io("reading the size of", from))?
        .len();
    dst.set_len(size)
        .map_err(StackError::io("sizing the copy", to))?;
    let mut at = 0;
    while at < size {
        let data = match rustix::fs::seek(&src, SeekFrom::Data(at)) {
            Ok(d) => d,
            // ENXIO: no data after `at`, the rest is a hole.
            Err(rustix::io::Errno::NXIO) => break,
            Err(e) => return Err(StackError::io("seeking data in", from)(e.into())),
        };
        let hole = rustix::fs::seek(&src, SeekFrom::Hole(data))
            .map_err(|e| StackError::io("seeking a hole in", from)(e.into()))?;
        copy_range(&src, &dst, data, hole.min(size), to)?;
        at = hole;
    }
    Ok(CopyKind::Sparse)
}

/// Copies bytes `start..end` of `src` to the same place in `dst`.
fn copy_range(src: &File, dst: &File, start: u64, end: u64, to: &Path) -> Result<(), StackError> {
    let (mut off_in, mut off_out) = (start, start);
    while off_in < end {
        let len = (end - off_in).min(1 << 30) as usize;
        let n = rustix::fs::copy_file_range(src, Some(&mut off_in), dst, Some(&mut off_out), len)
            .map_err(|e| StackError::io("copying into", to)(e.into()))?;
        if n == 0 {
            let what = "copying into (the image shrank while copied)";
            return Err(StackError::io(what, to)(
                std::io::ErrorKind::UnexpectedEof.into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_copy_holds_the_same_bytes_and_keeps_holes() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("a.img"), dir.path().join("b.img"));
        let f = File::create(&from).unwrap();
        f.set_len(64 << 20).unwrap();
        f.write_all_at(b"start", 0).unwrap();
        f.write_all_at(&[7u8; 5000], 40 << 20).unwrap();
        drop(f);
        let kind = copy_image(&from, &to).unwrap();
        assert_eq!(std::fs::read(&from).unwrap(), std::fs::read(&to).unwrap());
        use std::os::unix::fs::MetadataExt;
        let blocks = std::fs::metadata(&to).unwrap().blocks();
        assert!(
            kind == CopyKind::Reflink || blocks < 1024,
            "{kind:?}: {blocks} blocks"
        );
        let again = copy_image(&from, &to).unwrap_err().to_string();
        assert!(again.contains("b.img"), "{again}");
    }
}
