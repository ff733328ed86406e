// SPDX-License-Identifier: GPL-2.0-only
/*
 * What fuzz/make-seeds builds the ELF and DWARF seeds from: inlined calls,
 * several functions and their DWARF, in as few bytes as a program takes.
 */
static int counter;

static inline __attribute__((always_inline)) int leaf(int x)
{
	return x * 3 + counter;
}

static inline __attribute__((always_inline)) int middle(int x)
{
	return leaf(x) + leaf(x + 1);
}

__attribute__((noinline)) int outer(int x)
{
	counter += middle(x);
	return counter;
}

__attribute__((noinline, cold)) static int rarely(int x)
{
	return outer(x) - 1;
}

void _start(void)
{
	for (int i = 0; i < 10; i++)
		if (outer(i) > 1000)
			rarely(i);
	for (;;)
		;
}
