// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The file-system calls of a process tree, one ring-buffer record per finished call.
//
// One generic enter and one generic exit program, each attached by user space to many
// `syscalls:sys_{enter,exit}_*` tracepoints with the call's kind (`enum op`) in the attach
// cookie. The file a call names is found in the kernel from the caller's descriptor table, and
// the call is dropped before anything is reserved unless the file's superblock is one of the
// traced ones (`devs`). Kernel structs are read through CO-RE relocations on the minimal local
// declarations below (no vmlinux.h: bpftool is not a build requirement).
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The call kinds; the numbers are shared with `event.rs` (`Syscall`). */
enum op {
	OP_OPEN = 1, OP_OPENAT, OP_OPENAT2, OP_CREAT, OP_CLOSE,
	OP_READ, OP_WRITE, OP_PREAD, OP_PWRITE, OP_READV, OP_WRITEV,
	OP_PREADV, OP_PWRITEV, OP_PREADV2, OP_PWRITEV2,
	OP_FSYNC, OP_FDATASYNC, OP_SYNC_FILE_RANGE, OP_SYNCFS, OP_FALLOCATE,
	OP_FTRUNCATE, OP_LSEEK, OP_FADVISE,
	OP_RENAME, OP_RENAMEAT, OP_RENAMEAT2, OP_UNLINK, OP_UNLINKAT, OP_MKDIR, OP_MKDIRAT,
	OP_RMDIR,
	/* Not replayed: counted by user space when they name a traced file. */
	OP_MMAP, OP_COPY_FILE_RANGE, OP_SENDFILE, OP_SPLICE,
	/* Linux AIO: one record per submitted iocb (at submission) and per reaped event. */
	OP_IO_SUBMIT, OP_IO_GETEVENTS, OP_IO_PGETEVENTS,
	/* Not replayed: counted by user space when a path they name is under a root... */
	OP_TRUNCATE, OP_LINK, OP_LINKAT, OP_SYMLINK, OP_SYMLINKAT,
	/* ... or when a descriptor they close or the mapping they sync is a traced file. */
	OP_CLOSE_RANGE, OP_MSYNC,
	/* io_uring (not syscalls: its own tracepoints): a submitted request, and its completion;
	 * a request a replay does not make, counted (its opcode in `arg`). */
	OP_URING_SUBMIT, OP_URING_DONE, OP_URING_OTHER,
	OP_COUNT,
};

/* `stats` slots; shared with `bpf.rs`. */
enum stat {
	S_RING_FULL = 0, S_PENDING_FULL, S_USER_READ_FAILED, S_ASYNC_TRUNCATED,
	S_UNMATCHED_EXIT,
	/* Starts kept less ends seen: summed over the CPUs (wrapping), the calls in progress. */
	S_IN_FLIGHT,
	S_COUNT = 8,
};

#define AT_FDCWD -100
#define O_APPEND 02000
#define RWF_APPEND 0x10
#define RWF_NOAPPEND 0x20
#define PATH_LEN 256
#define MAX_IOV 64
#define MAX_IOCB 64
#define MAX_EVENTS 64

/* Minimal kernel structs, relocated by libbpf against the running kernel's BTF. */
struct super_block { __u32 s_dev; } __attribute__((preserve_access_index));
struct inode {
	unsigned long i_ino;
	long long i_size;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct file {
	struct inode *f_inode;
	unsigned int f_flags;
	long long f_pos;
} __attribute__((preserve_access_index));
struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} __attribute__((preserve_access_index));
struct files_struct { struct fdtable *fdt; } __attribute__((preserve_access_index));
struct dentry { struct inode *d_inode; } __attribute__((preserve_access_index));
struct path { struct dentry *dentry; } __attribute__((preserve_access_index));
struct fs_struct { struct path pwd; } __attribute__((preserve_access_index));
struct sched_entity { __u64 sum_exec_runtime; } __attribute__((preserve_access_index));
struct task_struct {
	int pid;
	int tgid;
	struct files_struct *files;
	struct fs_struct *fs;
	struct sched_entity se;
} __attribute__((preserve_access_index));

