// SPDX-License-Identifier: GPL-2.0-only
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture_child.h"

extern char **environ;

int fixture_child__start(const char *path, struct fixture_child *c)
{
	char *argv[] = { (char *)path, "--wait", NULL };
	posix_spawn_file_actions_t fa;
	int in[2], out[2], err;
	char line[256];

	memset(c, 0, sizeof(*c));
	c->in_fd = -1;
	if (pipe2(in, O_CLOEXEC))
		return -1;
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	err = posix_spawn(&c->pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out = fdopen(out[0], "r");
	if (err || !c->out) {
		if (!c->out)
			close(out[0]);
		c->pid = err ? 0 : c->pid;
		return -1;
	}
	while (fgets(line, sizeof(line), c->out)) {
		struct fixture_sym *s = &c->syms[c->nr];
		unsigned long long addr, vaddr;

		if (!strcmp(line, "ready\n"))
			return 0;
		if (sscanf(line, "build-id %128s", c->build_id) == 1)
			continue;
		if (c->nr < 16 && sscanf(line, "sym %63s %llx %llx", s->name, &addr, &vaddr) == 3) {
			s->addr = addr;
			s->vaddr = vaddr;
			c->nr++;
		}
	}
	return -1;
}

void fixture_child__stop(struct fixture_child *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out)
		fclose(c->out);
	if (c->pid > 0)
		waitpid(c->pid, NULL, 0);
}

const struct fixture_sym *fixture_child__sym(const struct fixture_child *c, const char *name)
{
	for (size_t i = 0; i < c->nr; i++)
		if (!strcmp(c->syms[i].name, name))
			return &c->syms[i];
	return NULL;
}
