// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Linux AIO, included by capture.bpf.c (its maps, structs and helpers come first).

#define IOCB_CMD_FDSYNC 3
#define IOCB_CMD_PREADV 7
#define IOCB_CMD_PWRITEV 8

/* The iocb fields a replay needs (struct iocb, <linux/aio_abi.h>). */
struct iocb_head {
	__u64 data;
	__u32 key;
	__u32 rw_flags;
	__u16 opcode;
	__s16 reqprio;
	__u32 fildes;
	__u64 buf;
	__u64 nbytes;
	__s64 offset;
};

/* The iocb at `ptr`, submitted at `now`: a record if it is on a traced file, tagged with the
 * iocb's address (in `base_ino`), the AIO opcode in `arg` (a vector's as its plain form's).
 * A global function: verified once, not once per turn of `aio_submitted`'s loop. Negative
 * when the iocb could not be read. */
__attribute__((noinline)) int aio_iocb(__u64 ptr, __u64 now)
{
	struct iocb_head cb = {};
	if (bpf_probe_read_user(&cb, sizeof(cb), (void *)ptr) < 0) {
		count(S_USER_READ_FAILED);
		return -1;
	}
	int vector = cb.opcode == IOCB_CMD_PREADV || cb.opcode == IOCB_CMD_PWRITEV;
	if (cb.opcode > IOCB_CMD_FDSYNC && !vector)
		return 0; /* POLL, NOOP: no file data */
	struct task_struct *task = bpf_get_current_task_btf();
	struct event ev = {};
	ev.op = OP_IO_SUBMIT;
	if (!fill_file(&ev, task, (__s32)cb.fildes))
		return 0;
	__u64 len = cb.nbytes;
	if (vector) {
		/* As PREAD, PWRITE of the iovecs' total (`buf`, `nbytes`: the vector). */
		len = iov_sum(cb.buf, cb.nbytes);
		cb.opcode -= IOCB_CMD_PREADV;
	}
	__u64 id = bpf_get_current_pid_tgid();
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(S_RING_FULL);
		return 0;
	}
	*e = ev;
	e->tid = (__u32)id;
	e->tgid = id >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->start = now;
	e->base_ino = ptr;
	e->arg = cb.opcode;
	e->offset = cb.offset;
	e->len = len;
	/* The CPU time before the call goes with its first recorded iocb. */
	struct task_state *s = state(task, 1);
	if (s) {
		e->cpu = cpu_since(s, task);
		cpu_mark(s, task);
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* io_submit: a record per iocb on a traced file (`aio_iocb`). Reaped by `aio_reaped`. */
static __always_inline void aio_submitted(__u64 *a)
{
	__u64 nr = a[1];
	__u64 now = bpf_ktime_get_ns();
	if (nr > MAX_IOCB)
		count(S_ASYNC_TRUNCATED);
	for (int i = 0; i < MAX_IOCB; i++) {
		if (i >= nr)
			break;
		__u64 ptr = 0;
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)(a[2] + i * 8)) < 0) {
			count(S_USER_READ_FAILED);
			break;
		}
		if (aio_iocb(ptr, now) < 0)
			break;
	}
}

/* io_getevents/io_pgetevents returned `n` events at `events`: a record per event, the iocb's
 * address in `base_ino`, its result in `ret`. */
static __always_inline void aio_reaped(struct pending *p, __u64 events_ptr, __s64 n)
{
	__u64 now = bpf_ktime_get_ns();
	for (int i = 0; i < MAX_EVENTS; i++) {
		if (i >= n)
			break;
		__u64 ev[4] = {}; /* data, obj, res, res2 */
		if (bpf_probe_read_user(ev, sizeof(ev), (void *)(events_ptr + i * 32)) < 0) {
			count(S_USER_READ_FAILED);
			break;
		}
		struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (!e) {
			count(S_RING_FULL);
			continue;
		}
		*e = p->ev;
		e->start = now;
		e->base_ino = ev[1];
		e->ret = ev[2];
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	}
	if (n > MAX_EVENTS)
		count(S_ASYNC_TRUNCATED);
}

