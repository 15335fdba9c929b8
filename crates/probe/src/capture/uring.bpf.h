// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// io_uring, included by capture.bpf.c (its maps, structs and helpers come first).
//
// A request is seen twice: at `io_uring_submit_req` (prepared: opcode, offset, length), in the
// submitter's context (or its SQ-poll thread, of the same process), and at `io_uring_complete`
// (its result; `req->file` is assigned by then, also for registered files, whose SQE holds an
// index, not a descriptor). The two records are paired in user space by the request's address.
// Classic tracepoints, laid out as their `format` files say (checked by `layout.rs`); the
// request's fields are read through CO-RE and guarded, so a kernel whose io_kiocb differs
// loads the capture without them.

/* Kinds in `arg` of an OP_URING_SUBMIT record. */
#define URING_READ 1
#define URING_WRITE 2
#define URING_FSYNC 3
#define URING_FDATASYNC 4

#define IORING_OP_READV 1
#define IORING_OP_WRITEV 2
#define IORING_OP_FSYNC 3
#define IORING_OP_READ_FIXED 4
#define IORING_OP_WRITE_FIXED 5
#define IORING_OP_OPENAT 18
#define IORING_OP_CLOSE 19
#define IORING_OP_STATX 21
#define IORING_OP_READ 22
#define IORING_OP_WRITE 23
#define IORING_OP_OPENAT2 28
#define IORING_OP_RENAMEAT 35
#define IORING_OP_LINKAT 39
#define IORING_OP_SETXATTR 42
#define IORING_OP_GETXATTR 44
#define IORING_OP_READV_FIXED 60
#define IORING_OP_WRITEV_FIXED 61
#define IORING_FSYNC_DATASYNC 1
#define REQ_F_FIXED_FILE 1

struct kiocb {
	struct file *ki_filp;
	long long ki_pos;
} __attribute__((preserve_access_index));
struct io_rw {
	struct kiocb kiocb;
	__u64 addr;
	__u32 len;
} __attribute__((preserve_access_index));
struct io_sync {
	struct file *file;
	long long len;
	long long off;
	int flags;
} __attribute__((preserve_access_index));
struct io_cqe {
	__u64 user_data;
	__s32 res;
	int fd;
} __attribute__((preserve_access_index));
struct io_close {
	struct file *file;
	int fd;
	__u32 file_slot;
} __attribute__((preserve_access_index));
struct io_cmd_data {
	struct file *file;
} __attribute__((preserve_access_index));
struct io_kiocb {
	struct file *file;
	struct io_cmd_data cmd;
	struct io_cqe cqe;
} __attribute__((preserve_access_index));

struct uring_submit_ctx {
	__u64 common;
	__u64 ctx;
	__u64 req;
	__u64 user_data;
	__u8 opcode;
	__u8 pad[7];
	__u64 flags;
};

struct uring_complete_ctx {
	__u64 common;
	__u64 ctx;
	__u64 req;
	__u64 user_data;
	__s32 res;
};

/* Requests whose submission was recorded, until their completion: 0, or URING_COUNTED with
 * the opcode of a request that is only counted, on a registered file not known before. */
#define URING_COUNTED 0x100
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u32);
} uring SEC(".maps");

static __always_inline __u32 uring_kind(__u8 opcode)
{
	switch (opcode) {
	case IORING_OP_READV: case IORING_OP_READ_FIXED: case IORING_OP_READ:
	case IORING_OP_READV_FIXED:
		return URING_READ;
	case IORING_OP_WRITEV: case IORING_OP_WRITE_FIXED: case IORING_OP_WRITE:
	case IORING_OP_WRITEV_FIXED:
		return URING_WRITE;
	case IORING_OP_FSYNC:
		return URING_FSYNC;
	default:
		return 0;
	}
}

/* The requests that name paths (openat, statx, renameat...linkat, xattrs by path): their
 * strings are the kernel's by now, so they are counted for a traced process, wherever. */
static __always_inline int uring_names_paths(__u8 opcode)
{
	return opcode == IORING_OP_OPENAT || opcode == IORING_OP_STATX ||
	       opcode == IORING_OP_OPENAT2 ||
	       (opcode >= IORING_OP_RENAMEAT && opcode <= IORING_OP_LINKAT) ||
	       opcode == IORING_OP_SETXATTR || opcode == IORING_OP_GETXATTR;
}

/* A request a replay does not make: reported for user space to count (`arg`: its opcode)
 * when it names paths or a traced file; on a registered file, at its completion. */
