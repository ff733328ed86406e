// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "dhat.h"
#include "export.h"
#include "firefox.h"
#include "folded.h"
#include "pprof.h"
#include "svg.h"

static const struct {
	enum export_format format;
	const char *name;
	const char *extensions[3];
} formats[] = {
	{ EXPORT_PPROF, "pprof", { ".pb.gz", ".pb" } },
	{ EXPORT_FOLDED, "folded", { ".folded", ".txt" } },
	/* Before firefox: the first format whose extension matches wins, and x.dhat.json is dhat. */
	{ EXPORT_DHAT, "dhat", { ".dhat.json" } },
	{ EXPORT_FIREFOX, "firefox", { ".json.gz", ".json" } },
	{ EXPORT_SVG, "svg", { ".svg" } },
};

#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

enum export_format export_format__from_name(const char *name)
{
	for (size_t i = 0; i < NR_FORMATS; i++)
		if (!strcmp(name, formats[i].name))
			return formats[i].format;
	return EXPORT_NONE;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

enum export_format export_format__from_path(const char *path)
{
	for (size_t i = 0; i < NR_FORMATS; i++)
		for (size_t j = 0; formats[i].extensions[j]; j++)
			if (ends_with(path, formats[i].extensions[j]))
				return formats[i].format;
	return EXPORT_NONE;
}

const char *export_format__name(enum export_format format)
{
	for (size_t i = 0; i < NR_FORMATS; i++)
		if (formats[i].format == format)
			return formats[i].name;
	return "none";
}

const char *export_format__names(void)
{
	return "pprof, folded, firefox, svg, dhat";
}

int export__write(enum export_format format, const struct profile *p, FILE *out, const char *path,
		  const struct export_opts *opts)
{
	enum profile_root root = opts ? opts->root : PROFILE_ROOT_COMM;

	switch (format) {
	case EXPORT_PPROF:
		return pprof__write(p, out);
	case EXPORT_FOLDED:
		return folded__write_root(p, out, root);
	case EXPORT_FIREFOX:
		return firefox__write(p, out, ends_with(path, ".gz"));
	case EXPORT_SVG:
		return svg__write_root(p, out, root);
	case EXPORT_DHAT:
		return dhat__write(p, out);
	case EXPORT_NONE:
		break;
	}
	return -EINVAL;
}
