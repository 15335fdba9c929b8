// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The CPU time a thread used between its recorded calls (`cpu` in a record, for a replay's
// think time), included by capture.bpf.c (its structs and the per-thread `tasks` storage come
// first). Each thread's CPU time at the end of its last recorded call is in its `task_state`:
// a thread started during the capture is marked 0 at its fork (its whole time counts), one
// found running has no mark until its first recorded call (whose `cpu` is then 0: unknown).

/* The current thread's CPU time (user and system). The scheduler brings it up to date at its
 * ticks and context switches, not at every read: it can lag by up to a tick. */
static __always_inline __u64 cpu_now(struct task_struct *task)
{
	return task->se.sum_exec_runtime;
}

/* The CPU time the thread of `s` used since its last recorded call ended (0 when unknown). */
static __always_inline __u64 cpu_since(struct task_state *s, struct task_struct *task)
{
	__u64 now = cpu_now(task);
	return s->cpu_known && now > s->cpu_at ? now - s->cpu_at : 0;
}

/* A recorded call of the thread of `s` ended now: the next one's CPU time counts from here. */
static __always_inline void cpu_mark(struct task_state *s, struct task_struct *task)
{
	s->cpu_at = cpu_now(task);
	s->cpu_known = 1;
}
