// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/procfs.h"
#include "collector.h"
#include "helper.h"
#include "jvm.h"
#include "runtime.h"

#define NS_PER_MS (1000ULL * 1000)
/* How long a JVM may take to open its attach socket after SIGQUIT. */
#define JVM_LISTEN_WAIT_NS (3000 * NS_PER_MS)
#define JVM_LISTEN_POLL_NS (10 * NS_PER_MS)
/* How long it may take to write its map and answer. */
#define JVM_REPLY_WAIT_MS 3000
/*
 * A JVM still starting has not installed its SIGQUIT handler, and the signal
 * would kill it: wait for the handler this long between looks, this many
 * times (-Xrs never installs it).
 */
#define JVM_HANDLER_RETRY_NS (100 * NS_PER_MS)
#define JVM_HANDLER_RETRIES 50
/*
 * SIGQUIT to a JVM that does not start its listener (-XX:+DisableAttachMechanism)
 * prints a thread dump: send it at most this often to one JVM.
 */
#define JVM_MAX_SIGQUITS 2
/*
 * How long the map of a JVM that exited stays before the mapper removes it
 * and closes its /tmp (or at the mapper's end, if sooner): the symbolizer
 * reads it after the JVM is gone, at the end of the recording or of a
 * profile served (of up to 300 s). A recording that runs longer loses the
 * names of a JVM gone for longer; profiler serve keeps no map for days.
 */
#define JVM_GONE_KEEP_NS (3600ULL * 1000 * NS_PER_MS)
/* How long jvm_mapper__free() waits for the mapper to exit before killing it. */
#define JVM_EXIT_WAIT_NS (1000 * NS_PER_MS)
/*
 * JVMs whose /tmp the mapper keeps open, to remove the maps it caused at
 * its end: one descriptor each. Past that, a map stays.
 */
#define JVM_MAX_KEPT 256

enum jvm_state {
	JVM_NEW,    /* not asked yet */
	JVM_OURS,   /* a request sent, answered or not: its map is ours to rewrite */
	JVM_USER,   /* had a map we did not write: never asked */
	JVM_FAILED, /* cannot be asked: asked no more */
	JVM_GONE,   /* exited */
};

struct jvm {
	pid_t pid;
	uint64_t start; /* its start time (/proc/PID/stat): another is a new JVM of that pid */
	enum jvm_state state;
	/*
	 * CLOCK_MONOTONIC of the next request; JVM_FAILED's next look whether
	 * it exited, JVM_GONE's map removal.
	 */
	uint64_t due;
	bool final;	    /* JVM_MSG_FINAL asks for one more request */
	unsigned int waits; /* looks for a SIGQUIT handler not installed yet */
	unsigned int quits; /* SIGQUITs sent */
	uint64_t nr_asked;  /* requests answered */
	bool pending;	    /* a request sent whose answer we did not get */
	/*
	 * The map we caused, removed at the mapper's end: its JVM's /tmp
	 * (O_PATH, kept from our first request: -1 if none), its name there,
	 * and what it was right after our last request (map_ino 0: nothing
	 * to remove).
	 */
	int tmp;
	pid_t nspid;
	uid_t uid; /* the JVM's effective ids: the map's owner */
	gid_t gid;
	dev_t map_dev;
	ino_t map_ino;
};

/*
 * The messages between the collector's process and the mapper's, over a
 * SOCK_SEQPACKET pair: one fixed-size message each, a JVM_MSG_SEE for each
 * snapshot of a JVM and one JVM_MSG_FINAL to the mapper, one
 * JVM_MSG_REPLY back.
 */
enum jvm_msg_type {
	JVM_MSG_SEE = 1, /* a process that maps libjvm.so */
	JVM_MSG_FINAL,	 /* the end: ask once more, then reply */
	JVM_MSG_REPLY,
};

struct jvm_msg {
	uint32_t type;
	int32_t pid; /* JVM_MSG_SEE's */
};

struct jvm_reply {
	uint32_t type;
	uint32_t asked;	   /* final requests made */
	uint32_t answered; /* those the JVM answered with its map */
};

/* The collector's side. */
struct jvm_mapper {
	struct helper helper; /* the mapper process */
	bool finished;
	uint64_t nr_sent, nr_unsent; /* JVM_MSG_SEEs */
};

/* The mapper process's state. */
struct jvm_child {
	int sock;
	bool finishing, replied;
	struct jvm_reply reply;
	struct jvm *jvms; /* entries are never removed */
	size_t nr, alloc;
	size_t nr_kept; /* JVMs whose /tmp is kept: at most JVM_MAX_KEPT */
};

/* What /proc/PID/status says of a JVM. */
struct jvm_proc {
	pid_t pid, nspid; /* nspid: its pid as it sees it */
	uid_t uid;	  /* effective ids: those the JVM checks its peers against */
	gid_t gid;
	bool quit_caught; /* it handles SIGQUIT */
	int tmp;	  /* its /tmp, O_PATH, resolved in its root */
};

bool jvm__may_ask(bool map_exists, bool asked_before)
{
	return asked_before || !map_exists;
}

bool jvm__may_remove(const struct stat *now, dev_t dev, ino_t ino, uid_t uid)
{
	return ino && S_ISREG(now->st_mode) && now->st_dev == dev && now->st_ino == ino &&
	       now->st_uid == uid;
}

