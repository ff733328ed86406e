// SPDX-License-Identifier: GPL-2.0-only
/*
 * heap_work MODE ...: allocations of known sizes from known call sites, for
 * --alloc's tests. Each mode prints what it allocated, per site, so a test
 * can hold the profile against it (and against valgrind's DHAT):
 *
 *   sites N    N rounds of: site70 mallocs 700 bytes, site30 callocs 300
 *              (3 x 100) and reallocs it to 300 (a realloc of the same
 *              size), then frees them, but for one round in 10 (site70)
 *              and in 20 (site30), whose blocks are kept in small rings:
 *              a kept block is freed when its slot is reused, and the last
 *              ones are live at the exit.
 *   big GB     GB gibibytes from the two sites, 70/30, in blocks of 8 to 64
 *              KiB freed at once: for the sampled mode.
 *   attach S   allocates 4 MiB at start (site_before), prints "ready", then
 *              for S seconds runs rounds of `sites` and frees the blocks
 *              allocated before, one per round: for -p.
 *   mmap       site_mmap maps 1 MiB of anonymous memory (kept) and site70
 *              mallocs 1 MiB, which glibc maps itself (freed): one block of
 *              each kind; then it stays 0.1 s.
 *   quirks     what allocators do besides malloc and free: site_aligned
 *              makes 100 aligned_alloc(16, 1000) (which glibc hands to
 *              malloc) and 100 aligned_alloc(4096, 1000), all kept; site70
 *              a block that a realloc fails to grow (it stays, kept); and
 *              site30, 100 times, a calloc and realloc of 300 bytes that
 *              realloc(p, 0) frees; then it stays 0.1 s.
 *   leak       after 0.2 s, site70 mallocs 1 MiB and the program exits
 *              without freeing it.
 *   churn N    N small allocations (16 to 272 bytes) and as many frees, a
 *              thousand blocks live at a time, as allocation-heavy code
 *              makes them: for bench/alloc-overhead, which reads the time
 *              it prints ("seconds=S", the loop's alone).
 *
 * Printed: "site70 bytes=B blocks=N live_bytes=B live_blocks=N", the same
 * for site30 (and site_before), on stdout at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "work.h"

#define RING70 64
#define RING30 32
#define BEFORE_BLOCKS 4096

struct site {
	const char *name;
	long long bytes, blocks, live_bytes, live_blocks;
};

static struct site s70 = { "site70" }, s30 = { "site30" }, sbefore = { "site_before" },
		   smmap = { "site_mmap" }, saligned = { "site_aligned" };
static void *ring70[RING70], *ring30[RING30];
static void *before[BEFORE_BLOCKS];

static void count(struct site *s, size_t n)
{
	s->bytes += n;
	s->blocks++;
	s->live_bytes += n;
	s->live_blocks++;
}

static void uncount(struct site *s, size_t n)
{
	s->live_bytes -= n;
	s->live_blocks--;
}

__attribute__((noinline)) static void *site70(size_t n)
{
	char *p = malloc(n);

	if (!p)
		abort();
	p[0] = 1;
	count(&s70, n);
	return p;
}

/* A calloc, then a realloc to the same size: DHAT counts both as blocks. */
__attribute__((noinline)) static void *site30(size_t n)
{
	char *p = calloc(3, n / 3), *q;

	if (!p)
		abort();
	count(&s30, n);
	q = realloc(p, n);
	if (!q)
		abort();
	uncount(&s30, n);
	count(&s30, n);
	return q;
}

__attribute__((noinline)) static void *site_before(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	count(&sbefore, n);
	return p;
}

__attribute__((noinline)) static void *site_mmap(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		count(&smmap, n);
	return p;
}

__attribute__((noinline)) static void *site_aligned(size_t align, size_t n)
{
	void *p = aligned_alloc(align, n);

	if (!p)
		abort();
	count(&saligned, n);
	return p;
}

