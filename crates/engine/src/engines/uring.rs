//! `io_uring`: up to `depth` I/Os in flight per thread, with registered files and buffers
//! (`READ_FIXED`/`WRITE_FIXED`) so the kernel does not map them on every I/O. The ring is
//! created by the worker thread that uses it (single issuer).
//!
//! Waiting: where completions come faster than a sleep and wake-up take, the thread polls for
//! them instead of sleeping. Reads that the kernel cannot do without blocking (every buffered
//! read of tmpfs) go to io_uring's worker thread; a submitter that slept until the first of 32
//! completed woke only after the worker had finished all 32 (a wake-up takes tens of µs in a
//! VM), so worker and submitter took turns instead of overlapping: half the rate of `psync`.
//! fio avoids the sleep by re-entering with `GETEVENTS` and no minimum while completions flow.
//! Polling that finds nothing within [`POLLS`] tries stops for [`POLL_BACKOFF`] waits, so a
//! slow device is waited for asleep and costs no CPU.

use super::{Completion, Engine, IoReq};
use crate::buffers::AlignedBuf;
use bakeoff_core::plan::SyncKind;
use io_uring::{opcode, types};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Checks for completions before sleeping: a spin-loop hint each, and a system call only when
/// the kernel flags completions to post (some 10-50 µs in all).
const POLLS: u32 = 512;
/// Waits that sleep at once after polling found nothing.
const POLL_BACKOFF: u32 = 64;

/// Linux io_uring.
pub struct IoUring {
    // Field order matters: the ring is dropped (unregistering buffers) before the buffers.
    ring: io_uring::IoUring,
    bufs: Vec<AlignedBuf>,
    files: Arc<Vec<File>>,
    /// Waits left before polling is tried again (0: poll).
    sleep_waits: u32,
}

impl IoUring {
    /// Submits what is queued and checks up to [`POLLS`] times, without sleeping, for `min`
    /// completions; true if they are there. Completions are deferred to this thread: the
    /// kernel flags the ring when some are pending, and only then does a check enter the
    /// kernel (with `GETEVENTS` and no minimum, as fio does) to post them. After a poll that
    /// found too few, the next [`POLL_BACKOFF`] waits do not poll.
    fn poll(&mut self, min: usize) -> io::Result<bool> {
        if self.sleep_waits > 0 {
            self.sleep_waits -= 1;
            return Ok(false);
        }
        for _ in 0..POLLS {
            let pending = {
                let sq = self.ring.submission();
                sq.taskrun() || !sq.is_empty()
            };
            if pending {
                self.ring.submit()?;
            }
            if self.ring.completion().len() >= min {
                return Ok(true);
            }
            std::hint::spin_loop();
        }
        self.sleep_waits = POLL_BACKOFF;
        Ok(false)
    }
}

impl Engine for IoUring {
    const NAME: &'static str = "io_uring";

    fn open(files: Arc<Vec<File>>, depth: u32, buf_len: usize) -> io::Result<Self> {
        let entries = depth.next_power_of_two().max(2);
        // Completions are processed when this thread reaps, not by interrupting it (the flags
        // fio uses), and the ring shows when some wait to be posted (TASKRUN_FLAG, for
        // polling); kernels before 6.1 refuse DEFER_TASKRUN, so fall back to a plain ring.
        let ring = io_uring::IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_taskrun_flag()
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
        Ok(IoUring {
            ring,
            bufs,
            files,
            sleep_waits: 0,
        })
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
        if !self.poll(min)? {
            loop {
                match self.ring.submit_and_wait(min) {
                    Ok(_) => break,
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(e) => return Err(e),
                }
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
