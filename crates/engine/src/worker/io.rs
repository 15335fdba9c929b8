//! The per-I/O path: keep up to `iodepth` operations in flight, pace them under `rate_iops`,
//! choose offsets, account completions.

use super::{Slot, Worker};
use crate::engines::{Completion, Engine, IoReq};
use crate::shared::RunError;
use bakeoff_core::plan::{IoMix, IoStep, OpKind, Pattern, SyncKind};
use std::sync::atomic::Ordering;

/// Closed loop: the scheduled start is the submission time, stamped in `submit_batch`.
pub(super) const AT_SUBMIT: u64 = u64::MAX;

impl<E: Engine> Worker<E> {
    pub(super) fn run_io(&mut self, io: &IoStep) -> Result<(), RunError> {
        if E::SYNCHRONOUS && self.slots.len() == 1 && self.schedule.is_none() {
            return self.run_io_sync(io);
        }
        self.pump(io.count.unwrap_or(u64::MAX), Some(io), io.async_io)
    }

    /// Waits for every I/O in flight (an aiowait step, and the end of the loop).
    pub(super) fn drain(&mut self) -> Result<(), RunError> {
        self.pump(0, None, false)
    }

    /// Issues `remaining` I/Os of `io`, keeping up to `iodepth` in flight, and reaps until none
    /// is; with `leave_inflight` returns once the last is submitted (an async step).
    fn pump(
        &mut self,
        mut remaining: u64,
        io: Option<&IoStep>,
        leave_inflight: bool,
    ) -> Result<(), RunError> {
        let mut sync_due = false;
        loop {
            // The clock read at the last submit or reap decides: no extra clock read per I/O.
            if self.clock_ns >= self.shared.end_ns.load(Ordering::Relaxed) {
                remaining = 0;
            }
            while let Some(io) = io.filter(|_| remaining > 0 && !sync_due && !self.free.is_empty())
            {
                let Some(sched) = self.pace(self.inflight == 0) else {
                    break;
                };
                let slot = self.free.pop().expect("checked non-empty");
                self.prepare(slot, io, sched);
                remaining -= 1;
            }
            if !self.batch.is_empty() {
                self.inflight += self.submit_batch()?;
            }
            if leave_inflight && remaining == 0 && !sync_due {
                return Ok(());
            }
            if self.inflight == 0 {
                if sync_due {
                    self.sync(
                        self.last_write_file,
                        self.role.sync_every.map_or(SyncKind::Fsync, |s| s.kind),
                    )?;
                    sync_due = false;
                    continue;
                }
                return Ok(());
            }
            self.engine
                .reap(1, &mut self.done)
                .map_err(|e| self.io_error("reap", 0, 0, 0, e))?;
            let now = self.tick();
            while let Some(c) = self.done.pop() {
                self.inflight -= 1;
                sync_due |= self.complete(c, now)?;
            }
        }
    }

    /// The scheduled start of the next I/O: the role's oldest arrival not yet taken, slept
    /// for if nothing is in flight; `None` if it is not yet due and other I/O is in flight, or
    /// if the run stopped while sleeping for it.
    fn pace(&mut self, idle: bool) -> Option<u64> {
        if self.schedule.is_none() {
            return Some(AT_SUBMIT);
        }
        let now = self.tick();
        let schedule = self.schedule.as_deref()?;
        if !idle {
            return schedule.take_due(now);
        }
        let sched = schedule.take(now);
        self.shared.sleep_until(sched);
        // Woken early by the end of the run: an I/O issued now would start before its
        // arrival and complete "before" it was scheduled (a negative latency).
        (!self.shared.stopped()).then_some(sched)
    }

    pub(super) fn prepare(&mut self, slot: u32, io: &IoStep, sched: u64) {
        let write = match io.mix {
            IoMix::Read | IoMix::Update => false,
            IoMix::Write => true,
            IoMix::Mixed { read_pct } => self.rng.u8(0..100) >= read_pct,
        };
        let (file, offset) = self.next_offset(io);
        let req = IoReq {
            slot,
            file,
            offset,
            len: io.bs as u32,
            write,
        };
        self.before_io(&req);
        self.slots[slot as usize] = Slot {
            req: Some(req),
            sched_ns: sched,
            submit_ns: 0,
            then_write: io.mix == IoMix::Update,
        };
        self.batch.push(req);
    }

    /// Makes each written block differ, so no layer can deduplicate writes.
    pub(super) fn stamp_buffer(&mut self, slot: u32) {
        self.stamp += 1;
        self.engine.buf_mut(slot)[..8].copy_from_slice(&self.stamp.to_le_bytes());
    }

