/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * native_unwind.bpf.h - a user stack of native code: unwound here from
 * the unwind tables user space builds from each mapped file's call frame
 * information (see unwind_row in profile.h), so that records carry
 * addresses only; or, until a process's tables are loaded, its registers
 * and a copy of the top of its stack, which user space unwinds.
 *
 * Owns the tables (`unwind_rows`, `unwind_rules`, `unwind_procs`), the
 * walk's state (`walks`) and the tunables that choose how user stacks are
 * read (`user_fp_stack`, `unwind_tables`, `stack_copy_bytes`). Gives
 * stacks.bpf.h find_proc(), unwind_user() and record_user(). Needs
 * common.bpf.h's stats.
 */
#ifndef PROFILER_BPF_NATIVE_UNWIND_BPF_H
#define PROFILER_BPF_NATIVE_UNWIND_BPF_H

#include "bpf/common.bpf.h"

/* Walk the user stack's frame pointers: not when user space unwinds it from CFI. */
const volatile bool user_fp_stack = true;
/* Unwind user stacks from the unwind tables, for processes that have them. */
const volatile bool unwind_tables;
/* The most frames a walk writes (--max-frames): at most PROFILE_MAX_USER_STACK. */
const volatile __u32 max_user_frames = PROFILE_MAX_USER_STACK;
/* The unit in which the user stack is copied: what is or is not present. */
#define PAGE_BYTES 4096
/* The most bytes of user stack a walk reads at once (a power of two, at most PAGE_BYTES). */
#define STACK_WINDOW 512
/* How far below the word asked for a window starts: a frame's saved rbp is below its return address. */
#define STACK_WINDOW_BEHIND 64
/*
 * Bytes of user stack a sample copies, after its record; 0: none. With
 * unwind tables, only samples of processes whose tables are not loaded.
 */
const volatile __u32 stack_copy_bytes = PROFILE_LEAF_STACK_BYTES;

/* JSFunctions whose SharedFunctionInfo a walk keeps (v8.bpf.h): a power of two. */
#define V8_WALK_CACHE 8

/* record_user(): the registers and stack go to the fixed fields. */
#define NOT_COMPACT (PROFILE_MAX_IPS + 1)

/*
 * Where the ucontext a signal handler returns to (at the stack pointer, in
 * the signal trampoline) keeps the interrupted rbp, rsp and rip: the offsets
 * of uc_mcontext.gregs[REG_RBP], [REG_RSP] and [REG_RIP] in x86-64's ucontext_t.
 */
#define UCONTEXT_RBP 120
#define UCONTEXT_RSP 160
#define UCONTEXT_RIP 168

/*
 * One walk up a user stack, from the registers of its innermost frame.
 * Kept in a per-CPU map, not on the BPF stack: values read from a map are
 * unknown to the verifier, so it checks one step of the walk for all of
 * them, where values on the stack it would follow frame by frame, with
 * every path through the step, far past its limit.
 */
struct unwind_walk {
	/*
	 * A window of the user stack read at once, [win_base, win_base +
	 * win_len): the words a walk reads are near each other and go up the
	 * stack, and one read of a few hundred bytes costs little more than
	 * one of 8 (bench/deep-frames).
	 */
	__u64 win_base;
	__u32 win_len;
	__u8 win[STACK_WINDOW + 8]; /* 8 more: a word read at any offset below STACK_WINDOW fits */
	__u64 ip, sp, bp;
	__u32 idx, nr; /* next slot of the record's addresses, and frames written */
	__u32 flags;   /* SAMPLE_USER_* found on the way */
	bool bp_known; /* @bp is the frame's rbp, not a register lost on the way */
	bool exact;    /* @ip is where the frame stopped (the leaf, or interrupted by a signal) */
	/*
	 * v8.bpf.h's, for this walk: the SharedFunctionInfo of the last
	 * JSFunctions met, by the function's address (direct-mapped), so that
	 * a recursion reads its function once. Nothing moves them while the
	 * sampled thread is stopped in the sample.
	 */
	__u64 v8_functions[V8_WALK_CACHE], v8_shared[V8_WALK_CACHE];
};

/* What each step of a walk works on: the process's tables and the record. */
struct unwind_ctx {
	const struct unwind_proc *proc;
	struct sample_record *r;
	const struct v8_proc *v8; /* the process runs V8: its frames are looked at (v8.bpf.h) */
};

/* v8.bpf.h's, for the walk to call. */
static __always_inline const struct v8_proc *v8_proc(__u32 tgid);
static __always_inline void v8_frame(struct unwind_walk *w, const struct unwind_ctx *c);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_walk);
} walks SEC(".maps");