static void round_of_sites(long i)
{
	void *a = site70(700), *b = site30(300);

	if (i % 10 == 0) {
		void **slot = &ring70[(i / 10) % RING70];

		if (*slot) {
			free(*slot);
			uncount(&s70, 700);
		}
		*slot = a;
	} else {
		free(a);
		uncount(&s70, 700);
	}
	if (i % 20 == 0) {
		void **slot = &ring30[(i / 20) % RING30];

		if (*slot) {
			free(*slot);
			uncount(&s30, 300);
		}
		*slot = b;
	} else {
		free(b);
		uncount(&s30, 300);
	}
}

static void report(const struct site *s)
{
	printf("%s bytes=%lld blocks=%lld live_bytes=%lld live_blocks=%lld\n", s->name, s->bytes,
	       s->blocks, s->live_bytes, s->live_blocks);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sites";
	long n = argc > 2 ? atol(argv[2]) : 10000;

	if (!strcmp(mode, "sites")) {
		for (long i = 0; i < n; i++)
			round_of_sites(i);
	} else if (!strcmp(mode, "big")) {
		long long goal = (long long)n << 30, done = 0;
		uint64_t rng = 88172645463325252ULL;

		while (done < goal) {
			/* 8 to 64 KiB, the same sizes at both sites: only the counts make 70/30. */
			size_t size = (size_t)(8 + xorshift64(&rng) % 57) << 10;
			int which = xorshift64(&rng) % 10;
			void *p = which < 7 ? site70(size) : site30(size - size % 3);

			free(p);
			if (which < 7)
				uncount(&s70, size);
			else
				uncount(&s30, size - size % 3);
			done += which < 7 ? size : size - size % 3;
		}
	} else if (!strcmp(mode, "mmap")) {
		void *m = site_mmap(1 << 20), *p = site70(1 << 20);

		free(p);
		uncount(&s70, 1 << 20);
		if (m == MAP_FAILED)
			return 1;
		report(&smmap);
		/* As quirks: this mode tests the kinds of block, not the race with our exit. */
		usleep(100000);
	} else if (!strcmp(mode, "quirks")) {
		static void *kept[201];
		void *p;

		for (int k = 0; k < 100; k++) {
			kept[k] = site_aligned(16, 1000);
			kept[100 + k] = site_aligned(4096, 1000);
		}
		kept[200] = site70(1000);
		p = realloc(kept[200], (size_t)1 << 62); /* fails: the block is still there */
		if (p)
			abort();
		for (int k = 0; k < 100; k++) {
			p = site30(300); /* a calloc and a realloc of 300 bytes: two blocks */
			p = realloc(p, 0);
			uncount(&s30, 300);
			free(p);
		}
		report(&saligned);
		/*
		 * Live for 0.1 s more, so that the profiler reads our maps: a
		 * program gone a millisecond after its exec can be before it
		 * does (it says so). This mode tests the counts, not that race.
		 */
		usleep(100000);
	} else if (!strcmp(mode, "leak")) {
		usleep(200000);
		memset(site70(1 << 20), 1, 1 << 20);
	} else if (!strcmp(mode, "churn")) {
		static void *live[1024];
		uint64_t rng = 88172645463325252ULL;
		double start = now_seconds();

		for (long i = 0; i < n; i++) {
			void **slot = &live[xorshift64(&rng) % 1024];

			free(*slot);
			*slot = site70(16 + xorshift64(&rng) % 257);
		}
		printf("seconds=%.6f\n", now_seconds() - start);
		return 0; /* its sizes are not counted: no figures to print */
	} else if (!strcmp(mode, "attach")) {
		double end;
		long i = 0, freed = 0;

		for (int k = 0; k < BEFORE_BLOCKS; k++)
			before[k] = site_before(1024);
		printf("ready\n");
		fflush(stdout);
		end = now_seconds() + n;
		while (now_seconds() < end) {
			round_of_sites(i++);
			if (freed < BEFORE_BLOCKS) {
				free(before[freed++]);
				uncount(&sbefore, 1024);
			}
			usleep(100);
		}
		report(&sbefore);
	} else {
		fprintf(stderr, "heap_work: unknown mode '%s'\n", mode);
		return 2;
	}
	report(&s70);
	report(&s30);
	return 0;
}
