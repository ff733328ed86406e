// SPDX-License-Identifier: GPL-2.0-only
/*
 * dlopens LIBRARY [SECONDS]: dlopen() LIBRARY (a copy of libhot.so) and split
 * the time evenly between its lib_hot_loop() and self_loop() of this
 * program, for tests/e2e/hostile_files.sh, which makes a hostile file of the
 * library. Prints "dlopens: ready" once the library is loaded.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void self_loop(void)
{
	sink += burn(10);
}

int main(int argc, char **argv)
{
	double end = now_seconds() + arg_seconds(argc, argv, 2, 10);
	void (*lib_hot_loop)(void);
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: dlopens LIBRARY [SECONDS]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopens: %s\n", dlerror());
		return 1;
	}
	lib_hot_loop = (void (*)(void))dlsym(lib, "lib_hot_loop");
	if (!lib_hot_loop) {
		fprintf(stderr, "dlopens: %s\n", dlerror());
		return 1;
	}
	printf("dlopens: ready\n");
	fflush(stdout);
	while (now_seconds() < end) {
		lib_hot_loop();
		self_loop();
	}
	return 0;
}