bool jvm__tmp_ok(const struct stat *st, uid_t uid)
{
	if (!S_ISDIR(st->st_mode) || (st->st_uid != 0 && st->st_uid != uid))
		return false;
	if (st->st_mode & S_ISVTX)
		return true;
	/* Not sticky: the JVM's user's own, and no one else may write in it. */
	return st->st_uid == uid && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool jvm__is_jvm(const struct proc_maps *maps)
{
	for (size_t i = 0; i < maps->nr; i++) {
		const char *name = maps->maps[i].name, *slash;

		if (!maps->maps[i].file || !name)
			continue;
		slash = strrchr(name, '/');
		if (!strcmp(slash ? slash + 1 : name, "libjvm.so"))
			return true;
	}
	return false;
}

bool jvm__maps_text_is_jvm(const char *text)
{
	static const char deleted[] = " (deleted)";

	for (const char *line = text; *line; line += strcspn(line, "\n"), line += *line == '\n') {
		struct proc_maps_line l;
		const char *base;
		size_t len;

		if (proc_maps__parse_line(line, &l) || l.perms[2] != 'x' || !l.ino ||
		    l.path[0] != '/')
			continue;
		len = l.path_len;
		if (len >= sizeof(deleted) - 1 &&
		    !memcmp(l.path + len - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1))
			len -= sizeof(deleted) - 1;
		base = (const char *)memrchr(l.path, '/', len) + 1;
		if ((size_t)(l.path + len - base) == strlen("libjvm.so") &&
		    !memcmp(base, "libjvm.so", strlen("libjvm.so")))
			return true;
	}
	return false;
}

/*
 * Whether @pid maps libjvm.so, read by the mapper itself: whoever sent the
 * pid is not trusted with what the mapper does to it. 1, 0, or a negative
 * errno (-ESRCH: it exited).
 */
static int maps_jvm(pid_t pid)
{
	char path[32], *text;
	int jvm;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	text = procfs__read_file(path, NULL);
	if (!text)
		return errno == ENOENT ? -ESRCH : -errno;
	jvm = jvm__maps_text_is_jvm(text);
	free(text);
	return jvm;
}

/*
 * SIGQUIT @pid if it runs a JVM. Through a pidfd taken before looking at
 * its maps: if the pid is reused meanwhile, the signal goes nowhere rather
 * than to a process that is no JVM. 0 or a negative errno (-EPERM: no JVM).
 */
static int quit_jvm(pid_t pid)
{
	int fd = pidfd_open(pid, 0), err;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = maps_jvm(pid);
	if (err > 0)
		err = pidfd_send_signal(fd, SIGQUIT, NULL, 0) ? -errno : 0;
	else if (!err)
		err = -EPERM;
	close(fd);
	return err;
}

/*
 * The start time of @pid (field 22 of /proc/PID/stat, clock ticks after
 * boot): with the pid, which JVM it is. 0, or a negative errno (-ESRCH).
 */
static int start_time(pid_t pid, uint64_t *start)
{
	char path[32], *text, *pos;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = procfs__read_file(path, NULL);
	if (!text)
		return errno == ENOENT ? -ESRCH : -errno;
	/* The fields after the command's name (field 2), which may hold anything. */
	pos = strrchr(text, ')');
	for (int field = 2; pos && field < 22; field++)
		pos = strchr(pos + 1, ' ');
	if (pos)
		*start = strtoull(pos + 1, NULL, 10);
	free(text);
	return pos ? 0 : -EPROTO;
}

/* The last number of a "Key:\tN\tN..." line. */
static long status_last(const char *line)
{
	const char *end = line + strcspn(line, "\n");

	while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	while (end > line && end[-1] >= '0' && end[-1] <= '9')
		end--;
	return strtol(end, NULL, 10);
}

/* The second number of a "Key:\tN\tN..." line (the effective id of Uid, Gid). */
static long status_second(const char *line)
{
	char *end;

	strtol(line + strcspn(line, "0123456789"), &end, 10);
	return strtol(end, NULL, 10);
}

static int jvm_proc__read(struct jvm_proc *p, pid_t pid)
{
	char path[64], *text, *line;
	int root;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = procfs__read_file(path, NULL);
	if (!text)
		return errno == ENOENT ? -ESRCH : -errno;
	p->pid = pid;
	p->nspid = pid;
	p->uid = (uid_t)-1;
	p->gid = (gid_t)-1;
	p->quit_caught = false;
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (!strncmp(line, "NSpid:", 6))
			p->nspid = status_last(line);
		else if (!strncmp(line, "Uid:", 4))
			p->uid = status_second(line);
		else if (!strncmp(line, "Gid:", 4))
			p->gid = status_second(line);
		else if (!strncmp(line, "SigCgt:", 7))
			p->quit_caught = strtoull(line + 7, NULL, 16) & (1ULL << (SIGQUIT - 1));
	}
	free(text);
	if (p->uid == (uid_t)-1 || p->gid == (gid_t)-1 || p->nspid <= 0)
		return -EPROTO;

	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	p->tmp = procfs__open_in_root(root, "/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(root);
	return p->tmp < 0 ? p->tmp : 0;
}

/* Whether @pid exists: by /proc, which needs no CAP_KILL for another user's process. */
static bool alive(pid_t pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return !access(path, F_OK);
}

static bool exists_in(int dir, const char *name)
{
	struct stat st;

	return !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW);
}

/* Set our effective ids from @old_gid to @uid and @gid. 0 or -errno. */
static int set_ids(uid_t uid, gid_t gid, gid_t old_gid)
{
	if (setresgid(-1, gid, -1))
		return -errno;
	if (setresuid(-1, uid, -1)) {
		int err = -errno;

		setresgid(-1, old_gid, -1);
		return err;
	}
	return 0;
}

