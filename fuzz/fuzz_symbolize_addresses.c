// SPDX-License-Identifier: GPL-2.0-only
/*
 * The address lines `profiler symbolize` reads on stdin, through
 * symbolize_read_addresses() from a memfd, with a buffer whose size the
 * input's first byte picks (so lines are cut across reads in every way).
 * Every line must be reported once, in order, and its address must be what
 * a plain reading of the rules in cli/symbolize.h gives.
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/symbolize.h"
#include "fuzz.h"

struct addresses_ref {
	const char *p, *end; /* the input lines still to report */
	size_t nr;
};

static bool addresses_ref_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool addresses_ref_parse(const char *s, size_t len, uint64_t *addr)
{
	size_t digits = 0;
	uint64_t v = 0;

	if (len > SYMBOLIZE_MAX_LINE)
		return false;
	while (len && addresses_ref_blank(*s))
		s++, len--;
	while (len && addresses_ref_blank(s[len - 1]))
		len--;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, len -= 2;
	for (; digits < len; digits++) {
		char c = s[digits];

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v << 4 | (uint64_t)((c | 0x20) - 'a' + 10);
		else
			return false;
	}
	if (!digits || digits > 16)
		return false;
	*addr = v;
	return true;
}

/* The next line of the input must be @addr (@valid), by the reference reading. */
static int addresses_check(void *ctx, uint64_t addr, bool valid)
{
	struct addresses_ref *ref = ctx;
	const char *eol;
	uint64_t want = 0;
	bool want_valid;

	FUZZ_CHECK(ref->p < ref->end);
	eol = memchr(ref->p, '\n', ref->end - ref->p);
	if (!eol)
		eol = ref->end;
	want_valid = addresses_ref_parse(ref->p, eol - ref->p, &want);
	FUZZ_CHECK(valid == want_valid);
	FUZZ_CHECK(!valid || addr == want);
	ref->p = eol + 1;
	ref->nr++;
	return 0;
}

static int fuzz_symbolize_addresses(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct addresses_ref ref;
	size_t buf_size;
	char *buf;

	if (!size)
		return 0;
	if (fd < 0) {
		fd = memfd_create("addresses", MFD_CLOEXEC);
		FUZZ_CHECK(fd >= 0);
	}
	/* From the smallest buffer allowed, where each read brings one byte, up. */
	buf_size = SYMBOLIZE_MAX_LINE + 1 + ((size_t)data[0] << 6);
	data++, size--;
	buf = malloc(buf_size);
	FUZZ_CHECK(buf);
	FUZZ_CHECK(!ftruncate(fd, 0));
	FUZZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	FUZZ_CHECK(lseek(fd, 0, SEEK_SET) == 0);
	ref = (struct addresses_ref){ .p = (const char *)data, .end = (const char *)data + size };
	FUZZ_CHECK(!symbolize_read_addresses(fd, buf, buf_size, addresses_check, &ref));
	/* Every line was reported: nothing is left but what follows the last newline. */
	FUZZ_CHECK(ref.p >= ref.end);
	free(buf);
	return 0;
}

FUZZ_TARGET(fuzz_symbolize_addresses)
