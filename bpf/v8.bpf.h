/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * v8.bpf.h - the JavaScript functions of a node process's stack, read as
 * the native unwinder walks it (native_unwind.bpf.h): V8's generated code
 * and builtins keep frame pointers, and each frame the walk steps through
 * by its frame pointer is looked at here. A JavaScript frame keeps its
 * JSFunction at a fixed offset from its frame pointer; the frame's address
 * in the record gives way to that function's SharedFunctionInfo, tagged
 * (V8_FRAME_TAG), which user space names (collector/v8.c). So a stack holds
 * as many JavaScript frames as frames, and the same function aggregates
 * whichever of its compiled versions ran. One read of the process's heap a
 * function (the walk keeps the last few: a recursion reads its function
 * once); the frame's own slots come through the walk's window of stack.
 *
 * Owns `v8_procs` (filled by collector/v8.c) and the tunables `v8_stacks`
 * and `v8_loaded`.
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

/*
 * V8's tagging, the same in every release on 64 bits without pointer
 * compression (the only layout collector/v8.c hands over): heap objects are
 * their address + 1; small integers (a typed frame's marker) have their low
 * bit clear.
 */
#define V8_IS_HEAP_OBJECT(v) (((v)&3) == 1)

/* The process @tgid's V8 layout, or NULL. */
static __always_inline const struct v8_proc *v8_proc(__u32 tgid)
{
	if (!v8_stacks || !v8_loaded)
		return NULL;
	return bpf_map_lookup_elem(&v8_procs, &tgid);
}

/*
 * @w is at a frame of code without CFI, about to step to its caller by its
 * frame pointer: if the frame is a JavaScript function's, keep which.
 */
static __always_inline void v8_frame(struct unwind_walk *w, const struct unwind_ctx *c)
{
	const struct v8_proc *v8 = c->v8;
	__u64 context, function, shared;
	__u32 idx, slot;

	if (!w->bp_known || !read_stack_word(w, w->bp + v8->fp_context, &context) ||
	    !V8_IS_HEAP_OBJECT(context) ||
	    !read_stack_word(w, w->bp + v8->fp_function, &function) || !V8_IS_HEAP_OBJECT(function))
		return;
	slot = (function >> 3) & (V8_WALK_CACHE - 1);
	if (w->v8_functions[slot] == function) {
		shared = w->v8_shared[slot];
	} else {
		if (bpf_probe_read_user(&shared, sizeof(shared),
					(void *)(function - 1 + v8->function_shared)) ||
		    !V8_IS_HEAP_OBJECT(shared) || shared >> V8_FRAME_SHIFT)
			return;
		w->v8_functions[slot] = function;
		w->v8_shared[slot] = shared;
	}
	/* The frame's address (the last written) gives way to its function. */
	idx = w->idx - 1;
	if (idx >= PROFILE_MAX_IPS)
		return;
	c->r->ips[idx] = V8_FRAME_TAG | shared;
	c->r->h.flags |= SAMPLE_V8_FRAMES;
}

#endif