static __always_inline void uring_other(struct uring_submit_ctx *ctx, struct io_kiocb *req,
					struct task_struct *task)
{
	struct event ev = {};
	ev.op = OP_URING_OTHER;
	ev.arg = ctx->opcode;
	if (!uring_names_paths(ctx->opcode)) {
		if (ctx->flags & REQ_F_FIXED_FILE) {
			__u64 key = ctx->req;
			__u32 counted = URING_COUNTED | ctx->opcode;
			bpf_map_update_elem(&uring, &key, &counted, BPF_ANY);
			return;
		}
		/* The descriptor: the request's, or for a close (which has none), the one it closes. */
		int fd = BPF_CORE_READ(req, cqe.fd);
		if (ctx->opcode == IORING_OP_CLOSE) {
			if (!bpf_core_field_exists(struct io_close, fd) ||
			    !bpf_core_field_exists(struct io_close, file_slot))
				return;
			struct io_close *close = (void *)__builtin_preserve_access_index(&req->cmd);
			if (BPF_CORE_READ(close, file_slot))
				return; /* a registered file's slot: not looked into */
			fd = BPF_CORE_READ(close, fd);
		}
		if (!fill_file(&ev, task, fd))
			return;
	}
	report(&ev);
}

SEC("tracepoint/io_uring/io_uring_submit_req")
int uring_submit(struct uring_submit_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	if (!bpf_core_field_exists(struct io_kiocb, cmd) ||
	    !bpf_core_field_exists(struct io_kiocb, cqe))
		return 0;
	__u32 kind = uring_kind(ctx->opcode);
	struct io_kiocb *req = (void *)ctx->req;
	struct task_struct *task = bpf_get_current_task_btf();
	if (!kind) {
		uring_other(ctx, req, task);
		return 0;
	}
	struct pending pend = {};
	struct pending *p = &pend;
	p->ev.op = OP_URING_SUBMIT;
	if (!(ctx->flags & REQ_F_FIXED_FILE)) {
		/* A descriptor: filtered now. A registered file is known at completion. */
		int fd = BPF_CORE_READ(req, cqe.fd);
		if (!fill_file(&p->ev, task, fd))
			return 0;
	}
	void *cmd = __builtin_preserve_access_index(&req->cmd);
	if (kind == URING_FSYNC) {
		struct io_sync *sync = cmd;
		if (BPF_CORE_READ(sync, flags) & IORING_FSYNC_DATASYNC)
			kind = URING_FDATASYNC;
		p->ev.offset = 0;
		p->ev.len = 0;
	} else {
		struct io_rw *rw = cmd;
		__u64 len = BPF_CORE_READ(rw, len);
		p->ev.offset = BPF_CORE_READ(rw, kiocb.ki_pos);
		if (ctx->opcode == IORING_OP_READV || ctx->opcode == IORING_OP_WRITEV ||
		    ctx->opcode == IORING_OP_READV_FIXED || ctx->opcode == IORING_OP_WRITEV_FIXED)
			len = iov_sum(BPF_CORE_READ(rw, addr), len);
		p->ev.len = len;
	}
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(S_RING_FULL);
		return 0;
	}
	*e = p->ev;
	e->arg = kind;
	e->base_ino = ctx->req;
	e->tid = (__u32)id;
	e->tgid = id >> 32;
	e->start = bpf_ktime_get_ns();
	/* Submitted inside io_uring_enter (or by an SQ-poll thread): the time since the
	 * thread's last recorded call or submission. */
	struct task_state *s = state(task, 1);
	if (s) {
		e->cpu = cpu_since(s, task);
		cpu_mark(s, task);
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	__u64 key = ctx->req;
	__u32 recorded = 0;
	bpf_map_update_elem(&uring, &key, &recorded, BPF_ANY);
	return 0;
}

SEC("tracepoint/io_uring/io_uring_complete")
int uring_complete(struct uring_complete_ctx *ctx)
{
	__u64 key = ctx->req;
	__u32 *seen = bpf_map_lookup_elem(&uring, &key);
	if (!seen)
		return 0;
	__u32 counted = *seen;
	bpf_map_delete_elem(&uring, &key);
	if (counted) {
		/* A counted request on a registered file: reported if the file is traced. */
		struct event ev = {};
		ev.op = OP_URING_OTHER;
		ev.arg = counted & 0xff;
		if (fill_from(&ev, BPF_CORE_READ((struct io_kiocb *)key, file)))
			report(&ev);
		return 0;
	}
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(S_RING_FULL);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->op = OP_URING_DONE;
	e->base_ino = key;
	e->ret = ctx->res;
	e->start = bpf_ktime_get_ns();
	struct io_kiocb *req = (void *)key;
	struct file *f = BPF_CORE_READ(req, file);
	if (f) {
		struct inode *inode = BPF_CORE_READ(f, f_inode);
		__u32 dev = BPF_CORE_READ(inode, i_sb, s_dev);
		if (bpf_map_lookup_elem(&devs, &dev)) {
			e->dev = dev;
			e->ino = BPF_CORE_READ(inode, i_ino);
			e->size = BPF_CORE_READ(inode, i_size);
			e->flags = BPF_CORE_READ(f, f_flags);
		}
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
