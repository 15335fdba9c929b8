// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The enter half of the synchronous calls, included by capture.bpf.c (its maps, structs and
// helpers come first): what each call's arguments say, and whether it is on a traced file.

/* The enter half of an fd-based call: false when the call is not on a traced file. */
static __always_inline int enter_fd(struct pending *p, struct task_struct *task, __u64 *a)
{
	struct event *ev = &p->ev;
	__u32 op = ev->op;
	__s64 fd = (__s32)a[0];
	if (!fill_file(ev, task, fd))
		return 0;
	switch (op) {
	case OP_READ: case OP_WRITE:
		ev->len = a[2];
		break;
	/* A positional write on an O_APPEND file appends all the same (pwrite(2), BUGS):
	 * `fill_file` put the file's end in `offset`. */
	case OP_PREAD: case OP_PWRITE:
		ev->len = a[2];
		if (!(op == OP_PWRITE && (ev->flags & O_APPEND)))
			ev->offset = a[3];
		break;
	case OP_READV: case OP_WRITEV:
		ev->len = iov_sum(a[1], a[2]);
		break;
	case OP_PREADV: case OP_PWRITEV:
		ev->len = iov_sum(a[1], a[2]);
		if (!(op == OP_PWRITEV && (ev->flags & O_APPEND)))
			ev->offset = a[3];
		break;
	case OP_PREADV2: case OP_PWRITEV2: {
		ev->len = iov_sum(a[1], a[2]);
		/* RWF_APPEND appends, RWF_NOAPPEND does not, whatever the file's flags. */
		int append = op == OP_PWRITEV2 &&
			     (a[5] & RWF_APPEND ||
			      ((ev->flags & O_APPEND) && !(a[5] & RWF_NOAPPEND)));
		if (append)
			ev->offset = ev->size;
		else if ((__s64)a[3] != -1)
			ev->offset = a[3];
		ev->arg = a[5];
		break;
	}
	case OP_SYNC_FILE_RANGE:
		ev->offset = a[1];
		ev->len = a[2];
		ev->arg = a[3];
		break;
	case OP_FALLOCATE:
		ev->arg = a[1];
		ev->offset = a[2];
		ev->len = a[3];
		break;
	case OP_FTRUNCATE:
		ev->len = a[1];
		ev->offset = 0;
		break;
	case OP_LSEEK:
		ev->offset = a[1];
		ev->arg = a[2];
		break;
	case OP_FADVISE:
		ev->offset = a[1];
		ev->len = a[2];
		ev->arg = a[3];
		break;
	default: /* close, fsync, fdatasync, syncfs */
		ev->offset = 0;
		break;
	}
	return 1;
}

/* The enter half of a call that names paths: keeps the pointers and the base directories. */
static __always_inline int enter_path(struct pending *p, struct task_struct *task, __u64 *a)
{
	struct event *ev = &p->ev;
	__s64 dirfd = AT_FDCWD, dirfd2 = AT_FDCWD;
	switch (ev->op) {
	case OP_OPEN:
		p->path = a[0];
		ev->arg = a[1];
		break;
	case OP_CREAT:
		p->path = a[0];
		ev->arg = 0100 | 01 | 01000; /* O_CREAT | O_WRONLY | O_TRUNC */
		break;
	case OP_OPENAT:
		dirfd = a[0];
		p->path = a[1];
		ev->arg = a[2];
		break;
	case OP_OPENAT2: {
		__u64 flags = 0;
		dirfd = a[0];
		p->path = a[1];
		if (bpf_probe_read_user(&flags, sizeof(flags), (void *)a[2]) < 0)
			count(S_USER_READ_FAILED);
		ev->arg = flags;
		break;
	}
	case OP_RENAME:
		p->path = a[0];
		p->path2 = a[1];
		break;
	case OP_RENAMEAT: case OP_RENAMEAT2:
		dirfd = a[0];
		p->path = a[1];
		dirfd2 = a[2];
		p->path2 = a[3];
		ev->arg = ev->op == OP_RENAMEAT2 ? a[4] : 0;
		break;
	case OP_UNLINK: case OP_MKDIR: case OP_RMDIR:
		p->path = a[0];
		break;
	case OP_UNLINKAT:
		dirfd = a[0];
		p->path = a[1];
		ev->arg = a[2];
		break;
	case OP_MKDIRAT:
		dirfd = a[0];
		p->path = a[1];
		break;
	case OP_TRUNCATE:
		p->path = a[0];
		ev->len = a[1];
		break;
	case OP_LINK:
		p->path = a[0];
		p->path2 = a[1];
		break;
	case OP_LINKAT:
		dirfd = a[0];
		p->path = a[1];
		dirfd2 = a[2];
		p->path2 = a[3];
		break;
	case OP_SYMLINK: /* the link made; its target is any string */
		p->path = a[1];
		break;
	case OP_SYMLINKAT:
		dirfd = a[1];
		p->path = a[2];
		break;
	default:
		return 0;
	}
	p->base_traced = base_dir(task, dirfd, &ev->base_dev, &ev->base_ino);
	if (p->path2)
		p->base_traced |= base_dir(task, dirfd2, &ev->base2_dev, &ev->base2_ino);
	return 1; /* decided at exit, with `base_traced` and whether the paths are absolute */
}

