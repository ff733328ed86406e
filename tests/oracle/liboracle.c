// SPDX-License-Identifier: GPL-2.0-only
/*
 * liboracle.so: symbolization oracle input as a shared library (-fPIC, -O2).
 * Exported functions, which are in .dynsym, call static helpers, which are
 * not; some helpers are inlined and some stay out of line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static inline void encode_triple(const unsigned char *in, size_t n, char *out)
{
	uint32_t v = (uint32_t)in[0] << 16 | (n > 1 ? (uint32_t)in[1] << 8 : 0) |
		     (n > 2 ? in[2] : 0);

	out[0] = b64[v >> 18 & 63];
	out[1] = b64[v >> 12 & 63];
	out[2] = n > 1 ? b64[v >> 6 & 63] : '=';
	out[3] = n > 2 ? b64[v & 63] : '=';
}

size_t oracle_base64(const void *data, size_t len, char *out)
{
	const unsigned char *in = data;
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3, o += 4)
		encode_triple(in + i, len - i, out + o);
	out[o] = '\0';
	return o;
}

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static inline uint32_t crc_byte(uint32_t crc, unsigned char b)
{
	return crc_table[(crc ^ b) & 0xff] ^ (crc >> 8);
}

uint32_t oracle_crc32(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t crc = 0xffffffffu;

	if (!crc_table[1])
		crc_init();
	while (len--)
		crc = crc_byte(crc, *p++);
	return crc ^ 0xffffffffu;
}

/* Out of line on purpose: qsort calls it through a pointer. */
static int by_length_then_text(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	size_t lx = strlen(*x), ly = strlen(*y);

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(*x, *y);
}

void oracle_sort_words(const char **words, size_t n)
{
	qsort(words, n, sizeof(*words), by_length_then_text);
}

static inline size_t run_length(const char *s, size_t i, size_t len)
{
	size_t j = i;

	while (j < len && s[j] == s[i] && j - i < 9)
		j++;
	return j - i;
}

size_t oracle_rle(const char *s, char *out, size_t cap)
{
	size_t len = strlen(s), o = 0;

	for (size_t i = 0; i < len && o + 2 < cap;) {
		size_t n = run_length(s, i, len);

		out[o++] = (char)('0' + n);
		out[o++] = s[i];
		i += n;
	}
	out[o] = '\0';
	return o;
}
