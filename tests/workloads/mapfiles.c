// SPDX-License-Identifier: GPL-2.0-only
/*
 * mapfiles DIR N [SECONDS]: write N files of one page into DIR (made if
 * missing), map each as code, then burn the CPU in busy_after_maps() for
 * SECONDS: a process whose every snapshot names N files, for
 * tests/e2e/hostile_files.sh. Prints "mapfiles: ready" once all are mapped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void busy_after_maps(void)
{
	sink += burn(10);
}

int main(int argc, char **argv)
{
	double seconds = arg_seconds(argc, argv, 3, 10), end;
	static char page[4096];
	char path[4096];
	int n;

	if (argc < 3) {
		fprintf(stderr, "usage: mapfiles DIR N [SECONDS]\n");
		return 2;
	}
	n = atoi(argv[2]);
	mkdir(argv[1], 0755);
	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%d", argv[1], i);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page) ||
		    mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
			    MAP_FAILED) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	printf("mapfiles: ready\n");
	fflush(stdout);
	for (end = now_seconds() + seconds; now_seconds() < end;)
		busy_after_maps();
	return 0;
}
