// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "event.h"
#include "procs.h"
#include "runtime.h"
#include "unwind.h"
#include "user_stacks.h"

struct user_stacks {
	struct unwinder *unwinder; /* NULL with frame pointers only */
	struct procs *procs;
	struct runtimes *runtimes;    /* their frames in stacks unwound here (NULL: none) */
	bool tables;		      /* the BPF program unwinds from tables */
	uint32_t max_frames;	      /* the most frames unwound from a copy */
	uint64_t nr_leaf_repaired;    /* samples given the caller that frame pointers skipped */
	uint64_t nr_unwound;	      /* samples unwound from a copy of the stack, here */
	uint64_t nr_unwind_truncated; /* ... whose unwinding stopped short of the outermost frame */
	uint64_t unwind_ns;	      /* CLOCK_MONOTONIC time spent unwinding them */
	/* User stacks whose unwinding says whether they are whole, and those that are not. */
	uint64_t nr_judged, nr_broken;
	uint64_t nr_broken_by[NR_STACK_ENDS]; /* by UNWIND_STOP_* */
	struct stack_judgement judgement;     /* of the last record */
	/* The last maps a runtime was asked to fix stacks of, and its answer. */
	const struct proc_maps *fix_maps;
	pid_t fix_pid;
	const char *fix;
	struct hashtab broken_files; /* struct broken_file by name: where broken stacks end */
};

struct user_stacks *user_stacks__new(struct unwinder *unwinder, struct procs *procs,
				     struct runtimes *runtimes, bool tables, uint32_t max_frames)
{
	struct user_stacks *us = calloc(1, sizeof(*us));

	if (!us)
		return NULL;
	us->unwinder = unwinder;
	us->procs = procs;
	us->runtimes = runtimes;
	us->tables = tables;
	us->max_frames = max_frames;
	return us;
}

void user_stacks__free(struct user_stacks *us)
{
	struct broken_file *f;
	size_t i;

	if (!us)
		return;
	hashtab__for_each_entry(&us->broken_files, i, f)
		free(f);
	hashtab__release(&us->broken_files);
	free(us);
}

static bool broken_file_eq(const void *entry, const void *key)
{
	return ((const struct broken_file *)entry)->name == key;
}

/* Count @n user stacks judged as @j says. */
void user_stacks__count(struct user_stacks *us, const struct stack_judgement *j, uint64_t n)
{
	if (!j->judged)
		return;
	us->nr_judged += n;
	if (j->whole)
		return;
	us->nr_broken += n;
	us->nr_broken_by[j->end] += n;
	if (j->file)
		j->file->count += n;
}

/* The file @name among those where broken stacks end, added if new; NULL on ENOMEM. */
static struct broken_file *broken_file(struct user_stacks *us, const char *name)
{
	uint64_t hash = hash_mix(0, (uintptr_t)name);
	struct broken_file *f = hashtab__find(&us->broken_files, hash, broken_file_eq, name);

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->name = name;
	if (hashtab__insert(&us->broken_files, hash, f)) {
		free(f);
		return NULL;
	}
	return f;
}

/*
 * Count a user stack that unwinding found whole or not (@end says why not),
 * and, if not, the file its last frame is in, from @maps; the judgement is
 * kept in us->judgement.
 */
static void count_stack_end(struct user_stacks *us, const struct sample_event *e, bool whole,
			    unsigned int end, const struct proc_maps *maps)
{
	const struct thread_stacks *s = &e->stack;
	struct stack_judgement *j = &us->judgement;
	const struct proc_map *map;

	*j = (struct stack_judgement){ .judged = true, .whole = whole, .end = end };
	if (!whole) {
		map = maps && s->nr_user ? proc_maps__find(maps, s->user[s->nr_user - 1]) : NULL;
		j->file = map ? broken_file(us, map->name) : NULL;
		if (j->file && !j->file->fix && us->runtimes) {
			/* Asked once a snapshot: a runtime looks through its maps. */
			if (maps != us->fix_maps || maps->pid != us->fix_pid)
				us->fix = runtimes__fix(us->runtimes, maps);
			us->fix_maps = maps;
			us->fix_pid = maps->pid;
			j->file->fix = us->fix;
		}
	}
	user_stacks__count(us, j, event__count(e));
}

/* Why the user-space unwinder stopped, as the BPF unwinder would say it. */
static unsigned int user_stack_end(enum unwind_stop stop)
{
	switch (stop) {
	case UNWIND_STACK_ENDED:
		return UNWIND_STOP_COPY;
	case UNWIND_MAX_FRAMES:
		return UNWIND_STOP_MAX_FRAMES;
	default:
		return UNWIND_STOP_NO_INFO;
	}
}

