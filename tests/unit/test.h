/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test.h - the unit-test harness: TEST() registers a case, CHECK*() fail it.
 *
 * build/tests/unit-tests runs every registered case (or those whose names
 * contain argv[1]) and prints one TAP-style line per case, which tests/run
 * counts: "ok - unit: NAME", "not ok - unit: NAME" after the "#   FILE:LINE:
 * WHAT" of each failed check, or "ok - unit: NAME # SKIP REASON" when SKIP()
 * found what the case needs missing from this machine (tests/run counts those
 * apart, and as failures under PROFILER_REQUIRE_BPF=1). A case that skips
 * checks first that what it tests is there: a missing /dev/full is a skip,
 * never a pass. Fixtures built by the Makefile live in the directory named by
 * $FIXTURES (build/fixtures).
 */
#ifndef PROFILER_TEST_H
#define PROFILER_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "common/log.h"

typedef void (*test_fn)(void);

void test__register(const char *name, test_fn fn);
void test__fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool test__failed(void);
/* Mark the running case skipped, for the reason @fmt...; a failed check still fails it. */
void test__skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Why this machine has no /dev/full that fails every write with ENOSPC (a
 * character device, as on any Linux), or NULL when it has one. For SKIP().
 */
const char *test__no_dev_full(void);
/*
 * Run @fn in a child process, so that a crash fails one case instead of
 * ending the run: NULL when the child returned from @fn with errno as it
 * was before, else what happened to it (in a static buffer).
 */
const char *test__in_child(void (*fn)(void));
/*
 * Count the pr_warn() lines logged from now on in test__nr_warnings (the
 * caller zeroes it), the last one in test__last_warning; the other levels
 * are dropped. Returns the callback it replaced, for log_set_print().
 */
log_print_fn test__capture_warnings(void);
extern int test__nr_warnings;
extern char test__last_warning[512];
/* Path of fixture @name under $FIXTURES, in a static buffer. */
const char *test__fixture(const char *name);
/* The whole of file @path, its length in *@size; the caller frees it. NULL on failure. */
void *test__read_file(const char *path, size_t *size);
/* Copy file @from to a new file @to (replaced if it exists), mode @mode. 0 or -1. */
int test__copy_file(const char *from, const char *to, mode_t mode);

#define TEST(name)                                                                                 \
	static void name(void);                                                                    \
	__attribute__((constructor)) static void register_##name(void)                             \
	{                                                                                          \
		test__register(#name, name);                                                       \
	}                                                                                          \
	static void name(void)

/* The one line of a profile_frame initializer: FRAME_LINE(.name = "f", .system_name = "f"). */
#define FRAME_LINE(...) .lines = &(const struct profile_line){ __VA_ARGS__ }, .nr_lines = 1

/* Skip the running case: what it needs is missing here (say what, lowercase). */
#define SKIP(...)                                                                                  \
	do {                                                                                       \
		test__skip(__VA_ARGS__);                                                           \
		return;                                                                            \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			test__fail(__FILE__, __LINE__, "%s", #cond);                               \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_U64(a, b)                                                                            \
	do {                                                                                       \
		uint64_t a_ = (a), b_ = (b);                                                       \
		if (a_ != b_) {                                                                    \
			test__fail(__FILE__, __LINE__, "%s == %s: 0x%" PRIx64 " != 0x%" PRIx64,    \
				   #a, #b, a_, b_);                                                \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                                \
			test__fail(__FILE__, __LINE__, "%s == %s: '%s' != '%s'", #a, #b,           \
				   a_ ? a_ : "(null)", b_ ? b_ : "(null)");                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#endif
