// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/stacks: a stack table of kernel and user addresses
 * through a real symbolizer into a profile. Kernel frames come from a
 * synthetic kallsyms file; user frames from the symbols-pie fixture,
 * running, through a snapshot of its maps, as the profiler sees a target.
 *
 * Each rule of stacks.h has addresses that tell it apart: a return address
 * that is the first byte of the next function (looked up as is, it names
 * the wrong function), BPF frames at the top of a stack on and off CPU, a
 * stack past --max-stacks, timestamps before and after the start.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc_maps.h"
#include "common/stack_table.h"
#include "common/profile.h"
#include "common/strset.h"
#include "symbolize/stacks.h"
#include "symbolize/symbolizer.h"
#include "fixture_child.h"
#include "test.h"

#define KSYM(off) (0xffffffff81000000ULL + (off))

/*
 * schedule starts where __schedule ends: a return address of __schedule's
 * last call is schedule's first byte.
 */
static const char kallsyms_text[] = "ffffffff81000000 T _stext\n"
				    "ffffffff81001000 t bpf_trace_run2\n"
				    "ffffffff81001100 T __traceiter_sched_switch\n"
				    "ffffffff81001200 t __schedule\n"
				    "ffffffff81001300 T schedule\n"
				    "ffffffff81001400 T do_nanosleep\n"
				    "ffffffff81002000 T _etext\n";

/* Times are CLOCK_MONOTONIC; the profile's start is here. */
#define START_MONO 1000000

struct env {
	char kallsyms[32];
	struct fixture_child fx;
	uint64_t unsized, after, beta, main; /* where the fixture's functions are */
	struct profile *p;
	struct file_table *files;
	struct proc_maps *maps;
	struct symbolizer *sym;
	struct stack_table t;
	struct pseudo_frame overflow;
	const char *comm;
};

