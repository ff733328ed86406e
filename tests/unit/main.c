// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define MAX_TESTS 512

static struct {
	const char *name;
	test_fn fn;
} tests[MAX_TESTS];
static int nr_tests;
static bool current_failed;
static char current_skip[256]; /* why the running case was skipped, "" if it was not */

int test__nr_warnings;
char test__last_warning[512];

static void capture(enum log_level level, const char *fmt, va_list args)
{
	if (level != LOG_WARN)
		return;
	test__nr_warnings++;
	vsnprintf(test__last_warning, sizeof(test__last_warning), fmt, args);
}

log_print_fn test__capture_warnings(void)
{
	return log_set_print(capture);
}

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

void test__skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(current_skip, sizeof(current_skip), fmt, ap);
	va_end(ap);
	/* The reason ends the TAP line: keep it on one. */
	for (char *p = current_skip; *p; p++)
		if (*p == '\n')
			*p = ' ';
	if (!current_skip[0])
		snprintf(current_skip, sizeof(current_skip), "skipped");
}

bool test__failed(void)
{
	return current_failed;
}

const char *test__no_dev_full(void)
{
	static char why[128];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat("/dev/full", &st) || !S_ISCHR(st.st_mode))
		return "no /dev/full character device";
	fd = open("/dev/full", O_WRONLY);
	if (fd < 0) {
		snprintf(why, sizeof(why), "cannot open /dev/full: %s", strerror(errno));
		return why;
	}
	n = write(fd, "x", 1);
	if (n >= 0 || errno != ENOSPC) {
		snprintf(why, sizeof(why), "a write to /dev/full gives %zd (%s), not ENOSPC", n,
			 n < 0 ? strerror(errno) : "no error");
		close(fd);
		return why;
	}
	close(fd);
	return NULL;
}

const char *test__in_child(void (*fn)(void))
{
	static char what[128];
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		snprintf(what, sizeof(what), "cannot fork: %s", strerror(errno));
		return what;
	}
	if (!pid) {
		errno = EBADMSG;
		fn();
		_exit(errno == EBADMSG ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid) {
		snprintf(what, sizeof(what), "cannot wait for the child: %s", strerror(errno));
		return what;
	}
	if (WIFSIGNALED(status))
		snprintf(what, sizeof(what), "killed by %s", strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) == 1)
		snprintf(what, sizeof(what), "returned with errno changed");
	else if (WEXITSTATUS(status))
		snprintf(what, sizeof(what), "exited with status %d", WEXITSTATUS(status));
	else
		return NULL;
	return what;
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

int test__copy_file(const char *from, const char *to, mode_t mode)
{
	size_t len;
	void *buf = test__read_file(from, &len);
	int fd = -1, err = -1;

	unlink(to);
	if (buf)
		fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len && !fchmod(fd, mode))
		err = 0;
	if (fd >= 0 && close(fd))
		err = -1;
	free(buf);
	return err;
}

static int cmp_test(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;

	/* Constructors run in link order; report in name order. */
	qsort(tests, nr_tests, sizeof(tests[0]), cmp_test);
	for (int i = 0; i < nr_tests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		current_failed = false;
		current_skip[0] = '\0';
		fflush(stdout);
		tests[i].fn();
		if (current_failed) {
			printf("not ok - unit: %s\n", tests[i].name);
			failed++;
		} else if (current_skip[0]) {
			printf("ok - unit: %s # SKIP %s\n", tests[i].name, current_skip);
			skipped++;
		} else {
			printf("ok - unit: %s\n", tests[i].name);
			passed++;
		}
	}
	printf("# unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
