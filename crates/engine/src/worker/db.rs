//! Oracle's split of work between sessions and DBWR: a session's dirty step queues the block
//! it just read for the db writer role, and db writer threads write queued blocks in
//! asynchronous batches of up to `iodepth`, waiting for each batch before taking the next.

use super::io::AT_SUBMIT;
use super::{Slot, Worker};
use crate::coupling::DirtyBlock;
use crate::engines::{Engine, IoReq};
use crate::shared::RunError;

impl<E: Engine> Worker<E> {
    /// A dirty step: with probability `pct` %, the block last read becomes dirty. It goes to
    /// the db writer role's queue, or, with that role at 0 threads, is written back in place by
    /// this thread (a read-modify-write, bakeoff's shape of a SLOB writer before DBWR).
    pub(super) fn dirty(&mut self, dbwriter: usize, pct: u8) -> Result<(), RunError> {
        let Some((file, offset, len)) = self.last_read else {
            return Ok(());
        };
        if pct < 100 && self.rng.u8(0..100) >= pct {
            return Ok(());
        }
        self.dirtied = true;
        match self.shared.dirty[dbwriter].clone() {
            Some(queue) => {
                queue.push((file, offset, len), &|| self.shared.stopped());
                Ok(())
            }
            _ => self.write_in_place(file, offset, len),
        }
    }

    /// Writes one block back where it was read, and waits for it.
    fn write_in_place(&mut self, file: u32, offset: u64, len: u32) -> Result<(), RunError> {
        let slot = self.free.pop().unwrap_or(0);
        self.queue_write(slot, (file, offset, len));
        self.inflight += self.submit_batch()?;
        self.drain()
    }

    /// Puts a write of `block` from `slot` in the batch.
    fn queue_write(&mut self, slot: u32, (file, offset, len): DirtyBlock) {
        let req = IoReq {
            slot,
            file,
            offset,
            len,
            write: true,
        };
        self.before_io(&req);
        self.slots[slot as usize] = Slot {
            req: Some(req),
            sched_ns: AT_SUBMIT,
            submit_ns: 0,
            then_write: false,
        };
        self.batch.push(req);
    }

    /// The db writer's loop: take up to `iodepth` dirty blocks, write them all at once, wait.
    pub(super) fn run_db_writer(&mut self) -> Result<(), RunError> {
        let Some(queue) = self.shared.dirty[self.role_idx].clone() else {
            return Ok(());
        };
        let depth = self.slots.len();
        let mut blocks = Vec::with_capacity(depth);
        while queue.take(depth, &mut blocks, &|| self.shared.stopped()) {
            for block in blocks.drain(..) {
                let slot = self
                    .free
                    .pop()
                    .expect("a batch never exceeds the free slots");
                self.queue_write(slot, block);
            }
            self.inflight += self.submit_batch()?;
            self.drain()?;
        }
        Ok(())
    }
}
