//! The one call a replay makes that rustix has no wrapper for.

use std::os::fd::{AsFd, AsRawFd};

/// `sync_file_range(fd, offset, len, flags)`: starts (or waits for) write-back of a range.
pub fn sync_file_range(fd: impl AsFd, offset: u64, len: u64, flags: u32) -> std::io::Result<()> {
    let (offset, len) = (
        offset.min(i64::MAX as u64) as i64,
        len.min(i64::MAX as u64) as i64,
    );
    // SAFETY: the call takes plain integers and a descriptor borrowed for its duration; it
    // reads and writes no memory of this process.
    let rc = unsafe { libc::sync_file_range(fd.as_fd().as_raw_fd(), offset, len, flags) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
