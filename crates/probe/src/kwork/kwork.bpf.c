// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Kernel work by whom it was for: CPU time of workqueue items, hard and soft interrupts, keyed by
// what they name (a workqueue, a block device, an interrupt line) and by what queued them (the
// context that queued a work item: a device's completion, another work item, a process).
//
// Classic tracepoints only, with their fields laid out as /sys/kernel/tracing/events/*/format
// gives them (stable since 5.x), so that the program needs no BTF and no vmlinux.h.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum kind {
	K_NONE = 0,
	K_WQ = 1,      /* name: a workqueue */
	K_DEV = 2,     /* num: a block device's dev_t (major << 20 | minor) */
	K_PID = 3,     /* num: a process's tgid; name: its comm */
	K_IRQ = 4,     /* num: the line; name: its handler's name */
	K_SOFTIRQ = 5, /* num: the vector */
	K_BDI = 6,     /* name: the device a writeback work item wrote back ("7:1") */
};

#define NAME_LEN 24
#define DEPTH 4

struct label {
	__u32 kind;
	__u32 num;
	char name[NAME_LEN];
};

/* What CPU time is summed by: what ran, and what queued it. */
struct key {
	struct label self;
	struct label origin;
};


/* One level of a CPU's nesting: a work item's task, a soft interrupt, a hard interrupt. */
struct level {
	struct key key;
	__u64 since;
};

struct cpu_state {
	__u32 depth; /* levels in use above the task level */
	__u32 task_pid; /* the task at level 0, if it runs a work item (else 0) */
	struct level levels[DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct key);
	__type(value, __u64); /* nanoseconds */
} totals SEC(".maps");

/* Stretches not stored because `totals` was full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* The key of a queued work item, by its address, until it runs. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct key);
} queued SEC(".maps");

/* The key of the work item a kernel worker is running, by the worker's pid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct key);
} running SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpus SEC(".maps");

/* Common tracepoint header (8 bytes) and the fields each program reads. */
struct tp_queue_work {
	__u64 common;
	__u64 work;
	__u64 function;
	__u32 workqueue_loc;
};

struct tp_execute {
	__u64 common;
	__u64 work;
};

struct tp_writeback_start {
	__u64 common;
	char name[32];
};

struct tp_irq_entry {
	__u64 common;
	__s32 irq;
	__u32 name_loc;
};

struct tp_softirq {
	__u64 common;
	__u32 vec;
};

struct tp_rq_complete {
	__u64 common;
	__u32 dev;
};

struct tp_sched_switch {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	__s64 prev_state;
	char next_comm[16];
	__s32 next_pid;
};

/* The verifier needs the index masked where it is used; the barrier keeps the compiler from
 * dropping a mask it can prove redundant. */
static __always_inline struct level *level_at(struct cpu_state *s, __u32 d)
{
	barrier_var(d);
	d &= DEPTH - 1;
	return &s->levels[d];
}

static struct cpu_state *state(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&cpus, &zero);
}

static void add(const struct key *k, __u64 ns)
{
	__u64 *t = bpf_map_lookup_elem(&totals, k);
	if (!t) {
		__u64 zero = 0;
		bpf_map_update_elem(&totals, k, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&totals, k);
	}
	if (!t) {
		/* The table is full: say so rather than lose it silently. */
		__u32 i = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &i);
		if (n)
			__sync_fetch_and_add(n, 1);
		return;
	}
	__sync_fetch_and_add(t, ns);
}

/* Charges the top level's time since its last charge, and restarts its clock. */
static void charge_top(struct cpu_state *s, __u64 now)
{
	__u32 d = s->depth;
	if (d >= DEPTH)
		return;
	struct level *l = level_at(s, d);
	if (d == 0 && s->task_pid == 0)
		return;
	if (l->since && now > l->since)
		add(&l->key, now - l->since);
	l->since = now;
}

static void push(struct cpu_state *s, __u64 now, const struct label *self)
{
	charge_top(s, now);
	__u32 d = s->depth + 1;
	if (d >= DEPTH) {
		s->depth = d; /* deeper than tracked: not charged, but unwound */
		return;
	}
	struct level *l = level_at(s, d);
	__builtin_memset(&l->key, 0, sizeof(l->key));
	l->key.self = *self;
	l->since = now;
	s->depth = d;
}

static void pop(struct cpu_state *s, __u64 now)
{
	if (s->depth == 0)
		return;
	charge_top(s, now);
	s->depth--;
	__u32 d = s->depth;
	if (d < DEPTH)
		level_at(s, d)->since = now;
}

