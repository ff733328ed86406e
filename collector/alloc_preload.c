// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc_preload.h"
#include "preload/heap.h"

extern char **environ;

/* The most of a process's environment read to see whether it runs the sampler. */
#define ENVIRON_MAX (256 * 1024)

const char *alloc_exec_target(const char *exe, char *buf, size_t size)
{
	char line[256];
	ssize_t n;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);

	n = fd < 0 ? -1 : read(fd, line, sizeof(line) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return exe;
	line[n] = '\0';
	n = strspn(line + 2, " \t");
	snprintf(buf, size, "%.*s", (int)strcspn(line + 2 + n, " \t\n"), line + 2 + n);
	return *buf == '/' ? buf : exe;
}

/* Is the file at @path one that @owner (or root) keeps, and no one else may change? */
static int kept_by(const char *path, uid_t owner)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOENT;
	if ((st.st_uid != 0 && st.st_uid != owner) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return 0;
}

int alloc_preload__library(char *path, size_t size)
{
	static const char *const beside[] = { "/" HEAP_LIBRARY, "/../lib/profiler/" HEAP_LIBRARY };
	char self[PATH_MAX];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;
	int err = -ENOENT;

	if (n <= 0 || stat("/proc/self/exe", &st))
		return -ENOENT;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		char found[PATH_MAX];

		if ((size_t)snprintf(path, size, "%s%s", self, beside[i]) >= size)
			return -ENAMETOOLONG;
		if (!realpath(path, found))
			continue;
		/* The linker reads it as the command's user: whoever keeps the profiler keeps it. */
		err = kept_by(found, st.st_uid);
		if (!err) {
			snprintf(path, size, "%s", found);
			return 0;
		}
	}
	return err;
}

const char *alloc_preload__refused(const char *exe)
{
	char interp[PATH_MAX];
	const char *target = alloc_exec_target(exe, interp, sizeof(interp));
	const char *why = NULL;
	struct stat st;
	bool dynamic = false;
	size_t nr = 0;
	Elf *elf;
	int fd;

	fd = open(target, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return "its program cannot be read";
	}
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		close(fd);
		return "a set-user-ID or set-group-ID program, into which the linker preloads nothing";
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nr)) {
		why = "not an ELF program";
	} else {
		for (size_t i = 0; i < nr && !dynamic; i++) {
			GElf_Phdr ph;

			dynamic = gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP;
		}
		if (!dynamic)
			why = "a static program, which loads no library";
	}
	elf_end(elf);
	close(fd);
	return why;
}

/* Is @entry ("NAME=VALUE") the variable @name? */
static bool is_var(const char *entry, const char *name)
{
	size_t len = strlen(name);

	return !strncmp(entry, name, len) && entry[len] == '=';
}

char **alloc_preload__env(const char *library, uint64_t rate, bool children)
{
	const char *preload = getenv("LD_PRELOAD");
	size_t nr = 0, n = 0;
	char **env;

	while (environ && environ[nr])
		nr++;
	env = calloc(nr + 4, sizeof(*env));
	if (!env)
		return NULL;
	/* First in LD_PRELOAD, so the command's own preloads allocate through it too. */
	if (asprintf(&env[n++], "LD_PRELOAD=%s%s%s", library, preload && *preload ? " " : "",
		     preload ? preload : "") < 0 ||
	    asprintf(&env[n++], "%s=%" PRIu64, HEAP_RATE_ENV, rate) < 0 ||
	    (!children && !(env[n++] = strdup(HEAP_CHILDREN_ENV "=0")))) {
		env[n - 1] = NULL;
		alloc_preload__free_env(env);
		return NULL;
	}
	for (size_t i = 0; i < nr; i++) {
		if (is_var(environ[i], "LD_PRELOAD") || is_var(environ[i], HEAP_RATE_ENV) ||
		    is_var(environ[i], HEAP_CHILDREN_ENV))
			continue;
		env[n] = strdup(environ[i]);
		if (!env[n++]) {
			alloc_preload__free_env(env);
			return NULL;
		}
	}
	return env;
}

void alloc_preload__free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

bool alloc_preload__runs(pid_t pid, const char *library)
{
	char path[64], exe[PATH_MAX], *buf;
	bool rate = false, preload = false;
	ssize_t n, len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	if (alloc_preload__refused(exe))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	buf = fd < 0 ? NULL : malloc(ENVIRON_MAX + 1);
	while (buf && len < ENVIRON_MAX && (n = read(fd, buf + len, ENVIRON_MAX - len)) > 0)
		len += n;
	if (fd >= 0)
		close(fd);
	if (!buf)
		return false;
	buf[len] = '\0';
	for (char *e = buf, *next; e < buf + len; e = next) {
		next = e + strlen(e) + 1; /* before strtok() cuts e */
		if (is_var(e, HEAP_RATE_ENV))
			rate = true;
		/* The linker splits LD_PRELOAD at spaces and colons. */
		else if (is_var(e, "LD_PRELOAD"))
			for (char *tok = strtok(e + strlen("LD_PRELOAD="), " :"); tok && !preload;
			     tok = strtok(NULL, " :"))
				preload = !strcmp(tok, library);
	}
	free(buf);
	return rate && preload;
}