/* The syscall tracepoints' context, as their `format` files give it (checked by a test). */
struct sys_enter_ctx {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};
struct sys_exit_ctx {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

/* One finished call; `event.rs` decodes it. A call that names paths carries two PATH_LEN
 * strings after it. */
struct event {
	__u64 start;
	__u64 dur;
	__u64 ino;
	__u64 size;
	__u64 offset;
	__u64 len;
	__s64 ret;
	__u64 base_ino;
	__u64 base2_ino;
	__u32 op;
	__u32 tid;
	__u32 tgid;
	__u32 dev;
	__u32 flags;
	__u32 arg;
	__u32 base_dev;
	__u32 base2_dev;
	char comm[16];
	__u64 cpu; /* the thread's CPU time since its previous recorded call's end */
};

struct path_event {
	struct event ev;
	char path[PATH_LEN];
	char path2[PATH_LEN];
};

/* A call between its enter and its exit: the record so far and the user pointers of its
 * path strings, read at exit (the pages were just used by the call). */
struct pending {
	struct event ev;
	__u64 path;
	__u64 path2;
	__u32 base_traced; /* a relative path of the call starts on a traced file system */
	__u32 pad;
};

struct config {
	__u32 root_tgid; /* its new processes are traced (not itself); 0: none */
	__u32 pad;
	__u64 wake_bytes; /* wake the consumer when this much is waiting */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, S_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 25); /* user space sets the size */
} events SEC(".maps");

static __always_inline void add(__u32 slot, __u64 delta)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &slot);
	if (n)
		__sync_fetch_and_add(n, delta); /* per CPU, but a faultable program can be preempted */
}

static __always_inline void count(__u32 slot)
{
	add(slot, 1);
}

static __always_inline int traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&tgids, &tgid) != 0;
}

#include "task.bpf.h"
#include "cpu.bpf.h"

/* Kernel structs are read by plain loads where the verifier knows their type (a faulting load
 * reads 0), cheaper than a `bpf_probe_read_kernel` call each: the current task is
 * `bpf_get_current_task_btf()`'s; another pointer is cast (`bpf_core_cast`, a register move
 * once verified) to its kernel type first. */

