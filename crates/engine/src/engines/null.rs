//! `null`: completes every I/O at once without touching the target (fio's null engine), so the
//! tool's own cost can be measured and its plumbing tested anywhere.

use super::{Completion, Engine, IoReq};
use crate::buffers::AlignedBuf;
use bakeoff_core::plan::SyncKind;
use std::fs::File;
use std::io;
use std::sync::Arc;

/// An engine that does no I/O.
pub struct Null {
    bufs: Vec<AlignedBuf>,
    done: Vec<Completion>,
}

impl Engine for Null {
    const NAME: &'static str = "null";
    const SYNCHRONOUS: bool = true;

    fn transfer(&mut self, req: &IoReq) -> i64 {
        i64::from(req.len)
    }

    fn open(_files: Arc<Vec<File>>, depth: u32, buf_len: usize) -> io::Result<Self> {
        let bufs = (0..depth).map(|_| AlignedBuf::new(buf_len)).collect();
        Ok(Null {
            bufs,
            done: Vec::new(),
        })
    }

    fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        self.bufs[slot as usize].as_mut_slice()
    }

    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        self.done.extend(reqs.iter().map(|r| Completion {
            slot: r.slot,
            result: i64::from(r.len),
        }));
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }

    fn sync(&mut self, _file: u32, _kind: SyncKind) -> io::Result<()> {
        Ok(())
    }
}
