/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export.h - output formats by name and by file extension, and one call to
 * write a profile in any of them.
 */
#ifndef PROFILER_EXPORT_H
#define PROFILER_EXPORT_H

#include <stdio.h>

#include "common/profile.h"

enum export_format {
	EXPORT_NONE,
	EXPORT_PPROF,
	EXPORT_FOLDED,
	EXPORT_FIREFOX,
	EXPORT_SVG,
	EXPORT_DHAT,
};

/* "pprof", "folded", "firefox", "svg" or "dhat"; EXPORT_NONE for anything else. */
enum export_format export_format__from_name(const char *name);
/*
 * From the extension: .pb.gz/.pb → pprof, .folded/.txt → folded,
 * .dhat.json → dhat (before .json), .json/.json.gz → firefox, .svg → svg;
 * else EXPORT_NONE.
 */
enum export_format export_format__from_path(const char *path);
const char *export_format__name(enum export_format format);
/* The formats' names, for messages: "pprof, folded, firefox, svg, dhat". */
const char *export_format__names(void);

/* How the profile is shown, where a format leaves a choice; zeroed: the defaults. */
struct export_opts {
	enum profile_root root; /* folded and svg: what is above each stack's frames */
};

/*
 * Write @p to @out in @format, to be saved as @path ("-": stdout): a
 * Firefox profile is gzipped when @path ends in ".gz" (pprof always is,
 * as its readers expect). @opts may be NULL, for the defaults. 0 or -errno:
 * -EINVAL for dhat when @p is not an allocation profile (PROFILE_ALLOC).
 */
int export__write(enum export_format format, const struct profile *p, FILE *out, const char *path,
		  const struct export_opts *opts);

#endif
