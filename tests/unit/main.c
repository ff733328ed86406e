// SPDX-License-Identifier: GPL-2.0-only
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

#define MAX_TESTS 512

static struct {
	const char *name;
	test_fn fn;
} tests[MAX_TESTS];
static int nr_tests;
static bool current_failed;

void test__register(const char *name, test_fn fn)
{
	if (nr_tests == MAX_TESTS) {
		fprintf(stderr, "unit-tests: more than %d tests, raise MAX_TESTS\n", MAX_TESTS);
		exit(2);
	}
	tests[nr_tests].name = name;
	tests[nr_tests].fn = fn;
	nr_tests++;
}

void test__fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	current_failed = true;
	fprintf(stdout, "#   %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

bool test__failed(void)
{
	return current_failed;
}

const char *test__fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *dir = getenv("FIXTURES");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "build/fixtures", name);
	return path;
}

void *test__read_file(const char *path, size_t *size)
{
	struct stat st;
	void *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && (buf = malloc(st.st_size)) &&
	    read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	*size = st.st_size;
	close(fd);
	return buf;
}

static int cmp_test(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	/* Constructors run in link order; report in name order. */
	qsort(tests, nr_tests, sizeof(tests[0]), cmp_test);
	for (int i = 0; i < nr_tests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		current_failed = false;
		fflush(stdout);
		tests[i].fn();
		if (current_failed) {
			printf("not ok - unit: %s\n", tests[i].name);
			failed++;
		} else {
			printf("ok - unit: %s\n", tests[i].name);
			passed++;
		}
	}
	printf("# unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
