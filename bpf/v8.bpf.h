/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * v8.bpf.h - the JavaScript functions of a node process's stack, read as
 * the native unwinder walks it (native_unwind.bpf.h): V8's generated code
 * and builtins keep frame pointers, and each frame the walk steps through
 * by its frame pointer is looked at here. A JavaScript frame keeps its
 * JSFunction at a fixed offset from its frame pointer; the record carries
 * that function's SharedFunctionInfo (and, for an interpreted frame, the
 * bytecode offset) with the index of the frame, which user space names
 * (collector/v8.c) in its place. One read of the process's heap a frame,
 * two for an interpreted one; the frame's own slots come through the
 * walk's window of stack.
 *
 * Owns `v8_procs` (filled by collector/v8.c), the walk's frames (`v8_walks`,
 * per CPU) and the tunables `v8_stacks` and `v8_loaded`.
 */
#ifndef PROFILER_BPF_V8_BPF_H
#define PROFILER_BPF_V8_BPF_H

#include "bpf/common.bpf.h"
#include "bpf/native_unwind.bpf.h"

/* Set by user space once a process is in v8_procs: until then, no lookup per sample. */
volatile bool v8_loaded;

/* Read the JavaScript frames of processes in `v8_procs`. */
const volatile bool v8_stacks = true;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_V8_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct v8_proc);
} v8_procs SEC(".maps");

/* The JavaScript frames one walk found, innermost first. */
struct v8_walk {
	__u32 nr;
	__u16 truncated; /* more than PROFILE_MAX_PYTHON */
	__u16 on;	 /* the walk is of a process in v8_procs */
	struct v8_frame frames[PROFILE_MAX_PYTHON];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct v8_walk);
} v8_walks SEC(".maps");

/*
 * V8's tagging, the same in every release on 64 bits without pointer
 * compression (the only layout collector/v8.c hands over): small integers
 * have their low bit clear and their value in the upper half; heap objects
 * are their address + 1.
 */
#define V8_IS_SMI(v) (((v)&1) == 0)
#define V8_IS_HEAP_OBJECT(v) (((v)&3) == 1)
#define V8_SMI_VALUE(v) ((__u64)(v) >> 32)

/* The process @tgid's V8 layout, or NULL. */
static __always_inline const struct v8_proc *v8_proc(__u32 tgid)
{
	if (!v8_stacks || !v8_loaded)
		return NULL;
	return bpf_map_lookup_elem(&v8_procs, &tgid);
}

/* A walk starts, of a process in v8_procs (@on) or not: no JavaScript frame found yet. */
static __always_inline void v8_walk_start(bool on)
{
	__u32 zero = 0;
	struct v8_walk *vw;

	if (!v8_loaded || !(vw = bpf_map_lookup_elem(&v8_walks, &zero)))
		return;
	vw->nr = 0;
	vw->truncated = 0;
	vw->on = on;
}

/*
 * @w is at a frame of code without CFI, about to step to its caller by its
 * frame pointer: if the frame is a JavaScript function's, keep which.
 */
static __always_inline void v8_frame(struct unwind_walk *w, const struct unwind_ctx *c)
{
	const struct v8_proc *v8 = c->v8;
	__u64 context, function, shared, data, bytecode, offset;
	__u32 zero = 0, n;
	struct v8_walk *vw;

	if (!w->bp_known || !w->nr || !read_stack_word(w, w->bp + v8->fp_context, &context) ||
	    !V8_IS_HEAP_OBJECT(context) ||
	    !read_stack_word(w, w->bp + v8->fp_function, &function) ||
	    !V8_IS_HEAP_OBJECT(function) ||
	    bpf_probe_read_user(&shared, sizeof(shared),
				(void *)(function - 1 + v8->function_shared)) ||
	    !V8_IS_HEAP_OBJECT(shared))
		return;
	vw = bpf_map_lookup_elem(&v8_walks, &zero);
	if (!vw)
		return;
	n = vw->nr;
	if (n >= PROFILE_MAX_PYTHON) {
		vw->truncated = 1;
		return;
	}
	/* An interpreted frame: its bytecode is its function's, and its offset a small integer. */
	vw->frames[n].offset = V8_NO_OFFSET;
	if (read_stack_word(w, w->bp + v8->fp_bytecode_offset, &offset) && V8_IS_SMI(offset) &&
	    read_stack_word(w, w->bp + v8->fp_bytecode_array, &bytecode) &&
	    !bpf_probe_read_user(&data, sizeof(data), (void *)(shared - 1 + v8->shared_data)) &&
	    data == bytecode)
		vw->frames[n].offset = (__u32)V8_SMI_VALUE(offset);
	vw->frames[n].shared = shared;
	vw->frames[n].frame = w->nr - 1;
	vw->nr = n + 1;
}

/*
 * After a walk by unwind_user(), if of a process in v8_procs: its JavaScript frames into @r's
 * addresses from @idx on, two words each (struct v8_frame), flagged
 * SAMPLE_V8_FRAMES. Returns how many.
 */
static __always_inline __u32 v8_stack(struct sample_record *r, __u32 idx)
{
	__u32 zero = 0, n, i;
	struct v8_walk *vw = bpf_map_lookup_elem(&v8_walks, &zero);

	if (!v8_loaded || !vw || !vw->on)
		return 0;
	n = vw->nr;
	if (vw->truncated)
		r->h.flags |= SAMPLE_PYTHON_TRUNCATED;
	for (i = 0; i < PROFILE_MAX_PYTHON; i++) {
		__u32 at = idx + 2 * i;

		if (i >= n || at + 1 >= PROFILE_MAX_IPS)
			break;
		r->ips[at] = vw->frames[i].shared;
		r->ips[at + 1] = ((__u64)vw->frames[i].frame << 32) | vw->frames[i].offset;
	}
	if (i)
		r->h.flags |= SAMPLE_V8_FRAMES;
	return i;
}

#endif
