// SPDX-License-Identifier: GPL-2.0-only
/*
 * The allocation sampler preloaded into a command (collector/alloc_preload.h):
 * the environment it runs in, and the programs the linker would not preload
 * it into.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/alloc_preload.h"
#include "preload/heap.h"
#include "test.h"

/* The value of @name in @env, or NULL. */
static const char *env_get(char **env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, len) && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

/* How many entries of @env set @name. */
static int env_count(char **env, const char *name)
{
	size_t len = strlen(name);
	int n = 0;

	for (size_t i = 0; env && env[i]; i++)
		n += !strncmp(env[i], name, len) && env[i][len] == '=';
	return n;
}

TEST(alloc_preload_env)
{
	char *old = getenv("LD_PRELOAD") ? strdup(getenv("LD_PRELOAD")) : NULL;
	char **env;

	/* The command's own preload stays, after ours. */
	setenv("LD_PRELOAD", "/opt/libmine.so", 1);
	setenv(HEAP_RATE_ENV, "7", 1);
	setenv("PROFILER_TEST_KEPT", "yes", 1);
	env = alloc_preload__env("/usr/lib/profiler/" HEAP_LIBRARY, 524288, true);
	CHECK(env != NULL);
	CHECK_STR(env_get(env, "LD_PRELOAD"), "/usr/lib/profiler/" HEAP_LIBRARY " /opt/libmine.so");
	CHECK_STR(env_get(env, HEAP_RATE_ENV), "524288");
	CHECK(env_count(env, "LD_PRELOAD") == 1 && env_count(env, HEAP_RATE_ENV) == 1);
	CHECK_STR(env_get(env, "PROFILER_TEST_KEPT"), "yes");
	CHECK(!env_get(env, HEAP_CHILDREN_ENV));
	alloc_preload__free_env(env);

	/* --no-inherit: the sampler is told to leave the children alone. */
	unsetenv("LD_PRELOAD");
	env = alloc_preload__env("/p/" HEAP_LIBRARY, 1, false);
	CHECK(env != NULL);
	CHECK_STR(env_get(env, "LD_PRELOAD"), "/p/" HEAP_LIBRARY);
	CHECK_STR(env_get(env, HEAP_RATE_ENV), "1");
	CHECK_STR(env_get(env, HEAP_CHILDREN_ENV), "0");
	alloc_preload__free_env(env);

	unsetenv(HEAP_RATE_ENV);
	unsetenv("PROFILER_TEST_KEPT");
	if (old)
		setenv("LD_PRELOAD", old, 1);
	free(old);
}

TEST(alloc_preload_refused)
{
	char dir[] = "/tmp/profiler-preload-XXXXXX", path[64];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	/* A dynamic program, and a script of one: the linker preloads into them. */
	CHECK(alloc_preload__refused("/bin/true") == NULL);
	snprintf(path, sizeof(path), "%s/script", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("#!/bin/sh\ntrue\n", f);
		fclose(f);
	}
	CHECK(alloc_preload__refused(path) == NULL);
	/* Not a program; set-user-ID; missing. */
	snprintf(path, sizeof(path), "%s/text", dir);
	f = fopen(path, "w");
	if (f) {
		fputs("not a program\n", f);
		fclose(f);
	}
	CHECK(alloc_preload__refused(path) != NULL);
	snprintf(path, sizeof(path), "%s/suid", dir);
	CHECK(test__copy_file("/bin/true", path, 04755) == 0);
	CHECK(chmod(path, 04755) == 0);
	CHECK(alloc_preload__refused(path) && strstr(alloc_preload__refused(path), "set-user-ID"));
	CHECK(alloc_preload__refused("/nonexistent/program") != NULL);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

TEST(alloc_preload_refused_static)
{
	/* A Go program, linked statically: it loads no library. */
	const char *path = test__fixture("gosym"), *why = alloc_preload__refused(path);

	CHECK(access(path, R_OK) == 0);
	CHECK(why && strstr(why, "static"));
}
