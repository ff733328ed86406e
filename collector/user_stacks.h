/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * user_stacks.h - each record's user stack finished, and judged.
 *
 * A record's user stack comes unwound by the BPF program (from unwind
 * tables or frame pointers), or as registers and a copy of the top of the
 * stack, unwound here with CFI as perf's --call-graph dwarf does. Either
 * way this judges whether it reaches its process's first frame, counts
 * why the others end where they do and in which file, and warns at the
 * end when many do not.
 *
 * Not thread-safe: the drain thread owns it.
 */
#ifndef PROFILER_USER_STACKS_H
#define PROFILER_USER_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/profile.h"

struct event;
struct procs;
struct runtimes;
struct unwinder;

/*
 * Why a user stack ends before its process's first frame: the BPF
 * unwinder's reasons (enum unwind_stop_reason), and one of user space's.
 */
#define UNWIND_STOP_COPY (UNWIND_STOP_NO_ROOM + 1) /* the end of a stack copy */
#define NR_STACK_ENDS (UNWIND_STOP_COPY + 1)

/* A file in which broken stacks end, and how many. */
struct broken_file {
	const char *name; /* interned */
	uint64_t count;
	/* What would make a process's stacks ending here whole (a runtime's), or NULL. */
	const char *fix;
};

/*
 * How the user stack of a record was judged whole or not, for samples
 * counted with it later to be judged the same (user_stacks__count()).
 */
struct stack_judgement {
	bool judged, whole;
	uint8_t end;		  /* UNWIND_STOP_* when not @whole */
	struct broken_file *file; /* where it ended, when known; valid until user_stacks__free() */
};

struct user_stacks;

/*
 * @unwinder unwinds copies (NULL: frame pointers only, nothing to unwind);
 * @procs gives each process's maps; @runtimes put their frames in what is
 * unwound from a copy, as their BPF units do in what the BPF program
 * unwinds (NULL: none); @tables: the BPF program unwinds from
 * unwind tables, so that copies are only of samples taken before a
 * process's tables were loaded; a copy is unwound to at most @max_frames
 * (at most PROFILE_MAX_USER_STACK). All must outlive it. NULL and errno.
 */
struct user_stacks *user_stacks__new(struct unwinder *unwinder, struct procs *procs,
				     struct runtimes *runtimes, bool tables, uint32_t max_frames);
void user_stacks__free(struct user_stacks *us);

/*
 * Finish @ev's user stack: one the BPF program unwound is judged (and a
 * process's maps looked at again when it went through new code); one that
 * carries a copy is unwound from it; a frame-pointer walk gets the caller
 * its leaf skipped put back.
 */
void user_stacks__complete(struct user_stacks *us, struct event *ev);
/* How the last record given to user_stacks__complete() was judged. */
const struct stack_judgement *user_stacks__judgement(const struct user_stacks *us);
/* Count @n more stacks judged as @j. */
void user_stacks__count(struct user_stacks *us, const struct stack_judgement *j, uint64_t n);
/* Stacks unwound here that stopped short of their first frame: truncated. */
uint64_t user_stacks__truncated(const struct user_stacks *us);

/* -v: how many stacks were unwound here, and how long it took. */
void user_stacks__report_unwound(const struct user_stacks *us);
/*
 * -v: how many stacks are whole, and why the others end; a warning when
 * more than one in ten is not, with the likely cause and the file where
 * most of them end.
 */
void user_stacks__report_ends(const struct user_stacks *us);

#endif
