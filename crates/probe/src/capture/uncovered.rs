//! The calls a trace does not hold, counted by name (`Footer::uncovered`) when they touched
//! what is traced: a file under a root, a path under a root, or, for io_uring requests that
//! name paths (whose strings the program cannot read), any path of a traced process.

use super::event::{syscall, RawEvent, NAMING, URING_OTHER};
use super::paths::PathIndex;

/// The io_uring opcodes' names, by opcode (`enum io_uring_op`, up to Linux 6.15).
const URING_OPS: [&str; 63] = [
    "io_uring:nop",
    "io_uring:readv",
    "io_uring:writev",
    "io_uring:fsync",
    "io_uring:read_fixed",
    "io_uring:write_fixed",
    "io_uring:poll_add",
    "io_uring:poll_remove",
    "io_uring:sync_file_range",
    "io_uring:sendmsg",
    "io_uring:recvmsg",
    "io_uring:timeout",
    "io_uring:timeout_remove",
    "io_uring:accept",
    "io_uring:async_cancel",
    "io_uring:link_timeout",
    "io_uring:connect",
    "io_uring:fallocate",
    "io_uring:openat",
    "io_uring:close",
    "io_uring:files_update",
    "io_uring:statx",
    "io_uring:read",
    "io_uring:write",
    "io_uring:fadvise",
    "io_uring:madvise",
    "io_uring:send",
    "io_uring:recv",
    "io_uring:openat2",
    "io_uring:epoll_ctl",
    "io_uring:splice",
    "io_uring:provide_buffers",
    "io_uring:remove_buffers",
    "io_uring:tee",
    "io_uring:shutdown",
    "io_uring:renameat",
    "io_uring:unlinkat",
    "io_uring:mkdirat",
    "io_uring:symlinkat",
    "io_uring:linkat",
    "io_uring:msg_ring",
    "io_uring:fsetxattr",
    "io_uring:setxattr",
    "io_uring:fgetxattr",
    "io_uring:getxattr",
    "io_uring:socket",
    "io_uring:uring_cmd",
    "io_uring:send_zc",
    "io_uring:sendmsg_zc",
    "io_uring:read_multishot",
    "io_uring:waitid",
    "io_uring:futex_wait",
    "io_uring:futex_wake",
    "io_uring:futex_waitv",
    "io_uring:fixed_fd_install",
    "io_uring:ftruncate",
    "io_uring:bind",
    "io_uring:listen",
    "io_uring:recv_zc",
    "io_uring:epoll_wait",
    "io_uring:readv_fixed",
    "io_uring:writev_fixed",
    "io_uring:pipe",
];

/// The name `e` is counted under, if it touched what is traced.
pub fn counted(index: &PathIndex, e: &RawEvent) -> Option<&'static str> {
    let on_file = || index.get((e.dev, e.ino)).is_some();
    if e.code == URING_OTHER {
        let name = URING_OPS.get(e.arg as usize).copied();
        return (e.dev == 0 || on_file()).then(|| name.unwrap_or("io_uring:other"));
    }
    let name = syscall(e.code)?.name;
    let hit = if NAMING.contains(&e.code) {
        let under = |dev: u32, ino: u64, path: Option<&str>| {
            let base = path.filter(|p| !p.starts_with('/')).map(|_| (dev, ino));
            path.is_some_and(|p| index.resolve(base, p).is_some())
        };
        under(e.base_dev, e.base_ino, e.path.as_deref())
            || under(e.base2_dev, e.base2_ino, e.path2.as_deref())
    } else {
        on_file()
    };
    hit.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::paths::Loc;

    /// `/data` (dev 8, inode 2) holding the file `f` (inode 5).
    fn index() -> PathIndex {
        let mut ix = PathIndex::new(vec![(8, "/data".into())]);
        let at = |rel: &str| Loc {
            root: 0,
            rel: rel.into(),
        };
        ix.insert((8, 2), at(""), true, None);
        ix.insert((8, 5), at("f"), false, Some(0));
        ix
    }

    fn named(code: u32, path: &str, path2: Option<&str>) -> RawEvent {
        RawEvent {
            code,
            base_dev: 8,
            base_ino: 2,
            base2_dev: 8,
            base2_ino: 2,
            path: Some(path.into()),
            path2: path2.map(Into::into),
            ..RawEvent::default()
        }
    }

    #[test]
    fn a_call_naming_paths_counts_when_one_is_under_a_root() {
        let ix = index();
        let truncate = *NAMING.start();
        assert_eq!(
            counted(&ix, &named(truncate, "/data/f", None)),
            Some("truncate")
        );
        assert_eq!(counted(&ix, &named(truncate, "f", None)), Some("truncate"));
        assert_eq!(counted(&ix, &named(truncate, "/tmp/f", None)), None);
        let link = truncate + 1;
        assert_eq!(
            counted(&ix, &named(link, "/tmp/a", Some("b"))),
            Some("link")
        );
        let mut outside = named(link, "a", Some("b"));
        (outside.base_ino, outside.base2_ino) = (99, 99);
        assert_eq!(counted(&ix, &outside), None);
    }

    #[test]
    fn an_io_uring_request_counts_on_a_traced_file_or_when_it_names_paths() {
        let ix = index();
        let other = |arg: u32, dev: u32, ino: u64| RawEvent {
            code: URING_OTHER,
            arg,
            dev,
            ino,
            ..RawEvent::default()
        };
        assert_eq!(counted(&ix, &other(17, 8, 5)), Some("io_uring:fallocate"));
        assert_eq!(
            counted(&ix, &other(17, 8, 77)),
            None,
            "same device, not indexed"
        );
        assert_eq!(counted(&ix, &other(18, 0, 0)), Some("io_uring:openat"));
        assert_eq!(counted(&ix, &other(200, 8, 5)), Some("io_uring:other"));
    }

    #[test]
    fn a_call_on_a_descriptor_counts_on_a_traced_file() {
        let ix = index();
        let msync = syscall(45).unwrap();
        assert_eq!(msync.name, "msync");
        let on = |ino: u64| RawEvent {
            code: msync.code,
            dev: 8,
            ino,
            ..RawEvent::default()
        };
        assert_eq!(counted(&ix, &on(5)), Some("msync"));
        assert_eq!(counted(&ix, &on(6)), None);
    }
}