/* The unwind tables: see profile.h. Sized by user space before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE); /* user space writes the rows in place */
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFILE_MAX_UNWIND_RULES);
	__type(key, __u32);
	__type(value, struct unwind_rule);
} unwind_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_UNWIND_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

/* The mapping of @proc that holds @addr, or NULL. */
static __always_inline const struct unwind_mapping *find_mapping(const struct unwind_proc *proc,
								 __u64 addr)
{
	__u32 lo = 0, hi = proc->nr;

	if (hi > PROFILE_MAX_UNWIND_MAPPINGS)
		hi = PROFILE_MAX_UNWIND_MAPPINGS;
	/* log2(PROFILE_MAX_UNWIND_MAPPINGS) + 1 halvings find anything. */
	for (int i = 0; i < 9 && lo < hi; i++) {
		__u32 mid = (lo + hi) / 2;
		const struct unwind_mapping *m =
			&proc->mappings[mid & (PROFILE_MAX_UNWIND_MAPPINGS - 1)];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/* The rule of the row of @m's table that covers file address @pc, or NULL. */
static __always_inline const struct unwind_rule *find_rule(const struct unwind_mapping *m, __u64 pc)
{
	__u32 first = m->first_row, lo = first, hi = first + m->nr_rows, key, page;
	const struct unwind_row *row;

	if (pc >= (1ULL << 32))
		return NULL;
	/* Only the rows of @pc's page (see UNWIND_PAGE_SHIFT); below the first, it wraps. */
	page = (__u32)(pc >> UNWIND_PAGE_SHIFT) - m->page_base;
	if (page < m->nr_pages) {
		key = hi + page;
		row = bpf_map_lookup_elem(&unwind_rows, &key);
		if (!row)
			return NULL;
		lo = first + row->pc;
		key++;
		row = bpf_map_lookup_elem(&unwind_rows, &key);
		if (!row)
			return NULL;
		hi = first + row->pc + 1;
	}
	/* The last row at or below @pc: 25 halvings cover the largest table. */
	for (int i = 0; i < 25 && lo < hi; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		row = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!row)
			return NULL;
		if (row->pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first)
		return NULL;
	key = lo - 1;
	row = bpf_map_lookup_elem(&unwind_rows, &key);
	if (!row)
		return NULL;
	key = row->rule;
	return bpf_map_lookup_elem(&unwind_rules, &key);
}

static __always_inline bool read_word(__u64 addr, __u64 *val)
{
	return !bpf_probe_read_user(val, sizeof(*val), (const void *)addr);
}

/*
 * The word of user stack at @addr, through @w's window: read again, from a
 * little below @addr up to at most STACK_WINDOW bytes and never past
 * @addr's page (the next one may not be mapped: the top of the stack),
 * when it does not hold the word.
 */
static __always_inline bool read_stack_word(struct unwind_walk *w, __u64 addr, __u64 *val)
{
	__u64 off = addr - w->win_base, back, base;
	__u32 len;

	if (addr < w->win_base || off + sizeof(*val) > w->win_len) {
		back = addr & (PAGE_BYTES - 1);
		if (back > STACK_WINDOW_BEHIND)
			back = STACK_WINDOW_BEHIND;
		base = addr - back;
		len = PAGE_BYTES - (base & (PAGE_BYTES - 1));
		if (len > STACK_WINDOW)
			len = STACK_WINDOW;
		/* A word across pages, or a window that could not be read: the word alone. */
		if (back + sizeof(*val) > len ||
		    bpf_probe_read_user(w->win, len, (const void *)base)) {
			w->win_len = 0;
			return read_word(addr, val);
		}
		w->win_base = base;
		w->win_len = len;
		off = back;
	}
	__builtin_memcpy(val, &w->win[off & (STACK_WINDOW - 1)], sizeof(*val));
	return true;
}

/* End @w's walk short: 1, bpf_loop()'s stop. */
static __always_inline long stop_truncated(struct unwind_walk *w, __u32 reason)
{
	w->flags |= SAMPLE_USER_TRUNCATED | (reason << SAMPLE_STOP_SHIFT);
	return 1;
}

/*
 * One frame up through the frame-pointer chain, for code without a table:
 * 0, or 1 to stop. A zero rbp does not end the stack as whole: code
 * without a table (a JIT's) need not keep a frame pointer at all, and a
 * HotSpot JVM's compiled code often runs with rbp 0. Outermost frames
 * that the psABI marks so (_start, a thread's start) have tables, and so
 * do Go's (runtime.goexit, mstart: UNWIND_CFA_END rows). The caller's
 * frame is above this one, unless @other_stack: code that switched stacks.
 */
static __always_inline long step_frame_pointer(struct unwind_walk *w, bool other_stack)
{
	__u64 next_bp, ra;

	if (!w->bp_known || (w->bp < w->sp && !other_stack) ||
	    !read_stack_word(w, w->bp, &next_bp) || !read_stack_word(w, w->bp + 8, &ra))
		return stop_truncated(w, UNWIND_STOP_FP);
	w->sp = w->bp + 16;
	w->bp = next_bp;
	w->ip = ra;
	w->exact = false;
	return 0;
}

/* Out of a signal handler's trampoline, to the frame the signal interrupted. */
static __always_inline long step_signal(struct unwind_walk *w)
{
	__u64 sp = w->sp;

	if (!read_word(sp + UCONTEXT_RBP, &w->bp) || !read_word(sp + UCONTEXT_RSP, &w->sp) ||
	    !read_word(sp + UCONTEXT_RIP, &w->ip))
		return stop_truncated(w, UNWIND_STOP_READ);
	w->bp_known = true;
	w->exact = true;
	return 0;
}

/*
 * Code without CFI (a JIT's, V8's builtins, Go's gaps): the frame may be a
 * runtime's (v8.bpf.h) before its caller is found by its frame pointer.
 */
static __always_inline long step_no_cfi(struct unwind_walk *w, const struct unwind_ctx *c)
{
	if (c->v8)
		v8_frame(w, c);
	return step_frame_pointer(w, false);
}

/*
 * bpf_loop() callback: write the frame @w is at, then step to its caller.
 * 0 to go on, 1 to stop, with SAMPLE_USER_COMPLETE when the stack is whole
 * and SAMPLE_USER_TRUNCATED when it is not.
 */
static long unwind_step(__u32 i, void *ctx)
{
	struct unwind_ctx *c = ctx;
	const struct unwind_mapping *m;
	const struct unwind_rule *r;
	struct unwind_walk *w;
	__u64 pc, cfa, ra, bp = 0;
	__u32 idx, zero = 0;

	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w)
		return 1;
	if (!w->ip) {
		w->flags |= SAMPLE_USER_COMPLETE;
		return 1;
	}
	idx = w->idx;
	if (idx >= PROFILE_MAX_IPS)
		return stop_truncated(w, UNWIND_STOP_MAX_FRAMES);
	c->r->ips[idx] = w->ip;
	w->idx = idx + 1;
	w->nr++;
	/* A return address is after the call, which may be the function's last instruction. */
	pc = w->exact ? w->ip : w->ip - 1;
	m = find_mapping(c->proc, pc);
	if (!m) {
		/* Code mapped since the tables were loaded: user space reads them again. */
		w->flags |= SAMPLE_USER_STALE;
		return stop_truncated(w, UNWIND_STOP_NEW_CODE);
	}
	if (m->nr_rows == UNWIND_MAPPING_FP)
		return step_no_cfi(w, c);
	r = find_rule(m, pc - m->bias);
	if (!r)
		return stop_truncated(w, UNWIND_STOP_NO_INFO);
	switch (r->cfa) {
	case UNWIND_CFA_SP:
		cfa = w->sp + r->cfa_off;
		break;
	case UNWIND_CFA_BP:
		if (!w->bp_known)
			return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
		cfa = w->bp + r->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + r->cfa_off + ((w->ip & 15) >= (__u64)r->bp_off ? 8 : 0);
		break;
	case UNWIND_CFA_DEREF_BP:
		if (!w->bp_known || !read_stack_word(w, w->bp + r->cfa_off, &cfa))
			return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
		break;
	case UNWIND_CFA_SIGNAL:
		return step_signal(w);
	case UNWIND_CFA_END:
		w->flags |= SAMPLE_USER_COMPLETE;
		return 1;
	case UNWIND_CFA_NONE:
		return stop_truncated(w, UNWIND_STOP_NO_INFO);
	case UNWIND_CFA_NO_ROOM:
		return stop_truncated(w, UNWIND_STOP_NO_ROOM);
	case UNWIND_CFA_FP:
		return step_no_cfi(w, c);
	case UNWIND_CFA_FP_SWITCH:
		return step_frame_pointer(w, true);
	default:
		return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
	}
	/* The caller's frame is above this one's: anything else is a loop or garbage. */
	if (cfa <= w->sp)
		return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
	if (!read_stack_word(w, cfa - 8, &ra))
		return stop_truncated(w, UNWIND_STOP_READ);
	switch (r->bp) {
	case UNWIND_BP_SAME:
		break;
	case UNWIND_BP_AT_CFA:
		w->bp_known = read_stack_word(w, cfa + r->bp_off, &bp);
		w->bp = bp;
		break;
	case UNWIND_BP_AT_BP:
		w->bp_known = w->bp_known && read_stack_word(w, w->bp + r->bp_off, &bp);
		w->bp = bp;
		break;
	default:
		w->bp_known = false;
	}
	w->sp = cfa;
	w->ip = ra;
	w->exact = false;
	return 0;
}

/*
 * Unwind the current task's user stack from @proc's tables into @r's
 * addresses from @idx on, at most max_user_frames. Returns the
 * frames written; @r's flags get SAMPLE_USER_* bits.
 */
static __always_inline __u32 unwind_user(const struct unwind_proc *proc, struct sample_record *r,
					 __u32 idx)
{
	struct unwind_ctx c = { .proc = proc, .r = r, .v8 = v8_proc(r->h.pid) };
	__u32 zero = 0;
	struct unwind_walk *w = bpf_map_lookup_elem(&walks, &zero);
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
#endif

	if (!w)
		return 0;
	r->h.flags |= SAMPLE_USER_UNWOUND;
#if defined(__TARGET_ARCH_x86)
	if (!task->mm) /* a kernel thread: no user state */
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	w->ip = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
	w->idx = idx;
	w->nr = 0;
	w->win_len = 0;
	w->flags = 0;
	w->bp_known = true;
	w->exact = true;
	if (c.v8)
		__builtin_memset(w->v8_functions, 0, sizeof(w->v8_functions));
	bpf_loop(max_user_frames, unwind_step, &c, 0);
	if (!(w->flags & (SAMPLE_USER_COMPLETE | SAMPLE_USER_TRUNCATED)))
		stop_truncated(w, UNWIND_STOP_MAX_FRAMES);
	r->h.flags |= w->flags;
	return w->nr;
#else
	return 0;
#endif
}

/*
 * The user registers and the top @n bytes of the user stack, into @r
 * (flagging it), for unwinding in user space: after its first @compact_at
 * addresses, or in its fixed fields with NOT_COMPACT. They come from the task's
 * saved user registers, not the program's context: a sample that hit in
 * the kernel has kernel registers there, and a thread leaving the CPU is
 * always in the kernel.
 */
static __always_inline void record_user(struct sample_record *r, __u32 n, __u32 compact_at)
{
	r->h.user_stack_size = 0;
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	/* Compact: right after the addresses used, in a buffer with room for it (copies). */
	__u64 *uregs = compact_at <= PROFILE_MAX_IPS ? &r->ips[compact_at] : r->user_regs;
	__u8 *stack = (__u8 *)(uregs + PROFILE_NR_REGS);
	struct pt_regs *regs;
	__u64 sp;

	if (!task->mm) /* a kernel thread: no user state */
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	uregs[0] = regs->ax;
	uregs[1] = regs->dx;
	uregs[2] = regs->cx;
	uregs[3] = regs->bx;
	uregs[4] = regs->si;
	uregs[5] = regs->di;
	uregs[6] = regs->bp;
	uregs[7] = regs->sp;
	uregs[8] = regs->r8;
	uregs[9] = regs->r9;
	uregs[10] = regs->r10;
	uregs[11] = regs->r11;
	uregs[12] = regs->r12;
	uregs[13] = regs->r13;
	uregs[14] = regs->r14;
	uregs[15] = regs->r15;
	uregs[16] = regs->ip;
	r->h.flags |= SAMPLE_USER_REGS;
	sp = uregs[PROFILE_REG_SP];
	/*
	 * A read that meets a page that is not present fails whole: the top of
	 * the stack, or, in the main thread, the random gap the kernel leaves
	 * below the environment strings, which nothing may have touched. Read
	 * a page's worth at a time and, when one fails, the part of it before
	 * the next page boundary: every frame below that page is kept.
	 */
	for (__u32 off = 0; off < PROFILE_MAX_STACK_COPY; off += PAGE_BYTES) {
		__u32 len = n - off < PAGE_BYTES ? n - off : PAGE_BYTES, part;

		if (off >= n)
			break;
		if (!bpf_probe_read_user(stack + off, len, (void *)(sp + off))) {
			r->h.user_stack_size = off + len;
			continue;
		}
		part = PAGE_BYTES - (sp & (PAGE_BYTES - 1));
		if (part < len && !bpf_probe_read_user(stack + off, part, (void *)(sp + off)))
			r->h.user_stack_size = off + part;
		break;
	}
#endif
}

/* The unwind tables of process @tgid, or NULL when it has none (yet). */
static __always_inline const struct unwind_proc *find_proc(__u32 tgid)
{
	const struct unwind_proc *proc;

	if (!unwind_tables)
		return NULL;
	proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	if (!proc)
		stat_inc(STAT_NO_TABLES);
	return proc;
}

#endif
