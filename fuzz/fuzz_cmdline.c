// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/cmdline bytes, which any process writes (a rewritten title may
 * hold anything), through procfs__format_cmdline() with more and less room
 * than a command line takes: the result is its return's length, fits the
 * room, and is printable UTF-8 on one line, whatever the bytes. A line of
 * printable ASCII that fits comes back as it was, padding aside.
 */
#include <stdbool.h>

#include "common/procfs.h"
#include "common/utf8.h"
#include "fuzz.h"

static bool cmdline_fuzz_printable(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n) {
		n = utf8__char_len((const unsigned char *)s + i, len - i);
		if (!n || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	}
	return true;
}

static int fuzz_cmdline(const uint8_t *data, size_t size)
{
	static const size_t rooms[] = { 1, 4, 10, PROCFS_CMDLINE_MAX + 1, 4 * PROCFS_CMDLINE_MAX };
	char out[4 * PROCFS_CMDLINE_MAX];
	const char *raw = (const char *)data;
	bool plain = true;
	size_t len = size;

	fuzz_log_init();
	while (len && (!raw[len - 1] || raw[len - 1] == ' '))
		len--;
	for (size_t i = 0; i < len; i++)
		plain &= raw[i] >= 0x20 && raw[i] < 0x7f;
	for (size_t r = 0; r < sizeof(rooms) / sizeof(rooms[0]); r++) {
		size_t room = rooms[r], n = procfs__format_cmdline(raw, size, out, room);

		FUZZ_CHECK(n == strlen(out));
		FUZZ_CHECK(n < room && n <= PROCFS_CMDLINE_MAX);
		FUZZ_CHECK(cmdline_fuzz_printable(out, n));
		if (plain && len < room && len <= PROCFS_CMDLINE_MAX)
			FUZZ_CHECK(n == len && !memcmp(out, raw, len));
		if (!len)
			FUZZ_CHECK(n == 0);
	}
	return 0;
}

FUZZ_TARGET(fuzz_cmdline)
