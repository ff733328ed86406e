/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fixture_child.h - a fixture program (tests/fixtures/symbols.c) running
 * with --wait: it prints its build-id and where its functions are loaded,
 * then "ready", and waits until its stdin closes, so that tests can read
 * its /proc/PID/maps and symbolize its addresses.
 */
#ifndef PROFILER_TEST_FIXTURE_CHILD_H
#define PROFILER_TEST_FIXTURE_CHILD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct fixture_sym {
	char name[64];
	uint64_t addr, vaddr; /* loaded address, ELF virtual address */
};

struct fixture_child {
	pid_t pid;
	int in_fd;
	FILE *out;
	char build_id[2 * 64 + 1];
	size_t nr;
	struct fixture_sym syms[16];
};

/*
 * Start @path --wait and read what it prints up to "ready"; 0 or -1. Call
 * fixture_child__stop() either way.
 */
int fixture_child__start(const char *path, struct fixture_child *c);
void fixture_child__stop(struct fixture_child *c);

/* The function called @name, or NULL when the child did not print it. */
const struct fixture_sym *fixture_child__sym(const struct fixture_child *c, const char *name);

#endif
