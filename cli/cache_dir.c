// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cache_dir.h"

char *cache_dir__default(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir;
	int n;

	/* The XDG base directory specification: a relative path is invalid, ignored. */
	if (xdg && xdg[0] == '/')
		n = asprintf(&dir, "%s/profiler", xdg);
	else if (geteuid() == 0)
		n = asprintf(&dir, "/var/cache/profiler");
	else if (home && home[0] == '/')
		n = asprintf(&dir, "%s/.cache/profiler", home);
	else
		return NULL;
	return n < 0 ? NULL : dir;
}
