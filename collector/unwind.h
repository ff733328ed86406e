/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unwind.h - user stacks from call frame information over a copy of the stack.
 *
 * The BPF program records a sample's user registers and the top of its user
 * stack (bpf/profile.h). At drain time the unwinder walks that copy with the
 * CFI of the code at each return address (.eh_frame, else .debug_frame, read
 * by libdw), the way a debugger or perf's --call-graph dwarf does, and falls
 * back to the frame-pointer chain where a function has no CFI. It never
 * reads outside the copy: a frame whose return address lies above it ends
 * the walk, and the stack is reported as truncated.
 *
 * The unwinder caches, per build-id (per file for files without one), the
 * ELF handle, the CFI and the load segments, so the same library mapped by
 * many processes, or from several containers' copies, is read once. The
 * files are those of the collector's file table, whose descriptors must
 * outlive the unwinder. Not thread-safe.
 */
#ifndef PROFILER_UNWIND_H
#define PROFILER_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_cache;
struct elf_file;
struct proc_map;
struct proc_maps;
struct unwinder;

/* One sample's user state, as the BPF program recorded it. */
struct unwind_input {
	const uint64_t *regs; /* PROFILE_NR_REGS registers by DWARF number */
	const unsigned char *stack;
	size_t stack_size; /* bytes copied from regs[PROFILE_REG_SP] up */
};

/* The 8-byte word at @addr of @in's stack copy into *@val: false when the copy does not hold it. */
bool unwind_input__read(const struct unwind_input *in, uint64_t addr, uint64_t *val);

/*
 * What stands in the stack for a frame the walk leaves by its frame
 * pointer @bp (code without CFI, where a runtime's generated code is):
 * @frame returns the frame's address @ip, or a runtime's frame read from
 * the frame's slots in @in (a JavaScript function's, as bpf/v8.bpf.h puts
 * it in stacks the BPF program unwinds).
 */
struct unwind_frame_hook {
	uint64_t (*frame)(void *arg, const struct unwind_input *in, uint64_t bp, uint64_t ip);
	void *arg;
};

/* Where an unwind stopped. */
enum unwind_stop {
	UNWIND_COMPLETE,    /* at the outermost frame: the stack is whole */
	UNWIND_STACK_ENDED, /* at a frame above the copied stack */
	UNWIND_NO_FRAME,    /* where neither CFI nor a frame pointer led on */
	UNWIND_MAX_FRAMES,  /* after as many frames as asked for */
};

/*
 * An unwinder reading the mapped files through @elves, which must outlive
 * it (NULL: a cache of its own). Returns NULL and sets errno.
 */
struct unwinder *unwinder__new(struct elf_cache *elves);
void unwinder__free(struct unwinder *u);

/*
 * The return address of a leaf function sampled before it set up its frame
 * pointer (or after it dropped it), which frame-pointer unwinding skips:
 * when the CFI at @in's instruction pointer computes the frame from the stack
 * pointer rather than the frame pointer, and the return address is inside
 * the copied stack and points into a mapping of @maps. 0 with *@ra set,
 * -ENXIO when the return address is in none of @maps' mappings (a newer
 * snapshot may have it), or -ENOENT when the leaf has its frame, or nothing
 * can be said.
 */
int unwinder__leaf_caller(struct unwinder *u, const struct proc_maps *maps,
			  const struct unwind_input *in, uint64_t *ra);

/*
 * Unwind @in into at most @max addresses at @ips, leaf first: the
 * instruction pointer, then each caller's return address. Returns the
 * number of addresses, at least 1 when @max is; *@stop says why the walk
 * ended: anything but UNWIND_COMPLETE means the stack is truncated. CFI
 * that computes no progress up the stack (a loop) ends it as
 * UNWIND_NO_FRAME. @maps may be NULL: every frame is then code without CFI.
 * @hook, if not NULL, is asked about each frame left by its frame pointer.
 */
size_t unwinder__unwind(struct unwinder *u, const struct proc_maps *maps,
			const struct unwind_input *in, const struct unwind_frame_hook *hook,
			uint64_t *ips, size_t max, enum unwind_stop *stop);

/*
 * The ELF file (one per build-id: the same for every mapping of the same
 * file, in any process) or vDSO mapped at @map, when it has call frame
 * information, with *@bias set so that an address of @map minus @bias is
 * the file's address. NULL otherwise. The file lives as long as the
 * unwinder's ELF cache; its identity keys what is built from it.
 */
struct elf_file *unwinder__table_file(struct unwinder *u, const struct proc_map *map,
				      uint64_t *bias);

#endif
