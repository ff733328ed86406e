// SPDX-License-Identifier: GPL-2.0-only
/*
 * The descendants of a process, found in a real process tree: this test's
 * child, which forks a grandchild, both waiting until the test ends them.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc_tree.h"
#include "test.h"

/* The ")" and spaces of a command name do not shift the fields after it. */
TEST(proc_tree_parse_stat)
{
	pid_t ppid = 0;

	CHECK_U64(proc_tree__parse_stat("123 (sh) S 45 123 45 0 -1", &ppid), 0);
	CHECK_U64(ppid, 45);
	CHECK_U64(proc_tree__parse_stat("123 (a) b) S) R 678 1 1", &ppid), 0);
	CHECK_U64(ppid, 678);
	CHECK_U64(proc_tree__parse_stat("1 (systemd) S 0 1 1", &ppid), 0);
	CHECK_U64(ppid, 0);
	CHECK_U64(proc_tree__parse_stat("123 (sh S 45", &ppid), -EINVAL);
	CHECK_U64(proc_tree__parse_stat("123 (sh) S", &ppid), -EINVAL);
}

struct family {
	pid_t child, grandchild;
};

/* Fork a child that forks a grandchild; both wait. 0, or -1 with nothing left running. */
static int family__start(struct family *f)
{
	int fds[2];
	pid_t pids[2];

	if (pipe(fds))
		return -1;
	f->child = fork();
	if (f->child < 0)
		return -1;
	if (f->child == 0) {
		pids[0] = getpid();
		pids[1] = fork();
		if (pids[1] == 0) {
			close(fds[1]);
			pause();
			_exit(0);
		}
		if (write(fds[1], pids, sizeof(pids)) != sizeof(pids))
			_exit(1);
		/* Until the test kills it, and with it the grandchild. */
		for (;;)
			pause();
	}
	close(fds[1]);
	if (read(fds[0], pids, sizeof(pids)) != sizeof(pids) || pids[1] <= 0) {
		close(fds[0]);
		kill(f->child, SIGKILL);
		waitpid(f->child, NULL, 0);
		return -1;
	}
	close(fds[0]);
	f->grandchild = pids[1];
	return 0;
}

static void family__stop(struct family *f)
{
	kill(f->grandchild, SIGKILL);
	kill(f->child, SIGKILL);
	waitpid(f->child, NULL, 0);
}

/* What a walk visited, in order; it takes all but @refuse. */
struct visits {
	pid_t pids[64];
	size_t nr;
	pid_t refuse;
	int refuse_with;
};

static int record_visit(pid_t pid, void *arg)
{
	struct visits *v = arg;

	if (v->nr < 64)
		v->pids[v->nr++] = pid;
	return pid == v->refuse ? v->refuse_with : 0;
}

/* Where @pid was visited, or -1. */
static int visit_index(const struct visits *v, pid_t pid)
{
	for (size_t i = 0; i < v->nr; i++)
		if (v->pids[i] == pid)
			return i;
	return -1;
}

/*
 * Both descendants, the child before the grandchild, and nothing that is
 * not below this process (its parent); a process the caller does not take
 * is not looked below.
 */
static void check_walk(enum proc_tree_source from)
{
	enum proc_tree_source source = from;
	struct visits v = { 0 };
	struct family f;
	int n;

	if (from == PROC_TREE_CHILDREN && !proc_tree__has_children_files())
		SKIP("the kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)");
	CHECK(family__start(&f) == 0);
	n = proc_tree__walk(getpid(), &source, record_visit, &v);
	if (visit_index(&v, f.child) < 0 || visit_index(&v, f.grandchild) < 0) {
		family__stop(&f);
		test__fail(__FILE__, __LINE__, "child %d or grandchild %d not visited", f.child,
			   f.grandchild);
		return;
	}
	CHECK_U64(source, from);
	CHECK_U64(n, v.nr);
	CHECK(visit_index(&v, f.child) < visit_index(&v, f.grandchild));
	CHECK(visit_index(&v, getppid()) < 0 && visit_index(&v, getpid()) < 0);

	/* Refused: gone, as far as the walk knows, and so is what is below it. */
	memset(&v, 0, sizeof(v));
	v.refuse = f.child;
	v.refuse_with = -ESRCH;
	n = proc_tree__walk(getpid(), &source, record_visit, &v);
	CHECK(visit_index(&v, f.child) >= 0 && visit_index(&v, f.grandchild) < 0);
	CHECK_U64(n, v.nr - 1);

	/* Any other error ends the walk with it. */
	memset(&v, 0, sizeof(v));
	v.refuse = f.child;
	v.refuse_with = -E2BIG;
	CHECK_U64(proc_tree__walk(getpid(), &source, record_visit, &v), -E2BIG);
	CHECK(visit_index(&v, f.grandchild) < 0);
	family__stop(&f);
}

TEST(proc_tree_walk_children_files)
{
	check_walk(PROC_TREE_CHILDREN);
}

TEST(proc_tree_walk_scan)
{
	check_walk(PROC_TREE_SCAN);
}
