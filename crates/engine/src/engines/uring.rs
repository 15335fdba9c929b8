//! `io_uring`: up to `depth` I/Os in flight per thread, with registered files and buffers
//! (`READ_FIXED`/`WRITE_FIXED`) so the kernel does not map them on every I/O. The ring is
//! created by the worker thread that uses it (single issuer).

use super::{Completion, Engine, IoReq};
use crate::buffers::AlignedBuf;
use bakeoff_core::plan::SyncKind;
use io_uring::{opcode, types};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Linux io_uring.
pub struct IoUring {
    // Field order matters: the ring is dropped (unregistering buffers) before the buffers.
    ring: io_uring::IoUring,
    bufs: Vec<AlignedBuf>,
    files: Arc<Vec<File>>,
}

impl Engine for IoUring {
    const NAME: &'static str = "io_uring";

    fn open(files: Arc<Vec<File>>, depth: u32, buf_len: usize) -> io::Result<Self> {
        let entries = depth.next_power_of_two().max(2);
        // Completions are processed when this thread reaps, not by interrupting it (the flags
        // fio uses); kernels before 6.1 refuse DEFER_TASKRUN, so fall back to a plain ring.
        let ring = io_uring::IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| io_uring::IoUring::new(entries))?;
        let mut bufs: Vec<AlignedBuf> = (0..depth).map(|_| AlignedBuf::new(buf_len)).collect();
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        ring.submitter().register_files(&fds)?;
        let iovecs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: the buffers live in `self.bufs` and are neither moved (heap allocations) nor
        // freed until the ring, declared first, has been dropped.
        unsafe { ring.submitter().register_buffers(&iovecs)? };
        Ok(IoUring { ring, bufs, files })
    }

    fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        self.bufs[slot as usize].as_mut_slice()
    }

    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        for r in reqs {
            let ptr = self.bufs[r.slot as usize].as_mut_ptr();
            let fd = types::Fixed(r.file);
            let buf_index = r.slot as u16;
            let entry = if r.write {
                opcode::WriteFixed::new(fd, ptr, r.len, buf_index)
                    .offset(r.offset)
                    .build()
            } else {
                opcode::ReadFixed::new(fd, ptr, r.len, buf_index)
                    .offset(r.offset)
                    .build()
            };
            let entry = entry.user_data(u64::from(r.slot));
            // SAFETY: the buffer of this slot stays valid and untouched by us until its
            // completion is reaped (the worker does not reuse a slot while it is in flight).
            while unsafe { self.ring.submission().push(&entry) }.is_err() {
                self.ring.submit()?;
            }
        }
        // Not submitted here: the worker reaps next, and `submit_and_wait` there submits and
        // waits in one system call (fio's batching, `iodepth_batch_submit`).
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(min) {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
        for cqe in self.ring.completion() {
            out.push(Completion {
                slot: cqe.user_data() as u32,
                result: i64::from(cqe.result()),
            });
        }
        Ok(())
    }

    fn sync(&mut self, file: u32, kind: SyncKind) -> io::Result<()> {
        super::sync_file(&self.files[file as usize], kind)
    }
}
