//! I/O engines: one struct of hooks each (fio's `ioengine_ops`, trimmed to submit and reap).
//! Engines are chosen once per worker and monomorphised; adding one is a file here, its `mod`
//! line and arm in [`with_engine`] (and a conformance test below), and a variant of
//! [`bakeoff_core::plan::EngineKind`].

mod null;
mod psync;
mod uring;

pub use null::Null;
pub use psync::Psync;
pub use uring::IoUring;

use bakeoff_core::plan::{EngineKind, SyncKind};
use std::fs::File;
use std::io;
use std::sync::Arc;

/// One I/O to issue.
#[derive(Clone, Copy, Debug)]
pub struct IoReq {
    /// Buffer slot (0..depth); also identifies the I/O at completion.
    pub slot: u32,
    /// Index into the engine's files.
    pub file: u32,
    /// Byte offset in the file.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// Write (else read).
    pub write: bool,
}

/// One finished I/O: bytes transferred, or `-errno`.
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    /// The slot of the request.
    pub slot: u32,
    /// Bytes transferred, or a negated errno.
    pub result: i64,
}

/// What every engine provides. Not object-safe on purpose: workers are generic over it.
pub trait Engine: Sized + Send {
    /// Name used in `engine=`.
    const NAME: &'static str;

    /// Performs each I/O inside [`Engine::submit`], one at a time: a worker with one I/O in
    /// flight and no pacing then calls [`Engine::transfer`] directly.
    const SYNCHRONOUS: bool = false;

    /// Prepares the engine for `files` with `depth` slots of `buf_len`-byte aligned buffers.
    fn open(files: Arc<Vec<File>>, depth: u32, buf_len: usize) -> io::Result<Self>;

    /// The buffer of `slot`, to fill before a write or read after a read.
    fn buf_mut(&mut self, slot: u32) -> &mut [u8];

    /// Queues requests; they are submitted here or at the latest by the next [`Engine::reap`]
    /// (a synchronous engine performs them here).
    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()>;

    /// Submits what is queued, waits until at least `min` completions are available and
    /// appends all available ones.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()>;

    /// Performs one I/O now (slot 0's buffer): bytes moved, or `-errno`. The default goes
    /// through the queue; synchronous engines do it directly.
    fn transfer(&mut self, req: &IoReq) -> i64 {
        let mut done = Vec::with_capacity(1);
        match self
            .submit(std::slice::from_ref(req))
            .and_then(|()| self.reap(1, &mut done))
        {
            Ok(()) => done.first().map_or(-i64::from(libc::EIO), |c| c.result),
            Err(e) => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    /// Syncs one file (no I/O may be in flight).
    fn sync(&mut self, file: u32, kind: SyncKind) -> io::Result<()>;
}

/// Code generic over the engine: [`with_engine`] runs it with the engine type a plan names.
pub(crate) trait WithEngine {
    /// What it gives back.
    type Output;
    /// Runs with engine `E`.
    fn run<E: Engine + 'static>(self) -> Self::Output;
}

/// Runs `code` with the engine `kind` names: the one place an [`EngineKind`] becomes a type.
pub(crate) fn with_engine<W: WithEngine>(kind: EngineKind, code: W) -> W::Output {
    match kind {
        EngineKind::Psync => code.run::<Psync>(),
        EngineKind::IoUring => code.run::<IoUring>(),
        EngineKind::Null => code.run::<Null>(),
    }
}

/// `fsync` or `fdatasync` through std, for engines that sync synchronously.
pub(crate) fn sync_file(file: &File, kind: SyncKind) -> io::Result<()> {
    match kind {
        SyncKind::Fsync => file.sync_all(),
        SyncKind::Fdatasync => file.sync_data(),
    }
}

#[cfg(test)]
mod conformance {
    //! The same checks for every engine (fio's engine tests, ripgrep's run-twice idea).
    use super::*;
    use std::io::{Read, Seek, Write};

    fn scratch() -> (tempfile::NamedTempFile, Arc<Vec<File>>) {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8).collect();
        tmp.write_all(&data).unwrap();
        let f = File::options()
            .read(true)
            .write(true)
            .open(tmp.path())
            .unwrap();
        (tmp, Arc::new(vec![f]))
    }

    fn round_trip<E: Engine>(real_io: bool) {
        let (tmp, files) = scratch();
        let mut e = E::open(files, 4, 8192).unwrap();
        e.buf_mut(1)[..4096].fill(0xAB);
        let reqs = [
            IoReq {
                slot: 0,
                file: 0,
                offset: 4096,
                len: 4096,
                write: false,
            },
            IoReq {
                slot: 1,
                file: 0,
                offset: 8192,
                len: 4096,
                write: true,
            },
        ];
        e.submit(&reqs).unwrap();
        let mut out = Vec::new();
        while out.len() < 2 {
            e.reap(1, &mut out).unwrap();
        }
        assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
        if real_io {
            assert_eq!(e.buf_mut(0)[0], (4096 % 251) as u8);
            let mut f = File::open(tmp.path()).unwrap();
            let mut page = vec![0u8; 4096];
            f.seek(std::io::SeekFrom::Start(8192)).unwrap();
            f.read_exact(&mut page).unwrap();
            assert!(page.iter().all(|&b| b == 0xAB));
        }
    }

    fn reports_errors<E: Engine>() {
        let (_tmp, _) = scratch();
        // A read-only file opened for a write must come back as a negative errno, not a panic.
        let ro = Arc::new(vec![File::open(_tmp.path()).unwrap()]);
        let mut e = E::open(ro, 1, 4096).unwrap();
        e.submit(&[IoReq {
            slot: 0,
            file: 0,
            offset: 0,
            len: 4096,
            write: true,
        }])
        .unwrap();
        let mut out = Vec::new();
        e.reap(1, &mut out).unwrap();
        assert_eq!(out[0].result, -i64::from(libc::EBADF));
    }

    #[test]
    fn psync_round_trip() {
        round_trip::<Psync>(true);
        reports_errors::<Psync>();
    }

    #[test]
    fn io_uring_round_trip() {
        round_trip::<IoUring>(true);
        reports_errors::<IoUring>();
    }

    #[test]
    fn null_completes_without_io() {
        round_trip::<Null>(false);
    }
}