/*
 * Raise our effective capabilities to the permitted ones (@on), or lower
 * them all: acting as a JVM's user, the kernel's permission checks apply
 * to us as to that user. Changing the effective uid from 0 clears them
 * too, but not when the euid was not 0 or SECBIT_NO_SETUID_FIXUP is set.
 * 0 or -errno.
 */
static int set_effective_caps(bool on)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[0].effective = on ? data[0].permitted : 0;
	data[1].effective = on ? data[1].permitted : 0;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* Our effective ids while we act as a JVM's user. */
struct saved_ids {
	uid_t euid, uid;
	gid_t egid, gid;
	int dumpable;
	bool other;
};

/*
 * Take @uid and @gid as our effective ids, with no effective capability,
 * for one call made as a JVM's user: the kernel checks it as that user's
 * (the mapper has no supplementary group: jvm_child__main()).
 * restore_ids() puts ours back. 0 or -errno (ours are unchanged).
 */
static int become_user(struct saved_ids *s, uid_t uid, gid_t gid)
{
	int err;

	*s = (struct saved_ids){ .euid = geteuid(), .egid = getegid(), .uid = uid, .gid = gid };
	s->other = s->euid != uid || s->egid != gid;
	if (!s->other)
		return 0;
	s->dumpable = prctl(PR_GET_DUMPABLE);
	err = set_ids(uid, gid, s->egid);
	if (err)
		return err;
	err = set_effective_caps(false);
	if (err && set_ids(s->euid, s->egid, s->gid))
		abort();
	return err;
}

/*
 * Back to our ids and capabilities: the saved ids are still ours and the
 * permitted capabilities unchanged, so this cannot fail. Changing the
 * effective uid also made the process not dumpable; that is put back.
 */
static void restore_ids(const struct saved_ids *s)
{
	if (!s->other)
		return;
	if (set_effective_caps(true) || set_ids(s->euid, s->egid, s->gid))
		abort();
	if (s->dumpable > 0)
		prctl(PR_SET_DUMPABLE, s->dumpable);
}

/*
 * Whether @cancel (the mapper's socket) hung up within @ms: the collector
 * closed its end, and the request under way is not wanted. A negative
 * @cancel only waits.
 */
static bool hung_up(int cancel, int ms)
{
	struct pollfd pfd = { .fd = cancel };

	return poll(&pfd, 1, ms) > 0 && (pfd.revents & (POLLHUP | POLLERR));
}

int jvm__open_socket(int dir, const char *name, uid_t uid)
{
	struct stat st;
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (S_ISLNK(st.st_mode))
		err = -ELOOP;
	else if (!S_ISSOCK(st.st_mode))
		err = -ENOTSOCK;
	else if (st.st_uid != uid || (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)))
		err = -EPERM;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Connect to the JVM's socket @name in its /tmp as the JVM's user: it
 * accepts only peers of its effective uid and gid (or root in its user
 * namespace, which we may not be). The socket must be the JVM user's own
 * (jvm__open_socket(), as jcmd checks), and is connected to through the
 * descriptor that checked it, never through a symbolic link. The mapper
 * takes the JVM's ids only for connect(), where the kernel records the
 * peer's credentials. connect() never waits: a listener that does not
 * accept (its backlog full) is tried again until @deadline, or until
 * @cancel hangs up. A descriptor (non-blocking) or a negative errno:
 * -ETIMEDOUT, -ECANCELED, or connect()'s or jvm__open_socket()'s.
 */
static int connect_as(const struct jvm_proc *p, const char *name, uint64_t deadline, int cancel)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct saved_ids ids;
	int path, fd, err;

	path = jvm__open_socket(p->tmp, name, p->uid);
	if (path < 0)
		return path;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto out_close_path;
	}
	for (;;) {
		err = become_user(&ids, p->uid, p->gid);
		if (err)
			break;
		err = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) ? -errno : 0;
		restore_ids(&ids);
		/* A full backlog: AF_UNIX fails a non-blocking connect() with EAGAIN. */
		if (err != -EAGAIN)
			break;
		if (clock_ns(CLOCK_MONOTONIC) >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		if (hung_up(cancel, JVM_LISTEN_POLL_NS / NS_PER_MS)) {
			err = -ECANCELED;
			break;
		}
	}
	if (err) {
		close(fd);
		fd = err;
	}
out_close_path:
	close(path);
	return fd;
}

/*
 * Create the trigger file @name in @p's /tmp as the JVM's user, with the
 * permissions that user has there: the directory is in a mount namespace
 * the JVM's user may control, and whatever it is, we create in it nothing
 * that user could not. It must be root's and sticky, or the user's own
 * and writable by no one else (jvm__tmp_ok()); a symbolic link is never
 * followed. 0 or a negative errno (-EEXIST: someone else's trigger file).
 */
