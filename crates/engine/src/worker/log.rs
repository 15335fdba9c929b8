//! The group-commit log writer: takes every queued commit, appends its redo, makes it durable.

use super::{Slot, Worker};
use crate::engines::{Engine, IoReq};
use crate::shared::RunError;
use bakeoff_core::plan::{SyncKind, SyncMode};

impl<E: Engine> Worker<E> {
    pub(super) fn run_log_writer(&mut self) -> Result<(), RunError> {
        let Some(queue) = self.shared.logs[self.role_idx].clone() else {
            return Ok(());
        };
        let region = self.files.regions[0].clone();
        let chunk = 1u64 << 20;
        let mut pos = 0u64;
        while let Some(batch) = queue.next_batch(&|| self.shared.stopped()) {
            let mut left = batch.bytes.div_ceil(512) * 512;
            while left > 0 {
                let len = left.min(chunk).min(region.size - pos);
                self.write_at(region.base + pos, len)?;
                pos = (pos + len) % (region.size / 512 * 512);
                left -= len;
            }
            if self.role.sync_mode == SyncMode::None {
                self.sync(0, SyncKind::Fdatasync)?;
            }
            if self.shared.in_window(self.shared.now_ns()) {
                self.stats.commits += batch.commits;
            }
            queue.complete(batch.upto);
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, len: u64) -> Result<(), RunError> {
        let now = self.shared.now_ns();
        let req = IoReq {
            slot: 0,
            file: 0,
            offset,
            len: len as u32,
            write: true,
        };
        self.before_io(&req);
        self.slots[0] = Slot {
            req: Some(req),
            sched_ns: now,
            submit_ns: now,
            then_write: false,
        };
        self.free.retain(|&s| s != 0);
        self.batch.push(req);
        self.submit_batch()?;
        while self.done.is_empty() {
            self.engine
                .reap(1, &mut self.done)
                .map_err(|e| self.io_error("reap", 0, offset, len, e))?;
        }
        let c = self.done.pop().expect("reaped one");
        let done_at = self.shared.now_ns();
        self.complete(c, done_at)?;
        Ok(())
    }
}
