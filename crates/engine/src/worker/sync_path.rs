//! The fast path of a synchronous engine with one I/O in flight and no pacing (psync at
//! `iodepth=1`, closed loop): each I/O is performed and timed in place, without the slot,
//! batch and completion queues the asynchronous path needs.

use super::Worker;
use crate::engines::{Engine, IoReq};
use crate::shared::RunError;
use bakeoff_core::plan::{IoMix, IoStep, SyncKind};
use std::sync::atomic::Ordering;

impl<E: Engine> Worker<E> {
    /// Issues `io.count` operations (or until the end), one at a time.
    pub(super) fn run_io_sync(&mut self, io: &IoStep) -> Result<(), RunError> {
        let mut remaining = io.count.unwrap_or(u64::MAX);
        while remaining > 0 && self.clock_ns < self.shared.end_ns.load(Ordering::Relaxed) {
            remaining -= 1;
            let write = match io.mix {
                IoMix::Read | IoMix::Update => false,
                IoMix::Write => true,
                IoMix::Mixed { read_pct } => self.rng.u8(0..100) >= read_pct,
            };
            let (file, offset) = self.next_offset(io);
            let len = io.bs as u32;
            self.transfer_one(IoReq {
                slot: 0,
                file,
                offset,
                len,
                write,
            })?;
            if io.mix == IoMix::Update {
                // A database block update: the block just read is written back in place.
                self.transfer_one(IoReq {
                    slot: 0,
                    file,
                    offset,
                    len,
                    write: true,
                })?;
            }
        }
        Ok(())
    }

    /// Performs, times and accounts one I/O; syncs when `fsync=N` says so.
    #[inline]
    fn transfer_one(&mut self, req: IoReq) -> Result<(), RunError> {
        self.before_io(&req);
        let start = self.tick();
        let result = self.engine.transfer(&req);
        let now = self.tick();
        if self.account(&req, result, start, start, now)? {
            let kind = self.role.sync_every.map_or(SyncKind::Fsync, |s| s.kind);
            self.sync(self.last_write_file, kind)?;
        }
        Ok(())
    }
}
