// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Each traced thread's state between its calls, included by capture.bpf.c (its structs, the
// `stats` counters and `count`, `add` come first): the call in progress and the thread's CPU
// mark (`cpu.bpf.h`).

/* A thread's state, in its task's BPF storage (`tasks`): it dies with the task. */
struct task_state {
	struct pending p; /* the call in progress, when `busy` */
	__u64 cpu_at;     /* the thread's CPU time at the end of its last recorded call... */
	__u32 cpu_known;  /* ... when this is set (`cpu.bpf.h`) */
	__u32 busy;       /* a call's start is kept in `p` and its end not yet seen */
};

/* Per-task storage, not a table keyed by thread id: no hashing, no capacity, no entry to
 * delete when a thread ends, and no other task (one that preempts a faultable syscall
 * tracepoint's program from 6.14) can touch it. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} tasks SEC(".maps");

/* The current thread's state, made on its first use when `create`. */
static __always_inline struct task_state *state(struct task_struct *task, int create)
{
	return bpf_task_storage_get(&tasks, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* The end of the call kept in `s` was not seen: dropped, and counted. */
static __always_inline void unmatched(struct task_state *s)
{
	count(S_UNMATCHED_EXIT);
	s->busy = 0;
	add(S_IN_FLIGHT, -1);
}