SEC("tracepoint/workqueue/workqueue_queue_work")
int queue_work(struct tp_queue_work *ctx)
{
	struct key k = {};
	k.self.kind = K_WQ;
	bpf_probe_read_kernel_str(k.self.name, NAME_LEN, (void *)ctx + (ctx->workqueue_loc & 0xffff));
	struct cpu_state *s = state();
	__u32 d = s ? s->depth : 0;
	if (s && d > 0 && d < DEPTH) {
		k.origin = level_at(s, d)->key.self;
	} else if (s && d == 0 && s->task_pid) {
		/* Queued by a work item: by what it is, or failing that what queued it. */
		k.origin = s->levels[0].key.self;
		if (k.origin.kind == K_WQ)
			k.origin = s->levels[0].key.origin.kind ? s->levels[0].key.origin : k.origin;
	} else {
		k.origin.kind = K_PID;
		k.origin.num = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(k.origin.name, sizeof(k.origin.name));
	}
	__u64 work = ctx->work;
	bpf_map_update_elem(&queued, &work, &k, BPF_ANY);
	return 0;
}

SEC("tracepoint/workqueue/workqueue_execute_start")
int execute_start(struct tp_execute *ctx)
{
	struct cpu_state *s = state();
	if (!s)
		return 0;
	__u64 work = ctx->work;
	struct key *k = bpf_map_lookup_elem(&queued, &work);
	struct level *l = &s->levels[0];
	if (k) {
		l->key = *k;
		bpf_map_delete_elem(&queued, &work);
	} else {
		__builtin_memset(&l->key, 0, sizeof(l->key));
		l->key.self.kind = K_WQ; /* queued before tracing began */
	}
	__u32 pid = bpf_get_current_pid_tgid();
	s->task_pid = pid;
	l->since = bpf_ktime_get_ns();
	bpf_map_update_elem(&running, &pid, &l->key, BPF_ANY);
	return 0;
}

SEC("tracepoint/workqueue/workqueue_execute_end")
int execute_end(struct tp_execute *ctx)
{
	struct cpu_state *s = state();
	if (!s)
		return 0;
	__u32 pid = bpf_get_current_pid_tgid();
	if (s->depth == 0 && s->task_pid == pid)
		charge_top(s, bpf_ktime_get_ns());
	s->task_pid = 0;
	bpf_map_delete_elem(&running, &pid);
	return 0;
}

SEC("tracepoint/writeback/writeback_start")
int writeback_start(struct tp_writeback_start *ctx)
{
	struct cpu_state *s = state();
	if (!s || s->depth != 0 || !s->task_pid)
		return 0;
	charge_top(s, bpf_ktime_get_ns());
	struct level *l = &s->levels[0];
	l->key.self.kind = K_BDI;
	__builtin_memset(l->key.self.name, 0, NAME_LEN);
	bpf_probe_read_kernel_str(l->key.self.name, NAME_LEN, ctx->name);
	__u32 pid = s->task_pid;
	bpf_map_update_elem(&running, &pid, &l->key, BPF_ANY);
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int sched_switch(struct tp_sched_switch *ctx)
{
	struct cpu_state *s = state();
	if (!s)
		return 0;
	/* No task switches inside an interrupt: a deeper level is one whose exit was missed. */
	s->depth = 0;
	__u64 now = bpf_ktime_get_ns();
	charge_top(s, now);
	__u32 next = ctx->next_pid;
	struct key *k = bpf_map_lookup_elem(&running, &next);
	if (k) {
		s->levels[0].key = *k;
		s->levels[0].since = now;
		s->task_pid = next;
	} else {
		s->task_pid = 0;
	}
	return 0;
}

SEC("tracepoint/irq/irq_handler_entry")
int irq_entry(struct tp_irq_entry *ctx)
{
	struct cpu_state *s = state();
	if (!s)
		return 0;
	struct label self = { .kind = K_IRQ, .num = ctx->irq };
	bpf_probe_read_kernel_str(self.name, NAME_LEN, (void *)ctx + (ctx->name_loc & 0xffff));
	push(s, bpf_ktime_get_ns(), &self);
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int irq_exit(void *ctx)
{
	struct cpu_state *s = state();
	if (s)
		pop(s, bpf_ktime_get_ns());
	return 0;
}

SEC("tracepoint/irq/softirq_entry")
int softirq_entry(struct tp_softirq *ctx)
{
	struct cpu_state *s = state();
	if (!s)
		return 0;
	struct label self = { .kind = K_SOFTIRQ, .num = ctx->vec };
	push(s, bpf_ktime_get_ns(), &self);
	return 0;
}

SEC("tracepoint/irq/softirq_exit")
int softirq_exit(void *ctx)
{
	struct cpu_state *s = state();
	if (s)
		pop(s, bpf_ktime_get_ns());
	return 0;
}

/* In an interrupt, what follows a request's completion (its bios' end_io, the file system's
 * completion work) is that request's device's: the level is relabelled by it. */
SEC("tracepoint/block/block_rq_complete")
int rq_complete(struct tp_rq_complete *ctx)
{
	struct cpu_state *s = state();
	__u32 d = s ? s->depth : 0;
	if (!s || d == 0 || d >= DEPTH)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct level *l = level_at(s, d);
	if (l->key.self.kind == K_DEV) {
		charge_top(s, now);
	} else {
		/* The time since the interrupt began led up to this completion. */
		l->key.self.kind = K_DEV;
	}
	__builtin_memset(l->key.self.name, 0, NAME_LEN);
	l->key.self.num = ctx->dev;
	return 0;
}
