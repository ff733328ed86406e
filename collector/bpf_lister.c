// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf_lister.h"
#include "common/bpf_progs.h"
#include "common/clock.h"
#include "common/log.h"
#include "helper.h"

/* Programs a message carries: two descriptors each, within SCM_MAX_FD (253). */
#define BATCH 64
/* How long the collector waits for a message of the lister's. */
#define REPLY_WAIT_MS 1000
/* How long bpf_lister__free() waits for the lister to exit before killing it. */
#define EXIT_WAIT_NS (1000ULL * 1000 * 1000)

/*
 * The request: the programs loaded after @after, with the BTF of those
 * after @btf_after (the others' the collector has read already).
 */
struct lister_request {
	uint32_t after, btf_after;
};

/*
 * A reply, one message per batch: @nr programs (0 ends the reply), their
 * ids, and, bit i of @has_btf set, a BTF descriptor after program i's.
 */
struct lister_batch {
	uint32_t nr;
	uint32_t ids[BATCH];
	uint64_t has_btf;
};

struct bpf_lister {
	struct helper helper;
	bool broken; /* stopped answering: not asked again */
};

/* Send @b with its @nr_fds descriptors @fds. 0 or -errno. */
static int send_batch(int sock, const struct lister_batch *b, const int *fds, size_t nr_fds)
{
	union {
		char buf[CMSG_SPACE(2 * BATCH * sizeof(int))];
		struct cmsghdr align;
	} control = { 0 };
	struct iovec iov = { (void *)b, sizeof(*b) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nr_fds) {
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(nr_fds * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nr_fds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nr_fds * sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == sizeof(*b) ? 0 : -errno;
}

/* Answer one request (lister_request), BATCH programs a message, then an empty one. */
static int lister_answer(int sock, uint32_t after, uint32_t btf_after)
{
	struct lister_batch b = { 0 };
	int fds[2 * BATCH], err = 0;
	size_t nr_fds = 0, total = 0;
	uint32_t id = after;

	while (total < BPF_LISTER_MAX_PROGS && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id), btf_fd = -1;

		if (fd < 0)
			continue; /* unloaded meanwhile */
		if (id > btf_after && !bpf_obj_get_info_by_fd(fd, &info, &len) && info.btf_id)
			btf_fd = bpf_btf_get_fd_by_id(info.btf_id);
		fds[nr_fds++] = fd;
		if (btf_fd >= 0) {
			b.has_btf |= 1ULL << b.nr;
			fds[nr_fds++] = btf_fd;
		}
		b.ids[b.nr++] = id;
		total++;
		if (b.nr == BATCH) {
			err = send_batch(sock, &b, fds, nr_fds);
			while (nr_fds)
				close(fds[--nr_fds]);
			if (err)
				return err;
			b = (struct lister_batch){ 0 };
		}
	}
	if (b.nr)
		err = send_batch(sock, &b, fds, nr_fds);
	while (nr_fds)
		close(fds[--nr_fds]);
	b = (struct lister_batch){ 0 };
	return err ? err : send_batch(sock, &b, NULL, 0);
}

/* The lister process (helper.h): answer each request until the collector hangs up. */
static int lister_main(int sock, void *arg)
{
	struct lister_request req;
	ssize_t n;

	(void)arg;
	while ((n = recv(sock, &req, sizeof(req), 0)) == sizeof(req))
		if (lister_answer(sock, req.after, req.btf_after))
			return 1;
	return n == 0 ? 0 : 1;
}

struct bpf_lister *bpf_lister__new(void)
{
	static const int caps[] = { CAP_SYS_ADMIN, CAP_SYSLOG };
	struct bpf_lister *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
	err = helper__start(&l->helper, "bpf", caps, sizeof(caps) / sizeof(caps[0]), lister_main,
			    NULL);
	if (err) {
		free(l);
		errno = -err;
		return NULL;
	}
	return l;
}

void bpf_lister__free(struct bpf_lister *l)
{
	if (!l)
		return;
	helper__stop(&l->helper, EXIT_WAIT_NS);
	free(l);
}

/*
 * Receive one batch into @b and its descriptors into @fds (@nr_fds, as many
 * as @b says, all closed and -EPROTO otherwise). 0 or -errno.
 */
static int recv_batch(struct bpf_lister *l, struct lister_batch *b, int *fds, size_t *nr_fds)
{
	union {
		char buf[CMSG_SPACE(2 * BATCH * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { b, sizeof(*b) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	struct pollfd pfd = { .fd = l->helper.sock, .events = POLLIN };
	struct cmsghdr *c;
	size_t want;
	ssize_t n;

	*nr_fds = 0;
	n = poll(&pfd, 1, REPLY_WAIT_MS);
	if (n <= 0)
		return n ? -errno : -ETIMEDOUT;
	n = recvmsg(l->helper.sock, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (*nr_fds + k > 2 * BATCH)
			k = 2 * BATCH - *nr_fds; /* cannot be: SCM_RIGHTS is one message */
		memcpy(fds + *nr_fds, CMSG_DATA(c), k * sizeof(int));
		*nr_fds += k;
	}
	want = b->nr <= BATCH ? b->nr + (size_t)__builtin_popcountll(b->has_btf) : SIZE_MAX;
	if (n != sizeof(*b) || (msg.msg_flags & MSG_CTRUNC) || b->nr > BATCH || *nr_fds != want ||
	    (b->nr < 64 && b->has_btf >> b->nr)) {
		while (*nr_fds)
			close(fds[--*nr_fds]);
		return -EPROTO;
	}
	return 0;
}

/*
 * Ask for the programs after @after, and give each to @take(@progs, id,
 * descriptor, BTF descriptor or -1), which must not keep the descriptors.
 * 0, or the first -errno: the lister is not asked again.
 */
static int bpf_lister__ask(struct bpf_lister *l, struct bpf_progs *progs, uint32_t after,
			   int (*take)(struct bpf_progs *progs, uint32_t id, int fd, int btf_fd))
{
	struct lister_request req = { after, bpf_progs__last_id(progs) };
	struct lister_batch b;
	int fds[2 * BATCH], err = 0;
	size_t nr_fds;

	if (l->broken)
		return -EPIPE;
	if (send(l->helper.sock, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req)) {
		err = -errno;
		goto out;
	}
	do {
		size_t k = 0;

		err = recv_batch(l, &b, fds, &nr_fds);
		for (uint32_t i = 0; !err && i < b.nr; i++) {
			int fd = fds[k++], btf_fd = b.has_btf & (1ULL << i) ? fds[k++] : -1;

			/* An id at or before what we asked for is not what we asked for. */
			if (b.ids[i] > after)
				err = take(progs, b.ids[i], fd, btf_fd);
		}
		while (nr_fds)
			close(fds[--nr_fds]);
	} while (!err && b.nr);
out:
	if (err) {
		/* A reply cut short would leave the rest of it for the next request. */
		l->broken = true;
		pr_debug("bpf: the lister did not answer: %s; BPF programs loaded from now on are "
			 "named by kallsyms",
			 strerror(-err));
	}
	return err;
}

int bpf_lister__refresh(struct bpf_lister *l, struct bpf_progs *progs)
{
	int err = bpf_lister__ask(l, progs, bpf_progs__last_id(progs), bpf_progs__add);

	bpf_progs__sort(progs);
	return err;
}

/* A program loaded since the last request is added first: one request does both. */
static int count(struct bpf_progs *progs, uint32_t id, int fd, int btf_fd)
{
	int err = id > bpf_progs__last_id(progs) ? bpf_progs__add(progs, id, fd, btf_fd) : 0;

	if (!err)
		bpf_progs__count(progs, id, fd);
	return err;
}

int bpf_lister__count(struct bpf_lister *l, struct bpf_progs *progs)
{
	int err;

	bpf_progs__count_begin(progs);
	err = bpf_lister__ask(l, progs, 0, count);
	bpf_progs__sort(progs);
	if (!err)
		bpf_progs__count_end(progs, clock_ns(CLOCK_MONOTONIC));
	return err;
}