static int create_trigger(const struct jvm_proc *p, const char *name)
{
	struct saved_ids ids;
	struct stat st;
	int fd, err;

	if (fstat(p->tmp, &st))
		return -errno;
	if (!jvm__tmp_ok(&st, p->uid)) {
		pr_debug(
			"jvm: pid %d: its /tmp (mode %o, owner %u) is not root's and sticky, nor its user's own: not attaching",
			p->pid, st.st_mode & 07777, st.st_uid);
		return -EPERM;
	}
	err = become_user(&ids, p->uid, p->gid);
	if (err)
		return err;
	fd = openat(p->tmp, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = fd < 0 ? -errno : 0;
	restore_ids(&ids);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Remove our trigger file @name, as the JVM's user (its /tmp is sticky). */
static void remove_trigger(const struct jvm_proc *p, const char *name)
{
	struct saved_ids ids;

	if (become_user(&ids, p->uid, p->gid))
		return;
	if (unlinkat(p->tmp, name, 0))
		pr_debug("jvm: pid %d: cannot remove '/tmp/%s': %s", p->pid, name, strerror(errno));
	restore_ids(&ids);
}

/*
 * Start the JVM's attach listener: a trigger file .attach_pidNSPID in its
 * /tmp, made by its user (the JVM ignores one another user planted), and
 * SIGQUIT, on which it looks for that file and opens .java_pidNSPID. Wait
 * for the socket to answer. A descriptor or a negative errno: -EAGAIN when
 * the JVM handles no SIGQUIT yet, -ETIMEDOUT when no socket came,
 * -ECANCELED when @cancel hung up meanwhile (the trigger file is removed).
 */
static int start_listener(struct jvm *j, const struct jvm_proc *p, const char *sock, int cancel)
{
	char trigger[32];
	uint64_t deadline;
	bool ours;
	int err;

	if (!p->quit_caught)
		return -EAGAIN;
	if (j->quits >= JVM_MAX_SIGQUITS)
		return -ETIMEDOUT;
	snprintf(trigger, sizeof(trigger), ".attach_pid%d", p->nspid);
	err = create_trigger(p, trigger);
	/* -EEXIST: someone else is attaching too: use their file, leave it to them. */
	if (err && err != -EEXIST)
		return err;
	ours = !err;
	j->quits++;
	err = quit_jvm(p->pid);
	if (err)
		goto out_unlink;
	deadline = clock_ns(CLOCK_MONOTONIC) + JVM_LISTEN_WAIT_NS;
	for (;;) {
		/*
		 * A socket left by an earlier JVM of that pid refuses, or is
		 * another user's (-EPERM): wait for the new one in its place.
		 */
		if (exists_in(p->tmp, sock)) {
			err = connect_as(p, sock, deadline, cancel);
			if (err >= 0 || (err != -ECONNREFUSED && err != -ENOENT && err != -EPERM))
				break;
		}
		if (!alive(p->pid)) {
			err = -ESRCH;
			break;
		}
		if (clock_ns(CLOCK_MONOTONIC) >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		if (hung_up(cancel, JVM_LISTEN_POLL_NS / NS_PER_MS)) {
			err = -ECANCELED;
			break;
		}
	}
out_unlink:
	if (ours)
		remove_trigger(p, trigger);
	return err;
}

/* Send Compiler.perfmap (attach protocol 1: version, command, three arguments). */
static int send_request(int fd)
{
	static const char req[] = "1\0jcmd\0Compiler.perfmap\0\0";
	const char *pos = req;
	size_t left = sizeof(req); /* with the string's own NUL, the third argument's */

	while (left) {
		ssize_t n = send(fd, pos, left, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		/* Non-blocking: a JVM that reads nothing of a few bytes is not answering. */
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		pos += n;
		left -= n;
	}
	return 0;
}

/*
 * Read the answer to its end: a status line ("0" for done), then the
 * command's output, which says why when the command failed. 0, -EPROTO when
 * the JVM refused (the first line of what it said in @why), or a negative
 * errno (-ECANCELED: @cancel hung up).
 */
static int read_reply(int fd, char *why, size_t size, int cancel)
{
	char buf[1024];
	size_t len = 0;
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + JVM_REPLY_WAIT_MS * NS_PER_MS;
	const char *out;

	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN }, { .fd = cancel } };
		ssize_t n;
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(pfd, 2, (deadline - now) / NS_PER_MS + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ETIMEDOUT;
		if (pfd[1].revents)
			return -ECANCELED;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		len += n;
		if (!n || len == sizeof(buf) - 1)
			break;
	}
	buf[len] = '\0';
	if (!len)
		return -EPROTO;
	/* jcmd's own failures come with status 0 and a message instead of the usual nothing. */
	out = buf + strcspn(buf, "\n");
	out += *out == '\n';
	snprintf(why, size, "%.*s", (int)strcspn(out, "\n"), out);
	if (strtol(buf, NULL, 10) || strstr(out, "Exception") || strstr(out, "Unknown"))
		return -EPROTO;
	return 0;
}

/*
 * The first request sent to @j, its map not there before: keep its /tmp
 * (@p's, taken over) to remove the map at our end, if @jc keeps fewer than
 * JVM_MAX_KEPT. Opened through /proc/PID/root while the JVM lives, the
 * descriptor still reaches that directory, in its mount namespace, once
 * the JVM has exited.
 */
static void jvm_child__keep_tmp(struct jvm_child *jc, struct jvm *j, struct jvm_proc *p)
{
	if (jc->nr_kept >= JVM_MAX_KEPT) {
		pr_debug("jvm: pid %d: more than %d JVMs asked: '/tmp/perf-%d.map' will stay",
			 j->pid, JVM_MAX_KEPT, p->nspid);
		return;
	}
	jc->nr_kept++;
	j->tmp = p->tmp;
	j->nspid = p->nspid;
	j->uid = p->uid;
	j->gid = p->gid;
	p->tmp = -1;
}

/*
 * What our map is right after a request @j answered (or at our end, after
 * one whose answer we did not get): the file we may remove at our end. Not a symbolic link, and owned by the JVM's user:
 * /tmp is sticky and world-writable, and whatever else stands at that name
 * is not ours to remove.
 */
static void jvm__note_file(struct jvm *j)
{
	char name[32];
	struct stat st;

	j->map_ino = 0;
	if (j->tmp < 0)
		return;
	snprintf(name, sizeof(name), "perf-%d.map", j->nspid);
	if (fstatat(j->tmp, name, &st, AT_SYMLINK_NOFOLLOW)) {
		pr_debug("jvm: pid %d: cannot stat '/tmp/%s': %s", j->pid, name, strerror(errno));
		return;
	}
	if (!jvm__may_remove(&st, st.st_dev, st.st_ino, j->uid)) {
		pr_debug("jvm: pid %d: '/tmp/%s' is not the JVM user's file: it will stay", j->pid,
			 name);
		return;
	}
	j->map_dev = st.st_dev;
	j->map_ino = st.st_ino;
}

/* The same right after a request answered: the JVM's ids, @p's, are the map's owner. */
static void jvm__note_map(struct jvm *j, const struct jvm_proc *p)
{
	j->uid = p->uid;
	j->gid = p->gid;
	jvm__note_file(j);
}

/*
 * Ask @j for its perf map, updating its state; give up when @jc's socket
 * hangs up. 0, or a negative errno: -EAGAIN to try again soon.
 */
static int jvm__ask(struct jvm *j, struct jvm_child *jc)
{
	struct jvm_proc p;
	char name[32], sock[32], why[128] = "";
	int fd, err, cancel = jc->sock;
	uint64_t start;

	err = jvm_proc__read(&p, j->pid);
	if (err)
		return err;
	/* After its /tmp was opened: of the JVM we know, not of a new process of that pid. */
	err = start_time(j->pid, &start);
	if (!err && start != j->start)
		err = -ESRCH;
	if (err)
		goto out_close;
	if (j->state == JVM_NEW) {
		snprintf(name, sizeof(name), "perf-%d.map", p.nspid);
		if (!jvm__may_ask(exists_in(p.tmp, name), false)) {
			j->state = JVM_USER;
			pr_debug("jvm: pid %d: '/tmp/%s' exists and is not ours: not asking",
				 j->pid, name);
			err = 0;
			goto out_close;
		}
	}
	snprintf(sock, sizeof(sock), ".java_pid%d", p.nspid);
	fd = -ENOENT;
	if (exists_in(p.tmp, sock))
		fd = connect_as(&p, sock, clock_ns(CLOCK_MONOTONIC) + JVM_REPLY_WAIT_MS * NS_PER_MS,
				cancel);
	if (fd == -ENOENT || fd == -ECONNREFUSED || fd == -EPERM)
		fd = start_listener(j, &p, sock, cancel);
	if (fd < 0) {
		err = fd;
		goto out_close;
	}
	err = send_request(fd);
	if (!err) {
		/*
		 * Its map did not exist before this first request: the JVM has
		 * it and writes the map, whether we get its answer or not (we
		 * time out, or are cancelled): we caused it.
		 */
		if (j->state == JVM_NEW)
			jvm_child__keep_tmp(jc, j, &p);
		j->state = JVM_OURS;
		j->pending = true;
		err = read_reply(fd, why, sizeof(why), cancel);
	}
	close(fd);
	if (err == -EPROTO)
		pr_debug("jvm: pid %d: Compiler.perfmap refused: %s", j->pid, why);
	if (!err) {
		j->pending = false;
		jvm__note_map(j, &p);
	}
out_close:
	if (p.tmp >= 0)
		close(p.tmp);
	return err;
}

/*
 * @j exited (or its pid is another process's): its map is removed once it
 * has been gone JVM_GONE_KEEP_NS (jvm_child__tidy()), or at our end.
 */
static void jvm__gone(struct jvm *j, uint64_t now)
{
	j->state = JVM_GONE;
	j->due = now + JVM_GONE_KEEP_NS;
}

/*
 * When to ask a JVM again after its @nr_asked-th answer: soon after the
 * first ones, while it compiles the most and a short command may exit
 * before a later request (100 ms, then twice as long each time), then
 * every JVM_REFRESH_NS. A request once the listener runs takes about 1 ms.
 */
static uint64_t refresh_after(uint64_t nr_asked)
{
	uint64_t ns = JVM_FIRST_REFRESH_NS << (nr_asked < 8 ? nr_asked - 1 : 7);

	return nr_asked && ns < JVM_REFRESH_NS ? ns : JVM_REFRESH_NS;
}

/*
 * One request, given up when @jc's socket hangs up; its outcome in @j.
 * Whether the JVM wrote its map.
 */
static bool jvm__request(struct jvm *j, struct jvm_child *jc)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC), now;
	bool first = j->state == JVM_NEW;
	int err = jvm__ask(j, jc);

	now = clock_ns(CLOCK_MONOTONIC);
	j->due = now + JVM_REFRESH_NS;
	if (!err) {
		if (j->state == JVM_OURS) {
			j->nr_asked++;
			j->due = now + refresh_after(j->nr_asked);
			pr_info("jvm: pid %d: perf map asked for (%s) in %.1f ms", j->pid,
				first ? "first" : "again", (now - start) / 1e6);
			return true;
		}
		return false;
	}
	if (err == -ESRCH) {
		jvm__gone(j, now);
	} else if (err == -EAGAIN && ++j->waits < JVM_HANDLER_RETRIES) {
		j->due = now + JVM_HANDLER_RETRY_NS;
	} else if (err == -ETIMEDOUT && j->quits < JVM_MAX_SIGQUITS) {
		pr_debug("jvm: pid %d: no attach socket after SIGQUIT, trying again later", j->pid);
	} else {
		j->state = JVM_FAILED;
		/* A refusal was logged with the JVM's words. */
		if (err != -EPROTO)
			pr_debug("jvm: pid %d: cannot ask for a perf map: %s", j->pid,
				 strerror(-err));
	}
	return false;
}

