// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/log.h"
#include "export/gzip_writer.h"

#define GZIP_CHUNK (64 * 1024)

struct gzip_writer {
	FILE *out;
	z_stream zs;
	gz_header header; /* zlib keeps a pointer to it until it has written it */
	unsigned char chunk[GZIP_CHUNK];
};

struct gzip_writer *gzip_writer__new(FILE *out, int level)
{
	struct gzip_writer *gz;
	int zerr;

	gz = calloc(1, sizeof(*gz));
	if (!gz)
		return NULL;
	gz->out = out;
	gz->header.os = 3; /* Unix, whatever the host; no name, no time */
	/* windowBits 15 + 16: a gzip wrapper rather than zlib's. */
	zerr = deflateInit2(&gz->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zerr != Z_OK) {
		pr_warn("gzip: cannot initialize zlib: %s", gz->zs.msg ? gz->zs.msg : zError(zerr));
		free(gz);
		errno = zerr == Z_MEM_ERROR ? ENOMEM : EINVAL;
		return NULL;
	}
	zerr = deflateSetHeader(&gz->zs, &gz->header);
	if (zerr != Z_OK) {
		pr_warn("gzip: cannot set the header: %s", gz->zs.msg ? gz->zs.msg : zError(zerr));
		gzip_writer__free(gz);
		errno = EINVAL;
		return NULL;
	}
	return gz;
}

/*
 * Run deflate over the input set in gz->zs with @flush, writing out what it
 * gives, until it has taken all the input (and, with Z_FINISH, ended the stream).
 */
static int gzip_writer__deflate(struct gzip_writer *gz, int flush)
{
	size_t len;
	int zerr;

	do {
		gz->zs.next_out = gz->chunk;
		gz->zs.avail_out = sizeof(gz->chunk);
		zerr = deflate(&gz->zs, flush);
		if (zerr == Z_STREAM_ERROR) {
			pr_warn("gzip: cannot compress: %s",
				gz->zs.msg ? gz->zs.msg : zError(zerr));
			return -EINVAL;
		}
		len = sizeof(gz->chunk) - gz->zs.avail_out;
		errno = 0;
		if (len && fwrite(gz->chunk, 1, len, gz->out) != len)
			return errno ? -errno : -EIO;
	} while (gz->zs.avail_out == 0 || (flush == Z_FINISH && zerr != Z_STREAM_END));
	return 0;
}

int gzip_writer__write(struct gzip_writer *gz, const void *data, size_t len)
{
	const unsigned char *p = data;
	int err = 0;

	while (len && !err) {
		/* zlib counts input in uInt: feed more than that in pieces. */
		uInt avail = len > UINT32_MAX ? UINT32_MAX : (uInt)len;

		gz->zs.next_in = (unsigned char *)p;
		gz->zs.avail_in = avail;
		err = gzip_writer__deflate(gz, Z_NO_FLUSH);
		p += avail;
		len -= avail;
	}
	return err;
}

int gzip_writer__finish(struct gzip_writer *gz)
{
	gz->zs.next_in = NULL;
	gz->zs.avail_in = 0;
	return gzip_writer__deflate(gz, Z_FINISH);
}

void gzip_writer__free(struct gzip_writer *gz)
{
	if (!gz)
		return;
	deflateEnd(&gz->zs);
	free(gz);
}
