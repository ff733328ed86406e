/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz.h - what the fuzz targets share.
 *
 * Each fuzz/fuzz_*.c defines one static function that takes an input's
 * bytes, runs them through one parser and checks what it returns, and ends
 * with FUZZ_TARGET(that function). Built by fuzz/fuzz.mk with libFuzzer,
 * FUZZ_TARGET() makes it the fuzzer's entry point; the unit tests
 * (tests/unit/test_fuzz_inputs.c) define FUZZ_REPLAY and include the file
 * instead, to replay the seed corpus and every input that once crashed it.
 * The targets are included into one file there, so their static helpers need
 * names of their own.
 *
 * A check that fails prints what failed and aborts: libFuzzer keeps the input
 * as a crash, and the unit tests die with the message.
 */
#ifndef PROFILER_FUZZ_H
#define PROFILER_FUZZ_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#ifdef FUZZ_REPLAY
#define FUZZ_TARGET(fn)
static inline void fuzz_log_init(void)
{
}
#else
/*
 * Every message is formatted, debug ones included, so that their arguments
 * (lengths and pointers into the input) are checked too, then dropped.
 */
static inline void fuzz_log_format(enum log_level level, const char *fmt, va_list args)
{
	char buf[512];

	(void)level;
	vsnprintf(buf, sizeof(buf), fmt, args);
}

static inline void fuzz_log_init(void)
{
	log_set_print(fuzz_log_format);
}

#define FUZZ_TARGET(fn)                                                                            \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                              \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                               \
	{                                                                                          \
		return fn(data, size);                                                             \
	}
#endif

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define FUZZ_MAX_SECTIONS 8

/*
 * An input cut into sections, for the targets that read several buffers (a
 * DWARF unit and its abbreviations, ...). Input layout: a flags byte, one
 * little-endian 16-bit size per section but the last, then the sections back
 * to back; the last takes what is left, and sizes running past the end are
 * cut short. Each section is copied into a buffer of exactly its size, so
 * that AddressSanitizer sees a read past the end of any one of them, not only
 * past the end of the input. A section of size 0 is NULL, as a missing ELF
 * section is to the parsers.
 */
struct fuzz_sections {
	uint8_t flags;
	uint8_t *data[FUZZ_MAX_SECTIONS];
	size_t size[FUZZ_MAX_SECTIONS];
};

static inline void fuzz_sections__release(struct fuzz_sections *s)
{
	for (int i = 0; i < FUZZ_MAX_SECTIONS; i++)
		free(s->data[i]);
	memset(s, 0, sizeof(*s));
}

/* Cut @data into @nr sections (at most FUZZ_MAX_SECTIONS); 0, or -1 when out of memory. */
static inline int fuzz_sections__split(struct fuzz_sections *s, const uint8_t *data, size_t size,
				       int nr)
{
	size_t header = 1 + 2 * (size_t)(nr - 1), pos = header;

	memset(s, 0, sizeof(*s));
	if (size < header)
		return 0;
	s->flags = data[0];
	for (int i = 0; i < nr; i++) {
		size_t want = i < nr - 1 ? (size_t)(data[1 + 2 * i] | data[2 + 2 * i] << 8) :
					   size - pos;

		if (want > size - pos)
			want = size - pos;
		if (!want)
			continue;
		s->data[i] = malloc(want);
		if (!s->data[i]) {
			fuzz_sections__release(s);
			return -1;
		}
		memcpy(s->data[i], data + pos, want);
		s->size[i] = want;
		pos += want;
	}
	return 0;
}

#endif
