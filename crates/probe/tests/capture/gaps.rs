//! What the capture once missed without a word: Linux AIO's vector iocbs and io_uring's vector
//! and registered-buffer requests are now recorded; path truncates, links, symlinks,
//! `close_range`, `msync` and io_uring's other requests on traced files are counted by name.

use super::*;
use std::ffi::CString;
use std::os::fd::{AsRawFd, IntoRawFd};

const CHILD_GAPS: &str = "BAKEOFF_CAPTURE_TEST_GAPS";

/// One `PWRITEV` iocb of two 4 KiB iovecs at 8192, submitted and reaped by hand
/// (`struct iocb`, `<linux/aio_abi.h>`).
fn aio_pwritev(f: &std::fs::File) {
    let (a, b) = ([1u8; 4096], [2u8; 4096]);
    let iov = [
        libc::iovec {
            iov_base: a.as_ptr() as *mut _,
            iov_len: 4096,
        },
        libc::iovec {
            iov_base: b.as_ptr() as *mut _,
            iov_len: 4096,
        },
    ];
    // Little-endian: aio_data; aio_key, aio_rw_flags; aio_lio_opcode (IOCB_CMD_PWRITEV),
    // aio_reqprio, aio_fildes; aio_buf (the vector); aio_nbytes (its length); aio_offset.
    let mut iocb = [0u64; 8];
    iocb[2] = 8 | (f.as_raw_fd() as u64) << 32;
    iocb[3] = iov.as_ptr() as u64;
    iocb[4] = 2;
    iocb[5] = 8192;
    let mut ctx: libc::c_ulong = 0;
    let mut events = [0u64; 4];
    let list = [iocb.as_ptr()];
    // SAFETY: the raw AIO calls get valid pointers that outlive them.
    unsafe {
        assert_eq!(libc::syscall(libc::SYS_io_setup, 4, &mut ctx), 0);
        assert_eq!(libc::syscall(libc::SYS_io_submit, ctx, 1, list.as_ptr()), 1);
        let n = libc::syscall(libc::SYS_io_getevents, ctx, 1, 1, events.as_mut_ptr(), 0);
        assert_eq!((n, events[2]), (1, 8192));
        assert_eq!(libc::syscall(libc::SYS_io_destroy, ctx), 0);
    }
}

/// Submits `entry` and waits for its completion; its result.
fn uring_call(ring: &mut io_uring::IoUring, entry: io_uring::squeue::Entry) -> i32 {
    // SAFETY: what the entry points to (a path) outlives the call, which waits for it.
    unsafe { ring.submission().push(&entry).unwrap() };
    ring.submit_and_wait(1).unwrap();
    ring.completion().next().unwrap().result()
}

/// io_uring requests a replay does not make: on a descriptor and a registered file of `dir`,
/// naming a path there, and (not counted) on a descriptor of `outside`.
fn uring_others(dir: &Path, outside: &Path) {
    use io_uring::{opcode, types};
    let mut ring = io_uring::IoUring::new(4).unwrap();
    let f = (std::fs::OpenOptions::new().write(true))
        .open(dir.join("t"))
        .unwrap();
    let o = (std::fs::OpenOptions::new().write(true))
        .open(outside.join("o"))
        .unwrap();
    for fd in [f.as_raw_fd(), o.as_raw_fd()] {
        let grow = opcode::Fallocate::new(types::Fd(fd), 65536).build();
        assert_eq!(uring_call(&mut ring, grow), 0);
    }
    ring.submitter().register_files(&[f.as_raw_fd()]).unwrap();
    let sync = opcode::SyncFileRange::new(types::Fixed(0), 4096).build();
    assert_eq!(uring_call(&mut ring, sync), 0);
    let path = CString::new(dir.join("t").to_str().unwrap()).unwrap();
    let open = opcode::OpenAt::new(types::Fd(libc::AT_FDCWD), path.as_ptr()).build();
    let fd = uring_call(&mut ring, open);
    assert!(fd >= 0, "io_uring openat: {fd}");
    assert_eq!(
        uring_call(&mut ring, opcode::Close::new(types::Fd(fd)).build()),
        0
    );
}

