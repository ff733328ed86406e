// SPDX-License-Identifier: GPL-2.0-only
/*
 * dlcycle LIB_A LIB_B [SECONDS [SHIFT [MAPS]]]: load LIB_A, run its loop for 20 ms,
 * unload it, then the same with LIB_B, and again until SECONDS (< 0: ever) are over. The
 * two are builds of libhot.c under other names (liba.so: lib_a_loop,
 * libb.so: lib_b_loop), so that each lands where the other was and the same
 * addresses are one function, then the other. With SHIFT 1, a spacer of a
 * size that changes every cycle is mapped first, so that each load lands
 * somewhere new: code mapped and unmapped constantly. MAPS more mappings
 * of code (a page of LIB_A each, apart) make every snapshot of its maps
 * large. Prints "dlcycle: ready" once the first load is done.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "work.h"

static void run(const char *path, const char *func, double seconds, size_t spacer, bool *ready)
{
	void *gap = MAP_FAILED, *lib;
	void (*loop)(void);
	double end;

	if (spacer)
		gap = mmap(NULL, spacer, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlcycle: %s\n", dlerror());
		exit(1);
	}
	loop = (void (*)(void))dlsym(lib, func);
	if (!loop) {
		fprintf(stderr, "dlcycle: %s\n", dlerror());
		exit(1);
	}
	if (!*ready) {
		printf("dlcycle: ready\n");
		fflush(stdout);
		*ready = true;
	}
	for (end = now_seconds() + seconds; now_seconds() < end;)
		loop();
	dlclose(lib);
	if (gap != MAP_FAILED)
		munmap(gap, spacer);
}

/* Map a page of @path's code @n times, each with a gap after it so that none merge. */
static void map_pages(const char *path, int n)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY);

	for (int i = 0; fd >= 0 && i < n; i++) {
		char *at = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (at != MAP_FAILED)
			mmap(at, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	}
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	double seconds = arg_seconds(argc, argv, 3, 10);
	double end = seconds < 0 ? 1e300 : now_seconds() + seconds;
	bool shift = argc > 4 && atoi(argv[4]), ready = false;
	size_t page = sysconf(_SC_PAGESIZE);

	if (argc < 3) {
		fprintf(stderr, "usage: dlcycle LIB_A LIB_B [SECONDS [SHIFT [MAPS]]]\n");
		return 2;
	}
	map_pages(argv[1], argc > 5 ? atoi(argv[5]) : 0);
	for (unsigned int i = 0; now_seconds() < end; i++) {
		size_t spacer = shift ? (i % 251 + 1) * page : 0;

		run(argv[1], "lib_a_loop", 0.02, spacer, &ready);
		run(argv[2], "lib_b_loop", 0.02, spacer, &ready);
	}
	return 0;
}
