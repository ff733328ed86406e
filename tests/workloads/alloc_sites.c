// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_sites [ROUNDS]: heap allocations of known sizes from two call
 * sites, the same every run. Each round, site70() mallocs 70 blocks of 1000
 * bytes and site30() callocs 30 blocks of 10 x 100 bytes: 70% and 30% of
 * the bytes. Of each site's blocks one in ten is never freed, the others
 * are freed before the next site allocates. With ROUNDS rounds (default 1)
 * DHAT counts, for the program's own allocations:
 *
 *   Total:     ROUNDS x 100,000 bytes in ROUNDS x 100 blocks
 *   At t-gmax: (ROUNDS - 1) x 10,000 + 70,000 bytes in (ROUNDS - 1) x 10 + 70
 *              blocks (just after the last round's site70)
 *   At t-end:  ROUNDS x 10,000 bytes in ROUNDS x 10 blocks
 *
 * It prints nothing, so that the C library allocates no stdout buffer.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SITE70_BLOCKS 70
#define SITE70_SIZE 1000
#define SITE30_BLOCKS 30
#define SITE30_COUNT 10
#define SITE30_SIZE 100
#define KEEP_ONE_IN 10

static void *blocks[SITE70_BLOCKS];

/* Free the blocks of @n but one in KEEP_ONE_IN, which stay live to the end. */
static void free_most(int n)
{
	for (int i = 0; i < n; i++)
		if (i % KEEP_ONE_IN)
			free(blocks[i]);
}

__attribute__((noinline)) void site70(void)
{
	for (int i = 0; i < SITE70_BLOCKS; i++) {
		blocks[i] = malloc(SITE70_SIZE);
		if (!blocks[i])
			exit(1);
		memset(blocks[i], i, SITE70_SIZE);
	}
}

__attribute__((noinline)) void site30(void)
{
	for (int i = 0; i < SITE30_BLOCKS; i++) {
		blocks[i] = calloc(SITE30_COUNT, SITE30_SIZE);
		if (!blocks[i])
			exit(1);
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;

	for (int r = 0; r < rounds; r++) {
		site70();
		free_most(SITE70_BLOCKS);
		site30();
		free_most(SITE30_BLOCKS);
	}
	/*
	 * Live for 0.1 s more (nanosleep allocates nothing), so that the
	 * profiler reads our maps: a program gone a millisecond after its
	 * exec can be before it does (it says so). The tests of this program
	 * check the counts, not that race.
	 */
	usleep(100000);
	return 0;
}