/// The child's calls: each counted or recorded once in `dir`; the same calls outside it not.
fn child_gaps(dir: &Path, outside: &Path) {
    let (t, t2) = (dir.join("t"), dir.join("t2"));
    std::fs::write(&t, [0u8; 16384]).unwrap();
    std::fs::write(outside.join("o"), [0u8; 16384]).unwrap();
    for path in [&t, &outside.join("o")] {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::truncate(c.as_ptr(), 12288) }, 0);
    }
    std::fs::hard_link(&t, &t2).unwrap();
    std::os::unix::fs::symlink("t", dir.join("s")).unwrap();
    std::os::unix::fs::symlink("o", outside.join("s")).unwrap();
    let f = (std::fs::OpenOptions::new().read(true).write(true))
        .open(&t)
        .unwrap();
    // SAFETY: a shared mapping of an open file, written, synced and unmapped here.
    unsafe {
        let fd = f.as_raw_fd();
        let map = libc::mmap(std::ptr::null_mut(), 4096, 3, libc::MAP_SHARED, fd, 0);
        assert_ne!(map, libc::MAP_FAILED);
        *(map as *mut u8) = 9;
        assert_eq!(libc::msync(map, 4096, libc::MS_SYNC), 0);
        assert_eq!(libc::munmap(map, 4096), 0);
    }
    aio_pwritev(&f);
    let fd = std::fs::File::open(&t2).unwrap().into_raw_fd() as libc::c_uint;
    // SAFETY: closes the one descriptor given up above.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, fd, fd, 0) };
    assert_eq!(closed, 0);
    uring_others(dir, outside);
}

#[test]
fn calls_the_trace_cannot_hold_are_counted_by_name() {
    if let (Some(dir), Some(outside)) = (
        std::env::var_os(CHILD_GAPS),
        std::env::var_os(CHILD_OUTSIDE),
    ) {
        child_gaps(Path::new(&dir), Path::new(&outside));
        return;
    }
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let (dir, outside) = (scratch.path().join("data"), scratch.path().join("other"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::create_dir(&outside).unwrap();
    let (capture, trace) = start(&dir, 1 << 20);
    run_child(
        "gaps::calls_the_trace_cannot_hold_are_counted_by_name",
        &[(CHILD_GAPS, &dir), (CHILD_OUTSIDE, &outside)],
    );
    let summary = capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    assert_eq!(summary.lost.total(), 0, "{:?}", summary.lost);
    let count = |names: &[&str]| -> u64 {
        (summary.uncovered.iter())
            .filter(|(n, _)| names.contains(&n.as_str()))
            .map(|(_, c)| c)
            .sum()
    };
    let got = [
        count(&["truncate"]),
        count(&["link", "linkat"]),
        count(&["symlink", "symlinkat"]),
        count(&["mmap"]),
        count(&["msync"]),
        count(&["close_range"]),
        count(&["io_uring:fallocate"]),
        count(&["io_uring:sync_file_range"]),
        count(&["io_uring:openat"]),
        count(&["io_uring:close"]),
    ];
    assert_eq!(got, [1; 10], "{:?}", summary.uncovered);
    assert_eq!(trace.footer.uncovered, summary.uncovered);
    // The vector iocb: an asynchronous write of both iovecs.
    let aio: Vec<(u64, u64, i64)> = (records(&trace).iter())
        .filter(|r| r.is_async)
        .map(|r| (r.offset, r.len, r.result))
        .collect();
    assert_eq!(aio, [(8192, 8192, 8192)]);
}

#[test]
fn io_uring_vectors_and_registered_buffers_are_writes() {
    let Some((_turn, scratch)) = fio_scene() else {
        return;
    };
    let file = scratch.path().join("fio.dat");
    // IORING_OP_WRITEV, then IORING_OP_WRITE_FIXED: 32 writes of 4 KiB each.
    for args in [&["--nonvectored=0"][..], &["--fixedbufs=1"][..]] {
        let (writes, _, _) = fio_capture(
            &file,
            &[&["--ioengine=io_uring", "--io_size=128k"], args].concat(),
        );
        assert_eq!(writes.len(), 32, "{args:?}");
        assert!(
            (writes.iter()).all(|w| (w.len, w.result) == (4096, 4096)),
            "{args:?}: {writes:?}"
        );
    }
}
