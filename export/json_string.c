// SPDX-License-Identifier: GPL-2.0-only
#include <stdint.h>

#include "common/utf8.h"
#include "export/json_string.h"

void json_string__escape(const char *s, json_put_fn put, void *ctx)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run = p;

	for (;;) {
		unsigned char c = *p;
		size_t n;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			p++;
			continue;
		}
		if (p > run)
			put(ctx, run, p - run);
		if (!c)
			break;
		if (c >= 0x80) {
			/* SIZE_MAX: @s ends at its NUL, which no sequence spans. */
			n = utf8__char_len(p, SIZE_MAX);
			if (n)
				put(ctx, p, n);
			else
				put(ctx, "\\ufffd", 6);
			p += n ? n : 1;
		} else if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };

			put(ctx, esc, 2);
			p++;
		} else {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

			put(ctx, esc, 6);
			p++;
		}
		run = p;
	}
}
