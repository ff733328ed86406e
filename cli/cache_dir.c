// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_dir.h"

/* Is @dir a directory of root's that no one else may write? */
static bool root_only(const char *dir)
{
	struct stat st;

	return !stat(dir, &st) && S_ISDIR(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022);
}

char *cache_dir__default(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir;
	int n;

	/*
	 * The XDG base directory specification: a relative path is invalid,
	 * ignored. Root takes it only from a directory of its own: under
	 * sudo -E it would be the user's, where the user could swap what root
	 * writes through.
	 */
	if (xdg && xdg[0] == '/' && (geteuid() != 0 || root_only(xdg)))
		n = asprintf(&dir, "%s/profiler", xdg);
	else if (geteuid() == 0)
		n = asprintf(&dir, "/var/cache/profiler");
	else if (home && home[0] == '/')
		n = asprintf(&dir, "%s/.cache/profiler", home);
	else
		return NULL;
	return n < 0 ? NULL : dir;
}
