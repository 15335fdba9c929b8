//! A private descriptor table for a worker thread whose engine makes one system call per I/O.
//!
//! In a process with more than one thread, every system call on a descriptor takes a
//! reference on its file and drops it afterwards; the kernel skips both only while the
//! descriptor table has one user (`fdget` in `fs/file.c`). Measured here, a second, idle
//! thread in a bare `pread` loop cost 6 % of its rate (4 KiB cached reads on tmpfs, median of
//! 10 interleaved pairs, every pair slower). A single-threaded fio job has its own table; a
//! psync worker gets one with `unshare(CLONE_FILES)`: a copy of the process's table, so every
//! descriptor open when the thread starts means the same file in it.
//!
//! The copy is what makes this delicate: closing a descriptor in the worker closes only the
//! worker's copy, and the process's stays open. So (1) whoever opened the files the worker
//! uses keeps them open until the worker has been joined, and closes them in its own table
//! (`run::execute_gated` holds every role's files through the run), (2) the worker opens no
//! file it passes to another thread, and (3) before the thread ends, [`PrivateTable`]'s drop
//! closes every copy it still holds (the thread's own table would otherwise be released only
//! after `join` returns, and a copy of a descriptor on the stack could keep it busy for an
//! unmount that follows).

use std::marker::PhantomData;

/// The calling thread's own descriptor table, for as long as this lives; dropping it closes
/// every descriptor above the standard three in that table. Not `Send`: it belongs to the
/// thread that made it.
pub struct PrivateTable {
    _thread_bound: PhantomData<*const ()>,
}

impl PrivateTable {
    /// Gives the calling thread a copy of the process's descriptor table; `None` if the kernel
    /// refuses (the thread then shares the process's, as before: slower, not wrong).
    ///
    /// The caller keeps the rules in the module's documentation: every file the thread
    /// uses is opened before this call and stays open in its owner's table until the thread
    /// has been joined; the thread opens nothing it hands to another thread; every `File` the
    /// thread owns is dropped before this value is.
    pub fn enter() -> Option<PrivateTable> {
        // SAFETY: unsharing the table is unsafe because descriptors created in one table are
        // not valid in the other. The caller's rules above make every descriptor this thread
        // uses one that existed before the copy (valid in both), and no descriptor it creates
        // leaves the thread.
        let unshared =
            unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FILES) };
        unshared.ok().map(|()| PrivateTable {
            _thread_bound: PhantomData,
        })
    }
}

impl Drop for PrivateTable {
    fn drop(&mut self) {
        // SAFETY: close_range only closes descriptors of this thread's private table (after
        // `enter` no other thread shares it). By the rules of `enter`, no `File` owned in this
        // thread is still alive, so nothing will close these numbers again; the owners' own
        // descriptors, in the process's table, are untouched.
        unsafe {
            libc::close_range(3, u32::MAX, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn the_copy_sees_earlier_files_and_closing_it_leaves_the_process_table_alone() {
        let file = std::fs::File::open("/proc/self/status").unwrap();
        let fd = file.as_raw_fd();
        let seen = std::thread::spawn(move || {
            let table = PrivateTable::enter().expect("unshare(CLONE_FILES)");
            // The same number means the same file in the copy.
            let here = std::fs::read_link(format!("/proc/thread-self/fd/{fd}")).ok();
            drop(table);
            // And after the drop the copy no longer has it.
            let after = std::fs::read_link(format!("/proc/thread-self/fd/{fd}")).is_ok();
            (here, after)
        })
        .join()
        .unwrap();
        let (here, after_drop) = seen;
        assert!(
            here.as_ref().is_some_and(|p| p.ends_with("status")),
            "{here:?}"
        );
        assert!(!after_drop, "the private copy was closed");
        // The process's descriptor is still open and usable.
        let mine = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
        assert!(mine.ends_with("status"), "{mine:?}");
        drop(file);
    }
}