    /// Blocks of `bs` in each file's I/O region; recomputed only when the block size changes
    /// (a division per operation would cost more than the clock readings).
    fn blocks_of(&mut self, bs: u64) -> &[u64] {
        if self.blocks.0 != bs {
            let offset0 = self.role.offset;
            let per_file = self.files.regions.iter();
            let blocks = per_file.map(|r| ((r.size - offset0) / bs).max(1)).collect();
            self.blocks = (bs, blocks);
        }
        &self.blocks.1
    }

    pub(super) fn next_offset(&mut self, io: &IoStep) -> (u32, u64) {
        let offset0 = self.role.offset;
        let nfiles = self.files.regions.len();
        match io.pattern {
            Pattern::Random => {
                let f = if nfiles > 1 {
                    self.rng.usize(0..nfiles)
                } else {
                    0
                };
                let blocks = self.blocks_of(io.bs)[f];
                let block = self.rng.u64(0..blocks);
                let base = self.files.regions[f].base;
                (f as u32, base + offset0 + block * io.bs)
            }
            Pattern::Sequential => {
                let mut f = self.seq_file % nfiles;
                if self.seq_block >= self.blocks_of(io.bs)[f] {
                    self.seq_block = 0;
                    f = (f + 1) % nfiles;
                    self.seq_file = f;
                }
                let off = self.files.regions[f].base + offset0 + self.seq_block * io.bs;
                self.seq_block += 1;
                (f as u32, off)
            }
        }
    }

    pub(super) fn submit_batch(&mut self) -> Result<usize, RunError> {
        let now = self.tick();
        for r in &self.batch {
            let slot = &mut self.slots[r.slot as usize];
            slot.submit_ns = now;
            if slot.sched_ns == AT_SUBMIT {
                slot.sched_ns = now;
            }
        }
        let n = self.batch.len();
        let first = self.batch[0];
        self.engine.submit(&self.batch).map_err(|e| {
            self.io_error("submit", first.file, first.offset, u64::from(first.len), e)
        })?;
        self.batch.clear();
        Ok(n)
    }

    /// Accounts one completion; returns true when a sync is now due.
    pub(super) fn complete(&mut self, c: Completion, now: u64) -> Result<bool, RunError> {
        let slot = self.slots[c.slot as usize];
        let req = slot.req.expect("completion for an idle slot");
        let sync_due = self.account(&req, c.result, slot.sched_ns, slot.submit_ns, now)?;
        if slot.then_write {
            // The read half of an update is done: write the block back in place.
            let write = IoReq { write: true, ..req };
            self.before_io(&write);
            self.slots[req.slot as usize] = Slot {
                req: Some(write),
                sched_ns: now,
                submit_ns: now,
                then_write: false,
            };
            self.batch.push(write);
            return Ok(false);
        }
        self.slots[req.slot as usize].req = None;
        self.free.push(req.slot);
        Ok(sync_due)
    }

    /// Checks a finished I/O (`result`: bytes or `-errno`), records it, and counts writes
    /// towards `fsync=N`; returns true when a sync is now due.
    #[inline]
    pub(super) fn account(
        &mut self,
        req: &IoReq,
        result: i64,
        sched_ns: u64,
        submit_ns: u64,
        now: u64,
    ) -> Result<bool, RunError> {
        if result != i64::from(req.len) {
            return Err(self.failed(req, result));
        }
        self.after_io(req)?;
        let kind = match (req.write, self.role.log) {
            (false, _) => OpKind::Read,
            (true, false) => OpKind::Write,
            (true, true) => OpKind::LogWrite,
        };
        if !req.write {
            self.last_read = Some((req.file, req.offset, req.len));
        }
        let measured = self.shared.in_window(now);
        let bytes = u64::from(req.len);
        self.stats
            .record(kind, bytes, now - sched_ns, now - submit_ns, measured);
        if req.write {
            self.last_write_file = req.file;
            if let Some(every) = self.role.sync_every {
                self.writes_since_sync += 1;
                if self.writes_since_sync >= every.writes {
                    self.writes_since_sync = 0;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The error of an I/O that failed (`-errno`) or moved fewer bytes than asked.
    #[cold]
    fn failed(&self, req: &IoReq, result: i64) -> RunError {
        let op = if req.write { "write" } else { "read" };
        if result < 0 {
            let err = std::io::Error::from_raw_os_error(-result as i32);
            return self.io_error(op, req.file, req.offset, u64::from(req.len), err);
        }
        RunError::Short {
            op,
            path: self.path_of(req.file),
            offset: req.offset,
            len: req.len.into(),
            got: result as u64,
        }
    }
}