/* Is every one of the @n addresses at @ips inside a mapping of @maps? */
static bool all_mapped(const struct proc_maps *maps, const __u64 *ips, size_t n)
{
	/* A runtime's frame (runtimes__frame()) is no address: not looked for. */
	for (size_t i = 0; i < n; i++)
		if (!V8_FRAME_IS(ips[i]) && !proc_maps__find(maps, ips[i]))
			return false;
	return true;
}

/* The stack being unwound from a copy, as the runtimes are asked about its frames. */
struct copied_stack {
	struct runtimes *runtimes;
	pid_t pid;
	uint32_t *flags; /* the record's SAMPLE_* */
};

static uint64_t runtime_frame(void *arg, const struct unwind_input *in, uint64_t bp, uint64_t ip)
{
	struct copied_stack *cs = arg;

	return runtimes__frame(cs->runtimes, cs->pid, in, bp, ip, cs->flags);
}

/*
 * Finish the user stack of sample or interval off CPU @ev (user_stacks.h). One the BPF
 * program unwound from tables is done; one through code mapped since its
 * process's tables were loaded has them loaded again (at most every
 * PROCS_REFRESH_NS). One that carries registers and stack bytes instead is
 * unwound here: without a user stack, from its copy, with CFI, as perf's
 * --call-graph dwarf does, as far as the copy goes; a stack from frame
 * pointers (off CPU, in a process without tables) gets the
 * caller they skip put back: a leaf sampled before it set up its frame
 * pointer, or in a function built without one (a C library system call
 * wrapper, where every thread off CPU is), has its caller's frame pointer
 * still in place, so the kernel's walk goes from the leaf straight to its
 * caller's caller.
 */
void user_stacks__complete(struct user_stacks *us, struct event *ev)
{
	struct sample_event *e = &ev->sample;
	struct thread_stacks *s = &e->stack;
	struct unwind_input in = { (const uint64_t *)e->user_regs, ev->user_stack,
				   ev->user_stack_size };
	const uint64_t ip = e->user_regs[PROFILE_REG_IP];
	const struct proc_maps *maps, *newer;
	struct proc *p;
	enum unwind_stop stop;
	uint64_t ra;
	size_t n;
	int err;

	us->judgement.judged = false;
	if (s->flags & SAMPLE_USER_UNWOUND) {
		bool whole = s->flags & SAMPLE_USER_COMPLETE;

		/* Most stacks are whole and through known code: no process to look up. */
		p = whole && !(s->flags & SAMPLE_USER_STALE) ? NULL : procs__get(us->procs, e->pid);
		if (p && (s->flags & SAMPLE_USER_STALE))
			procs__newer_maps(us->procs, p, p->maps);
		if (s->nr_user)
			count_stack_end(us, e, whole,
					(s->flags & SAMPLE_STOP_MASK) >> SAMPLE_STOP_SHIFT,
					p ? p->maps : NULL);
		return;
	}
	if (!us->unwinder || !(s->flags & SAMPLE_USER_REGS))
		return;
	p = procs__get(us->procs, e->pid);
	if (!p)
		return;
	if (!p->snapshot_time)
		procs__snapshot(us->procs, p);
	maps = p->maps;
	/* No user stack yet: unwind it from the copy, as far as the copy goes. */
	if (!s->nr_user) {
		uint64_t start = clock_ns(CLOCK_MONOTONIC);
		struct copied_stack cs = { us->runtimes, e->pid, &s->flags };
		struct unwind_frame_hook hook = { runtime_frame, &cs };
		const struct unwind_frame_hook *h = us->runtimes ? &hook : NULL;

		n = unwinder__unwind(us->unwinder, maps, &in, h, (uint64_t *)s->user,
				     us->max_frames, &stop);
		/*
		 * A stack that leaves the snapshot's mappings was unwound without
		 * the CFI of code mapped since (the snapshot at exec precedes the
		 * libraries): unwind it again with a newer one.
		 */
		if (maps && !all_mapped(maps, s->user, n) &&
		    (newer = procs__newer_maps(us->procs, p, maps))) {
			maps = newer;
			n = unwinder__unwind(us->unwinder, maps, &in, h, (uint64_t *)s->user,
					     us->max_frames, &stop);
		}
		s->nr_user = n;
		us->nr_unwound++;
		us->unwind_ns += clock_ns(CLOCK_MONOTONIC) - start;
		if (stop != UNWIND_COMPLETE) {
			s->flags |= SAMPLE_USER_TRUNCATED;
			us->nr_unwind_truncated++;
		}
		count_stack_end(us, e, stop == UNWIND_COMPLETE, user_stack_end(stop), maps);
		return;
	}
	if (!maps || !s->nr_user || s->user[0] != ip)
		return;
	err = unwinder__leaf_caller(us->unwinder, maps, &in, &ra);
	if (err == -ENXIO && (newer = procs__newer_maps(us->procs, p, maps)))
		err = unwinder__leaf_caller(us->unwinder, newer, &in, &ra);
	if (err || (s->nr_user > 1 && s->user[1] == ra))
		return;
	/* A full stack loses its outermost frame, and was marked truncated already. */
	n = s->nr_user < PROFILE_MAX_USER_STACK ? s->nr_user : PROFILE_MAX_USER_STACK - 1;
	memmove(&s->user[2], &s->user[1], (n - 1) * sizeof(s->user[0]));
	s->user[1] = ra;
	s->nr_user = n + 1;
	us->nr_leaf_repaired++;
}