/* The file of descriptor `fd` of `task` (the current task, typed). */
static __always_inline struct file *fd_file(struct task_struct *task, __s64 fd)
{
	if (fd < 0)
		return 0;
	struct fdtable *fdt = task->files->fdt;
	if (!fdt)
		return 0;
	if ((__u64)fd >= fdt->max_fds)
		return 0;
	struct file **fds = fdt->fd; /* an array: not indexed by a plain load */
	struct file *f = 0;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* Fills the file fields of `ev` from `f`; false when it is not a traced file. */
static __always_inline int fill_from(struct event *ev, struct file *f)
{
	if (!f)
		return 0;
	f = bpf_core_cast(f, struct file);
	struct inode *inode = f->f_inode;
	__u32 dev = inode->i_sb->s_dev;
	if (!bpf_map_lookup_elem(&devs, &dev))
		return 0;
	ev->dev = dev;
	ev->ino = inode->i_ino;
	ev->size = inode->i_size;
	ev->flags = f->f_flags;
	ev->offset = f->f_pos;
	if (ev->op == OP_WRITE || ev->op == OP_WRITEV || ev->op == OP_PWRITE ||
	    ev->op == OP_PWRITEV || ev->op == OP_PWRITEV2)
		if (ev->flags & O_APPEND)
			ev->offset = ev->size;
	return 1;
}

/* Fills the file fields of `ev` from descriptor `fd`; false when it is not a traced file. */
static __always_inline int fill_file(struct event *ev, struct task_struct *task, __s64 fd)
{
	return fill_from(ev, fd_file(task, fd));
}

/* The directory a relative path starts from: `dirfd`'s, or the working directory's. Sets
 * `*dev`, `*ino`; false when it is not on a traced file system. The path itself is read at
 * exit: at entry its page may not be mapped yet (non-faulting reads fail there). */
static __always_inline int base_dir(struct task_struct *task, __s64 dirfd, __u32 *dev,
				    __u64 *ino)
{
	struct inode *inode;
	if ((__s32)dirfd == AT_FDCWD) {
		inode = task->fs->pwd.dentry->d_inode;
	} else {
		struct file *f = fd_file(task, (__s32)dirfd);
		if (!f)
			return 0;
		inode = bpf_core_cast(f, struct file)->f_inode;
	}
	if (!inode)
		return 0;
	*dev = inode->i_sb->s_dev;
	if (!bpf_map_lookup_elem(&devs, dev))
		return 0;
	*ino = inode->i_ino;
	return 1;
}

/* Whether the user string at `path` is absolute (read at exit, after the call used it). */
static __always_inline int absolute(__u64 path)
{
	char first = 0;
	if (!path)
		return 0;
	if (bpf_probe_read_user(&first, 1, (void *)path) < 0) {
		count(S_USER_READ_FAILED);
		return 0;
	}
	return first == '/';
}

/* Sum of `iov_len` over at most MAX_IOV iovecs. A global function: verified once, not at
 * each call (inside AIO's loop over iocbs, it would be MAX_IOCB * MAX_IOV steps). */
__attribute__((noinline)) __u64 iov_sum(__u64 iov, __u64 n)
{
	__u64 sum = 0;
	for (int i = 0; i < MAX_IOV; i++) {
		if (i >= n)
			break;
		__u64 len = 0;
		if (bpf_probe_read_user(&len, sizeof(len), (void *)(iov + i * 16 + 8)) < 0) {
			count(S_USER_READ_FAILED);
			break;
		}
		sum += len;
	}
	if (n > MAX_IOV)
		count(S_ASYNC_TRUNCATED);
	return sum;
}

#include "enter.bpf.h"
#include "aio.bpf.h"
#include "uring.bpf.h"

/* A call the trace counts but does not replay: reported now, if on a traced file. */
static __always_inline void enter_counted(struct task_struct *task, __u32 op, __u64 id, __u64 *a)
{
	struct pending pend = {};
	pend.ev.op = op;
	pend.ev.tid = (__u32)id;
	pend.ev.tgid = id >> 32;
	enter_uncovered(&pend, task, a);
}

SEC("tracepoint")
int sys_enter(struct sys_enter_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	__u32 op = bpf_get_attach_cookie(ctx);
	/* Read, not dereferenced: a direct read past a call's last argument would make the
	 * kernel refuse to attach the program to calls with fewer (EACCES, max_ctx_offset). */
	__u64 a[6] = {};
	bpf_probe_read_kernel(a, sizeof(a), ctx->args);
	struct task_struct *task = bpf_get_current_task_btf();
	if (op == OP_IO_SUBMIT) {
		aio_submitted(a);
		return 0;
	}
	int reap = op == OP_IO_GETEVENTS || op == OP_IO_PGETEVENTS;
	if (op >= OP_MMAP && !reap && !(op >= OP_TRUNCATE && op <= OP_SYMLINKAT)) {
		enter_counted(task, op, id, a);
		return 0;
	}
	/* Built in place in the thread's own storage: from 6.14 syscall tracepoints may fault,
	 * and their programs may then be preempted by another task's on the same CPU, which
	 * has storage of its own. */
	struct task_state *s = state(task, 1);
	if (!s) {
		count(S_PENDING_FULL);
		return 0;
	}
	if (s->busy)
		unmatched(s); /* a start after a start: the first one's end was not seen */
	struct pending *p = &s->p;
	__builtin_memset(p, 0, sizeof(*p));
	p->ev.op = op;
	int keep;
	if (reap) {
		p->path2 = a[3]; /* the events array, read at exit (not a path: no strings) */
		keep = 1;
	} else if (op >= OP_RENAME || op == OP_OPEN || op == OP_OPENAT || op == OP_OPENAT2 ||
		   op == OP_CREAT) {
		keep = enter_path(p, task, a);
	} else {
		keep = enter_fd(p, task, a);
	}
	if (!keep)
		return 0;
	p->ev.tid = (__u32)id;
	p->ev.tgid = id >> 32;
	p->ev.start = bpf_ktime_get_ns();
	p->ev.cpu = cpu_since(s, task);
	s->busy = 1;
	add(S_IN_FLIGHT, 1);
	return 0;
}

static __always_inline __u64 submit_flags(void)
{
	__u32 zero = 0;
	struct config *c = bpf_map_lookup_elem(&config, &zero);
	if (c && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > c->wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void read_path(char *dst, __u64 src)
{
	dst[0] = 0;
	if (src && bpf_probe_read_user_str(dst, PATH_LEN, (void *)src) < 0)
		count(S_USER_READ_FAILED);
}

/* The ring record of the finished call in `p`. */
static __always_inline void submit(struct pending *p)
{
	if (p->path) {
		struct path_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			e->ev = p->ev;
			read_path(e->path, p->path);
			read_path(e->path2, p->path2);
			bpf_ringbuf_submit(e, submit_flags());
		} else {
			count(S_RING_FULL);
		}
	} else {
		struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			*e = p->ev;
			bpf_ringbuf_submit(e, submit_flags());
		} else {
			count(S_RING_FULL);
		}
	}
}

SEC("tracepoint")
int sys_exit(struct sys_exit_ctx *ctx)
{
	/* No `traced` look-up: only a traced thread's kept start sets `busy`. */
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_state *s = state(task, 0);
	if (!s || !s->busy)
		return 0; /* not a traced file, or started before the capture */
	struct pending *p = &s->p;
	__u32 op = bpf_get_attach_cookie(ctx);
	if (p->ev.op != op) {
		/* The exit of the call that left this start was not seen. */
		unmatched(s);
		return 0;
	}
	s->busy = 0;
	add(S_IN_FLIGHT, -1);
	__u64 now = bpf_ktime_get_ns();
	p->ev.dur = now - p->ev.start;
	p->ev.ret = ctx->ret;
	bpf_get_current_comm(p->ev.comm, sizeof(p->ev.comm));
	if (op == OP_IO_GETEVENTS || op == OP_IO_PGETEVENTS) {
		aio_reaped(p, p->path2, ctx->ret);
		return 0;
	}
	if (op <= OP_CREAT && ctx->ret >= 0) {
		/* The opened file, by its new descriptor: dropped if not on a traced device. */
		if (!fill_file(&p->ev, task, ctx->ret))
			return 0;
	} else if (p->path && !p->base_traced && !absolute(p->path) && !absolute(p->path2)) {
		/* A failed open or a namespace call, relative to an untraced directory. */
		return 0;
	}
	if (op < OP_MMAP) /* a recorded call, not a counted one */
		cpu_mark(s, task);
	submit(p);
	return 0;
}

/* A traced process's new processes are traced, and so are those of the root (`config`). */
SEC("tp_btf/sched_process_fork")
int on_fork(__u64 *ctx)
{
	struct task_struct *parent = (void *)ctx[0];
	struct task_struct *child = (void *)ctx[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 zero = 0;
	struct config *c = bpf_map_lookup_elem(&config, &zero);
	if (!traced(ptgid) && !(c && c->root_tgid && c->root_tgid == ptgid))
		return 0;
	/* A new task's CPU time starts at 0: all of it is before its first call. */
	struct task_state *s = state(child, 1);
	if (s) {
		s->cpu_at = 0;
		s->cpu_known = 1;
	}
	if (ptgid == ctgid)
		return 0; /* a thread: its group is traced already */
	__u8 one = 1;
	bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

/* A process that ended leaves the set (its pid may be reused by anyone). A thread's state
 * needs no deleting: its storage dies with its task. */
SEC("tp_btf/sched_process_exit")
int on_exit(__u64 *ctx)
{
	struct task_struct *task = (void *)ctx[0];
	__u32 pid = BPF_CORE_READ(task, pid);
	__u32 tgid = BPF_CORE_READ(task, tgid);
	if (pid == tgid)
		bpf_map_delete_elem(&tgids, &tgid);
	return 0;
}