static int write_kallsyms(char *path)
{
	ssize_t len = strlen(kallsyms_text);
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	if (write(fd, kallsyms_text, len) != len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Where the fixture's function @name is loaded; 0 when it did not say. */
static uint64_t fixture_addr(const struct fixture_child *c, const char *name)
{
	const struct fixture_sym *s = fixture_child__sym(c, name);

	return s ? s->addr : 0;
}

/* Everything but the stacks; 0 or -1 with what failed reported. */
static int env_init(struct env *e)
{
	struct symbolizer_opts opts = { .kallsyms_path = e->kallsyms };
	char path[PATH_MAX];

	memset(e, 0, sizeof(*e));
	e->fx.in_fd = -1;
	strcpy(e->kallsyms, "/tmp/profiler-kallsyms-XXXXXX");
	stack_table__init(&e->t);
	if (write_kallsyms(e->kallsyms)) {
		e->kallsyms[0] = '\0';
		test__fail(__FILE__, __LINE__, "cannot write kallsyms: %s", strerror(errno));
		return -1;
	}
	if (!realpath(test__fixture("symbols-pie"), path) || fixture_child__start(path, &e->fx) ||
	    !(e->unsized = fixture_addr(&e->fx, "fixture_unsized")) ||
	    !(e->after = fixture_addr(&e->fx, "fixture_after")) ||
	    !(e->beta = fixture_addr(&e->fx, "fixture_beta")) ||
	    !(e->main = fixture_addr(&e->fx, "main"))) {
		test__fail(__FILE__, __LINE__, "cannot start symbols-pie");
		return -1;
	}
	e->p = profile__new(99);
	if (e->p)
		e->files = file_table__new(e->p->strings);
	if (e->files)
		e->maps = proc_maps__read(e->fx.pid, e->files);
	if (e->maps && !pseudo_frame__init(&e->overflow, e->p->strings, OVERFLOW_FRAME_NAME))
		e->sym = symbolizer__new(e->p->strings, &opts);
	if (e->sym)
		e->comm = strset__add(e->p->strings, "worker");
	if (!e->comm) {
		test__fail(__FILE__, __LINE__, "cannot set up: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void env_release(struct env *e)
{
	profile__free(e->p);
	symbolizer__free(e->sym);
	stack_table__release(&e->t);
	proc_maps__free(e->maps);
	file_table__free(e->files);
	fixture_child__stop(&e->fx);
	if (e->kallsyms[0])
		unlink(e->kallsyms);
}

/*
 * Count a stack of thread @tid (leaf first, kernel then user addresses
 * up to a 0), at @time. Returns its entry, with the fixture's maps.
 */
static struct stack_entry *add(struct env *e, uint32_t tid, bool offcpu, uint64_t time,
			       const uint64_t *kernel, const uint64_t *user)
{
	struct stack_sample ev = {
		.offcpu = offcpu,
		.pid = e->fx.pid,
		.tid = tid,
		.time_ns = time,
		.weight_ns = offcpu ? 500 : 0,
		.count = 1,
		.kernel = kernel,
		.user = user,
	};
	struct stack_entry *s;
	bool is_new;

	while (kernel && kernel[ev.nr_kernel])
		ev.nr_kernel++;
	while (user && user[ev.nr_user])
		ev.nr_user++;
	s = stack_table__add(&e->t, &ev, e->comm, e->comm, &is_new);
	if (s && is_new)
		s->maps = e->maps;
	return s;
}

static const struct profile_sample *sample_of(const struct profile *p, uint32_t tid)
{
	for (size_t i = 0; i < p->nr_samples; i++)
		if (p->samples[i].tid == tid)
			return &p->samples[i];
	return NULL;
}

/* Are @s's frames, leaf first, the functions @names (NULL-terminated)? */
static void check_names(const struct profile_sample *s, const char *const *names)
{
	uint32_t n = 0;

	CHECK(s);
	for (; names[n]; n++) {
		CHECK(n < s->nr_frames);
		CHECK_STR(profile_frame__func(s->frames[n])->name, names[n]);
	}
	CHECK_U64(s->nr_frames, n);
}

/* Run @e's table through stacks__symbolize(); 0 or its error. */
static int symbolize(struct env *e)
{
	struct stacks_opts opts = { .start_mono = START_MONO, .overflow = &e->overflow };

	return stacks__symbolize(e->p, e->sym, &e->t, &opts);
}

/*
 * Below the leaf, a return address that starts the next function names the
 * caller (the byte before it); the leaf itself is not moved. The kernel's
 * schedule and the fixture's fixture_after start right after
 * __schedule and fixture_unsized end.
 */
static void check_minus_one(struct env *e)
{
	const uint64_t kernel[] = { KSYM(0x1300), KSYM(0x1300), KSYM(0x1410), 0 };
	const uint64_t user[] = { e->after, e->after, e->main + 1, 0 };
	const struct profile_sample *s;
	struct stack_entry *entry;

	CHECK((entry = add(e, 1, false, START_MONO, kernel, user)));
	/* The collector gives an entry its process's command line. */
	entry->cmdline = strset__add(e->p->strings, "symbols-pie --wait");
	CHECK(symbolize(e) == 0);
	s = sample_of(e->p, 1);
	CHECK(s);
	CHECK_STR(s->cmdline, "symbols-pie --wait");
	check_names(s, (const char *const[]){ "schedule", "__schedule", "do_nanosleep",
					      "fixture_after", "fixture_unsized", "main", NULL });
	/* A frame's address is the one looked up. */
	CHECK_U64(s->frames[1]->address, KSYM(0x1300) - 1);
	CHECK_U64(s->frames[4]->address, e->after - 1);
}

TEST(stacks_return_address_minus_one)
{
	struct env e;

	if (!env_init(&e))
		check_minus_one(&e);
	env_release(&e);
}

/*
 * Off CPU, the BPF frames that start the kernel stack go (and the frame
 * below them is still a return address); on CPU they stay, and off CPU a
 * BPF frame below the top stays too.
 */
static void check_bpf_skip(struct env *e)
{
	const uint64_t kernel[] = { KSYM(0x1010), KSYM(0x1110), KSYM(0x1300), KSYM(0x1410), 0 };
	const uint64_t lower[] = { KSYM(0x1410), KSYM(0x1011), 0 };
	const uint64_t user[] = { e->beta + 1, 0 };

	CHECK(add(e, 1, true, START_MONO, kernel, user));
	CHECK(add(e, 2, false, START_MONO, kernel, user));
	CHECK(add(e, 3, true, START_MONO, lower, NULL));
	CHECK(symbolize(e) == 0);
	check_names(sample_of(e->p, 1),
		    (const char *const[]){ "__schedule", "do_nanosleep", "fixture_beta", NULL });
	check_names(sample_of(e->p, 2),
		    (const char *const[]){ "bpf_trace_run2", "__traceiter_sched_switch",
					   "__schedule", "do_nanosleep", "fixture_beta", NULL });
	check_names(sample_of(e->p, 3),
		    (const char *const[]){ "do_nanosleep", "bpf_trace_run2", NULL });
	CHECK(sample_of(e->p, 1)->offcpu);
	CHECK_U64(sample_of(e->p, 1)->offcpu_ns, 500);
	CHECK(!sample_of(e->p, 2)->offcpu);
}

TEST(stacks_offcpu_skips_bpf_frames)
{
	struct env e;

	if (!env_init(&e))
		check_bpf_skip(&e);
	env_release(&e);
}

/* A stack first seen after the table is full counts as one "[stack table full]" frame. */
static void check_overflow(struct env *e)
{
	const uint64_t a[] = { KSYM(0x1410), 0 }, b[] = { KSYM(0x1310), 0 };
	const struct profile_sample *s = NULL;

	e->t.max_stacks = 1;
	CHECK(add(e, 1, false, START_MONO, a, NULL));
	CHECK(add(e, 1, false, START_MONO, b, NULL));
	CHECK(add(e, 1, false, START_MONO, b, NULL));
	CHECK_U64(e->t.overflowed, 2);
	CHECK(symbolize(e) == 0);
	CHECK_U64(e->p->nr_samples, 2);
	for (size_t i = 0; i < e->p->nr_samples; i++)
		if (e->p->samples[i].count == 2)
			s = &e->p->samples[i];
	CHECK(s);
	CHECK_U64(s->nr_frames, 1);
	CHECK(s->frames[0] == &e->overflow.frame);
	CHECK_STR(profile_frame__func(s->frames[0])->name, "[stack table full]");
	CHECK(s->frames[0]->source == FRAME_NO_MAPPING);
	CHECK(!s->frames[0]->mapping);
}

TEST(stacks_overflow_frame)
{
	struct env e;

	if (!env_init(&e))
		check_overflow(&e);
	env_release(&e);
}

/* Without an overflow frame to give them, overflow buckets are an error, not a crash. */
static void check_overflow_needs_frame(struct env *e)
{
	const uint64_t a[] = { KSYM(0x1410), 0 }, b[] = { KSYM(0x1310), 0 };
	struct stacks_opts opts = { 0 };

	e->t.max_stacks = 1;
	CHECK(add(e, 1, false, START_MONO, a, NULL));
	CHECK(add(e, 1, false, START_MONO, b, NULL));
	CHECK(stacks__symbolize(e->p, e->sym, &e->t, &opts) == -EINVAL);
}

TEST(stacks_overflow_needs_frame)
{
	struct env e;

	if (!env_init(&e))
		check_overflow_needs_frame(&e);
	env_release(&e);
}

/* Times are ns since the start; one from before it is 0. */
static void check_times(struct env *e)
{
	const uint64_t a[] = { KSYM(0x1410), 0 };
	const struct profile_sample *s;

	CHECK(add(e, 1, false, START_MONO + 5, a, NULL));
	CHECK(add(e, 1, false, START_MONO - 3, a, NULL));
	CHECK(add(e, 1, false, START_MONO + 7000, a, NULL));
	CHECK(symbolize(e) == 0);
	s = sample_of(e->p, 1);
	CHECK(s);
	CHECK_U64(s->count, 3);
	CHECK(s->times);
	CHECK_U64(s->times[0], 5);
	CHECK_U64(s->times[1], 0);
	CHECK_U64(s->times[2], 7000);
}

TEST(stacks_times_since_start)
{
	struct env e;

	if (!env_init(&e))
		check_times(&e);
	env_release(&e);
}

/* A stop flag set (by a signal during symbolization) ends the run with -EINTR. */
static void check_stop(struct env *e)
{
	const uint64_t a[] = { KSYM(0x1410), 0 };
	volatile sig_atomic_t stop = 1;
	struct stacks_opts opts = { .stop = &stop };

	CHECK(add(e, 1, false, START_MONO, a, NULL));
	CHECK(stacks__symbolize(e->p, e->sym, &e->t, &opts) == -EINTR);
	CHECK_U64(e->p->nr_samples, 0);
	stop = 0;
	CHECK(stacks__symbolize(e->p, e->sym, &e->t, &opts) == 0);
	CHECK_U64(e->p->nr_samples, 1);
}

TEST(stacks_stop)
{
	struct env e;

	if (!env_init(&e))
		check_stop(&e);
	env_release(&e);
}

/* Measured CPU time of thread 1: 1,000,003 ns; of thread 2: 40 ns; thread 3 unknown. */
static bool fake_thread_cpu(void *arg, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	(void)arg;
	(void)pid;
	if (tid == 3)
		return false;
	*ns = tid == 1 ? 1000003 : 40;
	return true;
}

/*
 * --wall: a thread's samples on CPU share its measured CPU time by their
 * counts, adding up to it exactly; its intervals off CPU keep their length.
 * A thread with CPU time and no sample on CPU gets it in one sample of the
 * "not sampled" frame; one whose time is unknown keeps a period a sample.
 */
static void check_thread_cpu(struct env *e)
{
	const uint64_t a[] = { KSYM(0x1410), 0 }, b[] = { KSYM(0x1310), 0 };
	struct pseudo_frame unsampled;
	struct stacks_opts opts = {
		.start_mono = START_MONO,
		.thread_cpu = fake_thread_cpu,
		.unsampled = &unsampled,
	};
	uint64_t on = 0, off = 0, n_unsampled = 0;

	CHECK(pseudo_frame__init(&unsampled, e->p->strings, UNSAMPLED_FRAME_NAME) == 0);
	/* Thread 1: stack a twice, stack b once, and an interval off CPU. */
	CHECK(add(e, 1, false, START_MONO + 10, a, NULL));
	CHECK(add(e, 1, false, START_MONO + 20, a, NULL));
	CHECK(add(e, 1, false, START_MONO + 30, b, NULL));
	CHECK(add(e, 1, true, START_MONO + 40, a, NULL));
	/* Thread 2: off CPU only. Thread 3: on CPU, time unknown. */
	CHECK(add(e, 2, true, START_MONO + 50, a, NULL));
	CHECK(add(e, 3, false, START_MONO + 60, a, NULL));
	CHECK(stacks__symbolize(e->p, e->sym, &e->t, &opts) == 0);

	for (size_t i = 0; i < e->p->nr_samples; i++) {
		const struct profile_sample *s = &e->p->samples[i];

		if (s->tid == 1 && !s->offcpu) {
			CHECK(s->cpu_measured);
			/* Two thirds and one third, give or take the rounding. */
			CHECK(s->cpu_ns == (s->count == 2 ? 666668 : 333334) ||
			      s->cpu_ns == (s->count == 2 ? 666669 : 333335));
			on += profile_sample__cpu_ns(e->p, s);
		}
		if (s->tid == 1 && s->offcpu)
			off += profile_sample__offcpu_ns(s);
		if (s->tid == 2 && !s->offcpu) {
			n_unsampled++;
			CHECK(s->frames[0] == &unsampled.frame);
			CHECK_U64(profile_sample__cpu_ns(e->p, s), 40);
			/* Time, but no sample: pprof's samples/count gets none from it. */
			CHECK_U64(profile_sample__events(s), 0);
			CHECK(s->times);
			CHECK_U64(s->times[0], 50);
		}
		if (s->tid == 3) {
			CHECK(!s->cpu_measured);
			CHECK_U64(profile_sample__cpu_ns(e->p, s), e->p->period_ns);
		}
	}
	CHECK_U64(on, 1000003);
	CHECK_U64(off, 500);
	CHECK_U64(n_unsampled, 1);
	/* Still in the profile's order: the new sample was sorted in. */
	CHECK_U64(e->p->nr_samples, 6);
	for (size_t i = 1; i < e->p->nr_samples; i++)
		CHECK(e->p->samples[i - 1].tid <= e->p->samples[i].tid);
}

TEST(stacks_thread_cpu_shared_by_samples)
{
	struct env e;

	if (!env_init(&e))
		check_thread_cpu(&e);
	env_release(&e);
}