static bool jvm__askable(const struct jvm *j)
{
	return j->state == JVM_NEW || j->state == JVM_OURS;
}

/* The next JVM to ask, or -1 and in *@next when one will be due (UINT64_MAX: none). */
static ssize_t jvm_child__pick(const struct jvm_child *jc, uint64_t now, uint64_t *next)
{
	*next = UINT64_MAX;
	for (size_t i = 0; i < jc->nr; i++) {
		const struct jvm *j = &jc->jvms[i];

		if (!jvm__askable(j))
			continue;
		if (j->final || (!jc->finishing && j->due <= now))
			return i;
		if (!jc->finishing && j->due < *next)
			*next = j->due;
	}
	return -1;
}

/*
 * A process the collector saw map libjvm.so: track it if it is a JVM not
 * known yet, by its pid and start time.
 */
static void jvm_child__see(struct jvm_child *jc, pid_t pid)
{
	struct jvm *j = NULL;
	uint64_t start;
	int jvm;

	if (jc->finishing)
		return;
	for (size_t i = 0; i < jc->nr; i++)
		if (jc->jvms[i].pid == pid)
			j = &jc->jvms[i];
	jvm = start_time(pid, &start);
	if (jvm < 0) {
		pr_debug("jvm: pid %d: cannot read its start time: %s", pid, strerror(-jvm));
		return;
	}
	if (j && j->state != JVM_GONE && j->start == start)
		return;
	/* The JVM we knew of that pid exited, and the pid is a new process's. */
	if (j && j->state != JVM_GONE)
		jvm__gone(j, clock_ns(CLOCK_MONOTONIC));
	jvm = maps_jvm(pid);
	if (jvm < 0) {
		pr_debug("jvm: pid %d: cannot read its maps: %s", pid, strerror(-jvm));
		return;
	}
	if (!jvm) {
		pr_debug("jvm: pid %d maps no libjvm.so: not asking", pid);
		return;
	}
	/*
	 * A new entry for a JVM that exited, its pid taken by a new one, too:
	 * the old entry keeps the map to remove of the JVM that exited. The
	 * search above finds the last.
	 */
	if (array__reserve(&jc->jvms, &jc->alloc, jc->nr + 1, sizeof(*jc->jvms))) {
		pr_debug("jvm: pid %d: cannot track: %s", pid, strerror(ENOMEM));
		return;
	}
	j = &jc->jvms[jc->nr++];
	*j = (struct jvm){ .pid = pid, .start = start, .state = JVM_NEW, .tmp = -1 };
	pr_debug("jvm: pid %d runs a JVM: asking for its perf map", pid);
}