const struct stack_judgement *user_stacks__judgement(const struct user_stacks *us)
{
	return &us->judgement;
}

uint64_t user_stacks__truncated(const struct user_stacks *us)
{
	return us->nr_unwind_truncated;
}

#define NO_INFO_CAUSE                                                                              \
	"code without unwind information (built with -fasynchronous-unwind-tables or "             \
	"-fno-omit-frame-pointer, it unwinds)"

static const char *const stack_end_causes[NR_STACK_ENDS] = {
	/* A stack marked truncated for no reason given: as if it had no information. */
	[UNWIND_STOP_NONE] = NO_INFO_CAUSE,
	[UNWIND_STOP_NO_INFO] = NO_INFO_CAUSE,
	[UNWIND_STOP_UNSUPPORTED] = "unwind rules the BPF unwinder cannot follow",
	[UNWIND_STOP_FP] =
		("code without unwind tables whose frame pointers lead nowhere (a JIT, "
		 "or code built without frame pointers: -fno-omit-frame-pointer keeps them)"),
	[UNWIND_STOP_READ] = "stack memory that could not be read",
	[UNWIND_STOP_NEW_CODE] = "code mapped after its process's unwind tables were loaded",
	[UNWIND_STOP_NO_ROOM] = "unwind tables that did not fit (a larger --unwind-memory helps)",
	[UNWIND_STOP_COPY] = "the end of the stack copy (a larger --call-graph dwarf=SIZE helps)",
};

/* What ended stacks for reason @end, in this recording's terms. */
static const char *stack_end_cause(const struct user_stacks *us, unsigned int end)
{
	/* With tables, copies are only of samples taken before their process's were loaded. */
	if (end == UNWIND_STOP_COPY && us->tables)
		return "samples taken while their process's unwind tables were being built, whose "
		       "stack copy was too short";
	if (end == UNWIND_STOP_MAX_FRAMES && us->max_frames < PROFILE_MAX_USER_STACK)
		return "stacks deeper than --max-frames (a larger one, up to 1024, helps)";
	if (end == UNWIND_STOP_MAX_FRAMES)
		return "stacks deeper than 1024 frames, the most a stack holds";
	return stack_end_causes[end];
}

void user_stacks__report_unwound(const struct user_stacks *us)
{
	if (us->nr_unwound)
		pr_info("unwind: %llu user stacks unwound from a copy of the stack in %.1f ms",
			(unsigned long long)us->nr_unwound, us->unwind_ns / 1e6);
	if (us->unwinder && !us->tables && us->nr_leaf_repaired)
		pr_debug("unwind: %llu leaf callers restored from CFI",
			 (unsigned long long)us->nr_leaf_repaired);
}

void user_stacks__report_ends(const struct user_stacks *us)
{
	const struct broken_file *f, *top = NULL;
	size_t i, cause = 0;
	const char *why;

	if (!us->nr_judged)
		return;
	pr_info("unwind: %llu of %llu user stacks reach their process's first frame",
		(unsigned long long)(us->nr_judged - us->nr_broken),
		(unsigned long long)us->nr_judged);
	for (i = 0; i < NR_STACK_ENDS; i++)
		if (us->nr_broken_by[i])
			pr_info("unwind: %llu end at %s", (unsigned long long)us->nr_broken_by[i],
				stack_end_cause(us, i));
	if (us->nr_broken * 10 < us->nr_judged)
		return;
	for (i = 1; i < NR_STACK_ENDS; i++)
		if (us->nr_broken_by[i] > us->nr_broken_by[cause])
			cause = i;
	hashtab__for_each_entry(&us->broken_files, i, f)
		if (!top || f->count > top->count ||
		    (f->count == top->count && strcmp(f->name, top->name) < 0))
			top = f;
	why = stack_end_cause(us, cause);
	if (top)
		pr_warn("warning: %.0f%% of user stacks end before their process's first frame, "
			"most often (%.0f%%) in '%s'; the likely cause: %s%s%s",
			100.0 * us->nr_broken / us->nr_judged, 100.0 * top->count / us->nr_broken,
			top->name, why, top->fix ? "; for whole stacks, " : "",
			top->fix ? top->fix : "");
	else
		pr_warn("warning: %.0f%% of user stacks end before their process's first frame; "
			"the likely cause: %s",
			100.0 * us->nr_broken / us->nr_judged, why);
}
