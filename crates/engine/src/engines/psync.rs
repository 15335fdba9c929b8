//! `psync`: `pread(2)`/`pwrite(2)`, one I/O at a time, performed at submit.

use super::{Completion, Engine, IoReq};
use crate::buffers::AlignedBuf;
use bakeoff_core::plan::SyncKind;
use std::fs::File;
use std::io;
use std::sync::Arc;

/// Synchronous positional I/O.
pub struct Psync {
    files: Arc<Vec<File>>,
    bufs: Vec<AlignedBuf>,
    done: Vec<Completion>,
}

impl Psync {
    /// `pread`/`pwrite` as direct system calls (rustix): no libc wrapper or cancellation point
    /// on the one thing this engine does.
    #[inline]
    fn io(&mut self, r: &IoReq) -> i64 {
        let file = &self.files[r.file as usize];
        let buf = &mut self.bufs[r.slot as usize].as_mut_slice()[..r.len as usize];
        let res = if r.write {
            rustix::io::pwrite(file, buf, r.offset)
        } else {
            rustix::io::pread(file, buf, r.offset)
        };
        match res {
            Ok(n) => n as i64,
            Err(e) => -i64::from(e.raw_os_error()),
        }
    }
}

impl Engine for Psync {
    const NAME: &'static str = "psync";
    const SYNCHRONOUS: bool = true;

    fn open(files: Arc<Vec<File>>, depth: u32, buf_len: usize) -> io::Result<Self> {
        let bufs = (0..depth).map(|_| AlignedBuf::new(buf_len)).collect();
        Ok(Psync {
            files,
            bufs,
            done: Vec::with_capacity(depth as usize),
        })
    }

    fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        self.bufs[slot as usize].as_mut_slice()
    }

    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        for r in reqs {
            let result = self.io(r);
            self.done.push(Completion {
                slot: r.slot,
                result,
            });
        }
        Ok(())
    }

    #[inline]
    fn transfer(&mut self, req: &IoReq) -> i64 {
        self.io(req)
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }

    fn sync(&mut self, file: u32, kind: SyncKind) -> io::Result<()> {
        super::sync_file(&self.files[file as usize], kind)
    }
}