/* The end of the recording: each JVM still alive is asked once more, and no periodic request follows. */
static void jvm_child__final(struct jvm_child *jc)
{
	if (jc->finishing)
		return;
	jc->finishing = true;
	for (size_t i = 0; i < jc->nr; i++)
		if (jvm__askable(&jc->jvms[i]) && alive(jc->jvms[i].pid)) {
			jc->jvms[i].final = true;
			jc->reply.asked++;
		}
}

/*
 * Take in what the collector sent, without waiting for more. 0, or -EPIPE
 * once it closed its end (or the socket failed): time to exit. A message
 * is checked before it is used: the collector's process parses what its
 * targets control, and is not trusted with what we do.
 */
static int jvm_child__read(struct jvm_child *jc)
{
	for (;;) {
		struct jvm_msg msg;
		char buf[sizeof(msg) + 1]; /* a longer message is cut to this, and refused */
		ssize_t n = recv(jc->sock, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -EPIPE;
		memcpy(&msg, buf, sizeof(msg));
		if (n != sizeof(msg) || (msg.type != JVM_MSG_SEE && msg.type != JVM_MSG_FINAL) ||
		    (msg.type == JVM_MSG_SEE && msg.pid <= 0)) {
			pr_debug("jvm: a malformed message from the collector: ignored");
			continue;
		}
		if (msg.type == JVM_MSG_FINAL)
			jvm_child__final(jc);
		else
			jvm_child__see(jc, msg.pid);
	}
}

/*
 * Remove @j's map, if it is still the file the JVM wrote at our last
 * request (jvm__note_map()): the same inode, no symbolic link, owned by the
 * JVM's user. As that user, so that the sticky /tmp lets us remove nothing
 * else: nor a file another user put at that name between our look and the
 * unlink, which only the JVM's user could make room for.
 */
static void jvm__remove_map(struct jvm *j)
{
	struct saved_ids ids;
	struct stat st;
	char name[32];
	int err;

	/* The JVM got our last request but we not its answer: its map as it is now. */
	if (j->pending) {
		j->pending = false;
		jvm__note_file(j);
	}
	if (!j->map_ino)
		return;
	snprintf(name, sizeof(name), "perf-%d.map", j->nspid);
	if (fstatat(j->tmp, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno != ENOENT)
			pr_debug("jvm: pid %d: cannot stat '/tmp/%s': %s", j->pid, name,
				 strerror(errno));
		return;
	}
	if (!jvm__may_remove(&st, j->map_dev, j->map_ino, j->uid)) {
		pr_debug("jvm: pid %d: '/tmp/%s' changed since we asked for it: it stays", j->pid,
			 name);
		return;
	}
	err = become_user(&ids, j->uid, j->gid);
	if (!err) {
		err = unlinkat(j->tmp, name, 0) ? -errno : 0;
		restore_ids(&ids);
	}
	if (err)
		pr_debug("jvm: pid %d: cannot remove '/tmp/%s': %s", j->pid, name, strerror(-err));
	else
		pr_debug("jvm: pid %d: '/tmp/%s' removed", j->pid, name);
}

/* Remove @j's map and close its /tmp: @jc keeps one fewer. */
static void jvm_child__release(struct jvm_child *jc, struct jvm *j)
{
	if (j->tmp < 0)
		return;
	jvm__remove_map(j);
	close(j->tmp);
	j->tmp = -1;
	jc->nr_kept--;
}

/*
 * The JVMs whose /tmp we keep, at @now: remove the map of each gone for
 * JVM_GONE_KEEP_NS, and see whether each asked no more (JVM_FAILED) is
 * gone, every JVM_REFRESH_NS. Not once the recording is finishing: the
 * symbolizer reads the maps next, and our end removes them. When the next
 * of these is due, UINT64_MAX if none.
 */
static uint64_t jvm_child__tidy(struct jvm_child *jc, uint64_t now)
{
	uint64_t next = UINT64_MAX, start;
	int err;

	for (size_t i = 0; i < jc->nr && !jc->finishing; i++) {
		struct jvm *j = &jc->jvms[i];

		if (j->tmp < 0 || (j->state != JVM_FAILED && j->state != JVM_GONE))
			continue;
		if (j->state == JVM_FAILED && j->due <= now) {
			j->due = now + JVM_REFRESH_NS;
			err = start_time(j->pid, &start);
			if (err == -ESRCH || (!err && start != j->start))
				jvm__gone(j, now);
		}
		if (j->state == JVM_GONE && j->due <= now) {
			pr_debug("jvm: pid %d: gone, its perf map no longer needed", j->pid);
			jvm_child__release(jc, j);
			continue;
		}
		if (j->due < next)
			next = j->due;
	}
	return next;
}

/*
 * The mapper's clean end (the collector closed its end of the socket,
 * after the profile was symbolized and written): remove the maps we
 * caused, and close the directories kept for that.
 */
static void jvm_child__remove_maps(struct jvm_child *jc)
{
	for (size_t i = 0; i < jc->nr; i++)
		jvm_child__release(jc, &jc->jvms[i]);
}

/*
 * The request loop, one request at a time: the collector's messages are
 * read between requests, and poll() waits for the next one or for the
 * next request due. 0 when the collector closed its end, or -errno.
 */
static int jvm_child__run(struct jvm_child *jc)
{
	for (;;) {
		struct pollfd pfd = { .fd = jc->sock, .events = POLLIN };
		uint64_t now, next, tidy;
		ssize_t i;
		int timeout;

		if (jvm_child__read(jc))
			return 0;
		now = clock_ns(CLOCK_MONOTONIC);
		tidy = jvm_child__tidy(jc, now);
		i = jvm_child__pick(jc, now, &next);
		if (i >= 0) {
			struct jvm *j = &jc->jvms[i];
			bool answered = jvm__request(j, jc);

			if (j->final) {
				j->final = false;
				jc->reply.answered += answered;
			}
			continue;
		}
		if (jc->finishing && !jc->replied) {
			jc->replied = true;
			if (send(jc->sock, &jc->reply, sizeof(jc->reply),
				 MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(jc->reply))
				pr_debug("jvm: cannot answer the collector: %s", strerror(errno));
		}
		if (tidy < next)
			next = tidy;
		timeout = -1;
		if (next != UINT64_MAX)
			timeout = (next - now) / NS_PER_MS < INT_MAX ?
					  (int)((next - now) / NS_PER_MS) + 1 :
					  INT_MAX;
		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * The capabilities asking JVMs of other users needs, which the mapper
 * keeps (helper.h): signalling them, acting as them (a trigger file,
 * connecting), their /proc/PID/root and what is in it. The collector's
 * process keeps none of them for the mapper.
 */
static const int jvm_mapper_caps[] = { CAP_KILL,       CAP_SETUID,	 CAP_SETGID,
				       CAP_SYS_PTRACE, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH };

/* The mapper process (helper.h), with @sock its end of the socket pair. Its exit status. */
static int jvm_child__main(int sock, void *arg)
{
	struct jvm_child jc = { .sock = sock, .reply = { .type = JVM_MSG_REPLY } };
	int err;

	(void)arg;
	/* Acting as a JVM's user, none of root's groups: only the JVM's gid. */
	if (setgroups(0, NULL) && errno != EPERM)
		pr_debug("jvm: cannot drop supplementary groups: %s", strerror(errno));
	err = jvm_child__run(&jc);
	if (err)
		pr_debug("jvm: the mapper stops: %s", strerror(-err));
	else
		jvm_child__remove_maps(&jc);
	free(jc.jvms);
	return err ? 1 : 0;
}

struct jvm_mapper *jvm_mapper__new(void)
{
	struct jvm_mapper *jm = calloc(1, sizeof(*jm));
	int err;

	if (!jm)
		return NULL;
	err = helper__start(&jm->helper, "jvm", jvm_mapper_caps,
			    sizeof(jvm_mapper_caps) / sizeof(jvm_mapper_caps[0]), jvm_child__main,
			    NULL);
	if (err) {
		free(jm);
		errno = -err;
		return NULL;
	}
	return jm;
}

void jvm_mapper__free(struct jvm_mapper *jm)
{
	if (!jm)
		return;
	/* The mapper sees its socket hang up, gives up the request under way, and exits. */
	helper__stop(&jm->helper, JVM_EXIT_WAIT_NS);
	if (jm->nr_unsent)
		pr_debug("jvm: %" PRIu64 " JVM sightings not passed on to the mapper",
			 jm->nr_unsent);
	free(jm);
}

void jvm_mapper__see(struct jvm_mapper *jm, const struct proc_maps *maps)
{
	struct jvm_msg msg = { .type = JVM_MSG_SEE, .pid = maps->pid };

	if (!jm || jm->finished || !jvm__is_jvm(maps))
		return;
	/* Never wait: a mapper busy with a slow JVM takes it in after that request. */
	if (send(jm->helper.sock, &msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(msg)) {
		jm->nr_sent++;
		return;
	}
	if (!jm->nr_unsent++)
		pr_debug("jvm: pid %d: cannot pass it on to the mapper: %s", maps->pid,
			 strerror(errno));
}

/* Wait until our end of the socket is ready for @events, until @deadline at most. 0 or -errno. */
static int jvm_mapper__wait(struct jvm_mapper *jm, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = jm->helper.sock, .events = events };
		uint64_t now = clock_ns(CLOCK_MONOTONIC), ms;
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		ms = (deadline - now) / NS_PER_MS + 1;
		r = poll(&pfd, 1, ms < INT_MAX ? (int)ms : INT_MAX);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		/* Ready, or the mapper is gone: send() or recv() says which. */
		if (r)
			return 0;
	}
}

/*
 * The mapper's reply in @buf, @len bytes: checked as any outside input (its
 * process signals other users' processes). 0 or -EPROTO.
 */
static int jvm_mapper__check_reply(const struct jvm_mapper *jm, const char *buf, ssize_t len,
				   struct jvm_reply *reply)
{
	if (len != sizeof(*reply))
		return -EPROTO;
	memcpy(reply, buf, sizeof(*reply));
	if (reply->type != JVM_MSG_REPLY || reply->answered > reply->asked ||
	    reply->asked > jm->nr_sent)
		return -EPROTO;
	return 0;
}

void jvm_mapper__finish(struct jvm_mapper *jm, uint64_t timeout_ns)
{
	struct jvm_msg msg = { .type = JVM_MSG_FINAL };
	struct jvm_reply reply;
	char buf[sizeof(reply) + 1]; /* a longer reply is cut to this, and refused */
	uint64_t start = clock_ns(CLOCK_MONOTONIC), deadline = start + timeout_ns;
	ssize_t n = 0;
	double ms;
	int err;

	if (!jm || jm->finished)
		return;
	jm->finished = true;
	err = jvm_mapper__wait(jm, POLLOUT, deadline);
	if (!err &&
	    send(jm->helper.sock, &msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(msg))
		err = -errno;
	if (!err)
		err = jvm_mapper__wait(jm, POLLIN, deadline);
	if (!err) {
		n = recv(jm->helper.sock, buf, sizeof(buf), MSG_DONTWAIT);
		err = n < 0 ? -errno : !n ? -EPIPE : 0;
	}
	if (!err)
		err = jvm_mapper__check_reply(jm, buf, n, &reply);
	ms = (clock_ns(CLOCK_MONOTONIC) - start) / 1e6;
	/* What is still under way ends on its own bound, or at jvm_mapper__free(). */
	if (err == -ETIMEDOUT)
		pr_info("jvm: final perf map requests: not all answered in %.1f ms", ms);
	else if (err)
		pr_debug("jvm: no answer from the mapper: %s", strerror(-err));
	else if (reply.asked)
		pr_info("jvm: final perf map requests: %u, %s in %.1f ms", reply.asked,
			reply.answered == reply.asked ? "answered" : "not all answered", ms);
}

/* How long the end of a recording waits for the JVMs' last perf maps. */
#define JVM_FINISH_NS (3000ULL * 1000 * 1000)

/*
 * The JVM plug-in (runtime.h): JIT-compiled methods named by the perf
 * maps the mapper asks each JVM for; the symbolizer reads them.
 */
static bool jvm_runtime__wanted(const struct collector_opts *opts)
{
	return !opts->no_java;
}

static void *jvm_runtime__new(const struct runtime_env *env)
{
	(void)env;
	return jvm_mapper__new();
}

static void jvm_runtime__free(void *jm)
{
	jvm_mapper__free(jm);
}

static void jvm_runtime__snapshot(void *jm, const struct proc_maps *maps)
{
	jvm_mapper__see(jm, maps);
}

/*
 * HotSpot's JIT code keeps no frame pointer of its caller's unless told
 * to: stacks through it end there.
 */
static const char *jvm_runtime__fix(const struct proc_maps *maps)
{
	return jvm__is_jvm(maps) ? "start the JVM with -XX:+PreserveFramePointer" : NULL;
}

static void jvm_runtime__finish(void *jm)
{
	/* The JVMs' maps as they are now, for the symbolizer that runs next. */
	jvm_mapper__finish(jm, JVM_FINISH_NS);
}

const struct runtime_ops jvm_runtime = {
	.name = "jvm",
	/* Without the mapper, JIT frames are unnamed: the rest of the profile stands. */
	.optional = true,
	.wanted = jvm_runtime__wanted,
	.new = jvm_runtime__new,
	.free = jvm_runtime__free,
	.snapshot = jvm_runtime__snapshot,
	.finish = jvm_runtime__finish,
	.fix = jvm_runtime__fix,
};