/* A copy of `ev` to the ring, for user space to count. */
static __always_inline void report(struct event *ev)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(S_RING_FULL);
		return;
	}
	*e = *ev;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

#define CLOSE_RANGE_CLOEXEC 4
#define MAX_CLOSE 256

/* A report of descriptor `fd` of the current thread (`id`) that `close_range` closes, if it is
 * a traced file. A global function: verified once, not at each turn of `closed_range`'s loop. */
__attribute__((noinline)) int closed_fd(__u64 fd, __u64 id)
{
	struct event ev = {};
	ev.op = OP_CLOSE_RANGE;
	ev.tid = (__u32)id;
	ev.tgid = id >> 32;
	if (fill_file(&ev, bpf_get_current_task_btf(), fd))
		report(&ev);
	return 0;
}

/* close_range: a report per traced file among the first MAX_CLOSE descriptors it closes. */
static __always_inline void closed_range(__u64 id, __u64 *a)
{
	if (a[2] & CLOSE_RANGE_CLOEXEC)
		return; /* only marks them close-on-exec */
	__u32 first = a[0], last = a[1];
	for (int i = 0; i < MAX_CLOSE; i++) {
		__u64 fd = (__u64)first + i;
		if (fd > last)
			break;
		closed_fd(fd, id);
	}
}

struct vm_area_struct { struct file *vm_file; } __attribute__((preserve_access_index));

static long synced_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	fill_from(data, BPF_CORE_READ(vma, vm_file));
	return 0;
}

/* Calls a replay does not make: reported (without a duration) when they name a file on a
 * traced file system; user space counts those on traced files. */
static __always_inline void enter_uncovered(struct pending *p, struct task_struct *task,
					    __u64 *a)
{
	__u32 op = p->ev.op;
	int hit;
	if (op == OP_CLOSE_RANGE) {
		closed_range((__u64)p->ev.tgid << 32 | p->ev.tid, a);
		return;
	}
	if (op == OP_MSYNC) {
		/* The file mapped at the synced address, if any. */
		bpf_find_vma(bpf_get_current_task_btf(), a[0], synced_vma, &p->ev, 0);
		hit = p->ev.dev != 0;
	} else if (op == OP_MMAP)
		hit = fill_file(&p->ev, task, (__s32)a[4]);
	else if (op == OP_SENDFILE)
		hit = fill_file(&p->ev, task, (__s32)a[0]) || fill_file(&p->ev, task, (__s32)a[1]);
	else /* copy_file_range, splice: fd_in at 0, fd_out at 2 */
		hit = fill_file(&p->ev, task, (__s32)a[0]) || fill_file(&p->ev, task, (__s32)a[2]);
	if (hit)
		report(&p->ev);
}
