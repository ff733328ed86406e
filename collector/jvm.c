// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/procfs.h"
#include "jvm.h"

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

enum jvm_state {
	JVM_NEW,    /* not asked yet */
	JVM_OURS,   /* asked: its map is ours to rewrite */
	JVM_USER,   /* had a map we did not write: never asked */
	JVM_FAILED, /* cannot be asked: asked no more */
	JVM_GONE,   /* exited */
};

struct jvm {
	pid_t pid;
	enum jvm_state state;
	uint64_t due;	    /* CLOCK_MONOTONIC of the next request */
	bool final;	    /* jvm_mapper__finish() waits for one more request */
	unsigned int waits; /* looks for a SIGQUIT handler not installed yet */
	unsigned int quits; /* SIGQUITs sent */
	uint64_t nr_asked;  /* requests answered */
};

struct jvm_mapper {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the thread's: work is due, or stop */
	pthread_cond_t done; /* finish()'s: a request ended */
	pthread_t thread;
	bool started, stopping, finishing;
	/* Indexed by the thread while unlocked: entries are never removed. */
	struct jvm *jvms;
	size_t nr, alloc;
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

/*
 * Set this thread's effective ids from @old_gid to @uid and @gid: the
 * kernel's per-thread calls, not glibc's, which change every thread's.
 */
static int set_thread_ids(uid_t uid, gid_t gid, gid_t old_gid)
{
	if (syscall(SYS_setresgid, -1, gid, -1))
		return -errno;
	if (syscall(SYS_setresuid, -1, uid, -1)) {
		int err = -errno;

		syscall(SYS_setresgid, -1, old_gid, -1);
		return err;
	}
	return 0;
}

/*
 * Connect to the JVM's socket @name in its /tmp as the JVM's user: it
 * accepts only peers of its effective uid and gid (or root in its user
 * namespace, which we may not be). Only this thread takes the JVM's ids, and
 * only for connect(), where the kernel records the peer's credentials.
 * Changing the effective uid also makes the process not dumpable; that is
 * put back. A descriptor or a negative errno.
 */
static int connect_as(const struct jvm_proc *p, const char *name)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	uid_t euid = geteuid();
	gid_t egid = getegid();
	bool other = euid != p->uid || egid != p->gid;
	int fd, err = 0, dumpable = 0;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d/%s", p->tmp, name);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (other) {
		dumpable = prctl(PR_GET_DUMPABLE);
		err = set_thread_ids(p->uid, p->gid, egid);
		if (err)
			goto out_close;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
		err = -errno;
	if (other) {
		/* Back to ours: the saved ids are still ours, so this cannot fail. */
		if (set_thread_ids(euid, egid, p->gid))
			abort();
		if (dumpable > 0)
			prctl(PR_SET_DUMPABLE, dumpable);
	}
out_close:
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Start the JVM's attach listener: a trigger file .attach_pidNSPID in its
 * /tmp, owned by its user (the JVM ignores one another user planted), and
 * SIGQUIT, on which it looks for that file and opens .java_pidNSPID. Wait
 * for the socket to answer. A descriptor or a negative errno: -EAGAIN when
 * the JVM handles no SIGQUIT yet, -ETIMEDOUT when no socket came.
 */
static int start_listener(struct jvm *j, const struct jvm_proc *p, const char *sock)
{
	char trigger[32];
	uint64_t deadline;
	int fd, err;
	bool ours = false;

	if (!p->quit_caught)
		return -EAGAIN;
	if (j->quits >= JVM_MAX_SIGQUITS)
		return -ETIMEDOUT;
	snprintf(trigger, sizeof(trigger), ".attach_pid%d", p->nspid);
	fd = openat(p->tmp, trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ours = true;
		err = fchown(fd, p->uid, p->gid) ? -errno : 0;
		close(fd);
		if (err)
			goto out_unlink;
	} else if (errno != EEXIST) {
		/* Someone else is attaching too: use their file, leave it to them. */
		return -errno;
	}
	j->quits++;
	if (kill(p->pid, SIGQUIT)) {
		err = -errno;
		goto out_unlink;
	}
	deadline = clock_ns(CLOCK_MONOTONIC) + JVM_LISTEN_WAIT_NS;
	for (;;) {
		/* A socket left by an earlier JVM of that pid refuses: wait for the new one. */
		if (exists_in(p->tmp, sock)) {
			err = connect_as(p, sock);
			if (err >= 0 || (err != -ECONNREFUSED && err != -ENOENT))
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
		nanosleep(&(struct timespec){ .tv_nsec = JVM_LISTEN_POLL_NS }, NULL);
	}
out_unlink:
	if (ours)
		unlinkat(p->tmp, trigger, 0);
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
		if (n < 0)
			return -errno;
		pos += n;
		left -= n;
	}
	return 0;
}

/*
 * Read the answer to its end: a status line ("0" for done), then the
 * command's output, which says why when the command failed. 0, -EPROTO when
 * the JVM refused (the first line of what it said in @why), or a negative
 * errno.
 */
static int read_reply(int fd, char *why, size_t size)
{
	char buf[1024];
	size_t len = 0;
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + JVM_REPLY_WAIT_MS * NS_PER_MS;
	const char *out;

	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (deadline - now) / NS_PER_MS + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ETIMEDOUT;
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
 * Ask @j for its perf map, updating its state. 0, or a negative errno:
 * -EAGAIN to try again soon.
 */
static int jvm__ask(struct jvm *j)
{
	struct jvm_proc p;
	char name[32], sock[32], why[128] = "";
	int fd, err;

	err = jvm_proc__read(&p, j->pid);
	if (err)
		return err;
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
		fd = connect_as(&p, sock);
	if (fd == -ENOENT || fd == -ECONNREFUSED)
		fd = start_listener(j, &p, sock);
	if (fd < 0) {
		err = fd;
		goto out_close;
	}
	err = send_request(fd);
	if (!err)
		err = read_reply(fd, why, sizeof(why));
	close(fd);
	if (err == -EPROTO)
		pr_debug("jvm: pid %d: Compiler.perfmap refused: %s", j->pid, why);
	if (!err)
		j->state = JVM_OURS;
out_close:
	close(p.tmp);
	return err;
}

/* One request, with the lock not held; its outcome in @j. */
static void jvm__request(struct jvm *j)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC), now;
	bool first = j->state == JVM_NEW;
	int err = jvm__ask(j);

	now = clock_ns(CLOCK_MONOTONIC);
	j->due = now + JVM_REFRESH_NS;
	if (!err) {
		if (j->state == JVM_OURS) {
			j->nr_asked++;
			pr_info("jvm: pid %d: perf map asked for (%s) in %.1f ms", j->pid,
				first ? "first" : "again", (now - start) / 1e6);
		}
		return;
	}
	if (err == -ESRCH) {
		j->state = JVM_GONE;
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
}

static bool jvm__askable(const struct jvm *j)
{
	return j->state == JVM_NEW || j->state == JVM_OURS;
}

/* The next JVM to ask, or -1 and in *@next when one will be due (UINT64_MAX: none). */
static ssize_t jvm_mapper__pick(struct jvm_mapper *jm, uint64_t now, uint64_t *next)
{
	*next = UINT64_MAX;
	for (size_t i = 0; i < jm->nr; i++) {
		struct jvm *j = &jm->jvms[i];

		if (!jvm__askable(j))
			continue;
		if (j->final || (!jm->finishing && j->due <= now))
			return i;
		if (!jm->finishing && j->due < *next)
			*next = j->due;
	}
	return -1;
}

/*
 * Keep, in this thread, only the capabilities asking JVMs of other users
 * needs: signalling them, a trigger file of theirs, connecting as them,
 * their /proc/PID/root. Capabilities belong to a thread: the thread starts
 * with the collector, before the recording drops what sampling no longer
 * needs (cli/privileges.c) in the other thread, and keeps only these.
 */
static void jvm_mapper__restrict_caps(void)
{
	static const int keep[] = { CAP_KILL,		CAP_CHOWN,	CAP_SETUID,
				    CAP_SETGID,		CAP_SYS_PTRACE, CAP_DAC_OVERRIDE,
				    CAP_DAC_READ_SEARCH };
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t mask = 0, permitted;

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		mask |= 1ULL << keep[i];
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_capget, &hdr, data)) {
		pr_debug("jvm: cannot drop capabilities: %s", strerror(errno));
		return;
	}
	permitted = (data[0].permitted | (uint64_t)data[1].permitted << 32) & mask;
	/* The bounding set too, as the other thread's (EINVAL: a capability the kernel lacks). */
	if ((data[0].permitted | (uint64_t)data[1].permitted << 32) & (1ULL << CAP_SETPCAP))
		for (int cap = 0; cap < 64; cap++)
			if (!(mask & (1ULL << cap)))
				prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	data[0].effective = data[0].permitted = (uint32_t)permitted;
	data[1].effective = data[1].permitted = (uint32_t)(permitted >> 32);
	data[0].inheritable = data[1].inheritable = 0;
	if (syscall(SYS_capset, &hdr, data))
		pr_debug("jvm: cannot drop capabilities: %s", strerror(errno));
}

static void *jvm_mapper__thread(void *arg)
{
	struct jvm_mapper *jm = arg;

	jvm_mapper__restrict_caps();
	pthread_mutex_lock(&jm->lock);
	while (!jm->stopping) {
		uint64_t next;
		ssize_t i = jvm_mapper__pick(jm, clock_ns(CLOCK_MONOTONIC), &next);
		struct jvm j;

		if (i < 0) {
			uint64_t now = clock_ns(CLOCK_MONOTONIC), real = clock_ns(CLOCK_REALTIME);
			struct timespec ts;

			real += next == UINT64_MAX ? 1000 * NS_PER_MS : next > now ? next - now : 0;

			ts.tv_sec = real / 1000000000;
			ts.tv_nsec = real % 1000000000;
			pthread_cond_timedwait(&jm->wake, &jm->lock, &ts);
			continue;
		}
		j = jm->jvms[i];
		pthread_mutex_unlock(&jm->lock);
		jvm__request(&j);
		pthread_mutex_lock(&jm->lock);
		/* A final request asked for while this one ran is still to come. */
		if (j.final || !jvm__askable(&j))
			j.final = false;
		else
			j.final = jm->jvms[i].final;
		jm->jvms[i] = j;
		pthread_cond_broadcast(&jm->done);
	}
	pthread_mutex_unlock(&jm->lock);
	return NULL;
}

struct jvm_mapper *jvm_mapper__new(void)
{
	struct jvm_mapper *jm = calloc(1, sizeof(*jm));
	pthread_condattr_t attr;
	int err;

	if (!jm)
		return NULL;
	pthread_mutex_init(&jm->lock, NULL);
	pthread_cond_init(&jm->wake, NULL);
	/* finish() waits by the monotonic clock; the thread by the real one. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&jm->done, &attr);
	pthread_condattr_destroy(&attr);
	/* Now, while the process still has the capabilities the thread keeps. */
	err = pthread_create(&jm->thread, NULL, jvm_mapper__thread, jm);
	if (err) {
		jvm_mapper__free(jm);
		errno = err;
		return NULL;
	}
	jm->started = true;
	return jm;
}

void jvm_mapper__free(struct jvm_mapper *jm)
{
	if (!jm)
		return;
	if (jm->started) {
		pthread_mutex_lock(&jm->lock);
		jm->stopping = true;
		pthread_cond_signal(&jm->wake);
		pthread_mutex_unlock(&jm->lock);
		pthread_join(jm->thread, NULL);
	}
	pthread_cond_destroy(&jm->done);
	pthread_cond_destroy(&jm->wake);
	pthread_mutex_destroy(&jm->lock);
	free(jm->jvms);
	free(jm);
}

void jvm_mapper__see(struct jvm_mapper *jm, const struct proc_maps *maps)
{
	struct jvm *j = NULL;

	if (!jm || !jvm__is_jvm(maps))
		return;
	pthread_mutex_lock(&jm->lock);
	if (jm->finishing)
		goto out_unlock;
	for (size_t i = 0; i < jm->nr; i++)
		if (jm->jvms[i].pid == maps->pid)
			j = &jm->jvms[i];
	/* A JVM that exited, its pid taken by a new one. */
	if (j && j->state == JVM_GONE)
		*j = (struct jvm){ .pid = maps->pid, .state = JVM_NEW };
	if (j)
		goto out_unlock;
	if (array__reserve(&jm->jvms, &jm->alloc, jm->nr + 1, sizeof(*jm->jvms))) {
		pr_debug("jvm: pid %d: cannot track: %s", maps->pid, strerror(ENOMEM));
		goto out_unlock;
	}
	jm->jvms[jm->nr++] = (struct jvm){ .pid = maps->pid, .state = JVM_NEW };
	pr_debug("jvm: pid %d runs a JVM: asking for its perf map", maps->pid);
	pthread_cond_signal(&jm->wake);
out_unlock:
	pthread_mutex_unlock(&jm->lock);
}

void jvm_mapper__finish(struct jvm_mapper *jm, uint64_t timeout_ns)
{
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + timeout_ns,
		 start = clock_ns(CLOCK_MONOTONIC);
	struct timespec ts = { .tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000 };
	size_t nr = 0;
	bool waiting = true;

	if (!jm)
		return;
	pthread_mutex_lock(&jm->lock);
	jm->finishing = true;
	for (size_t i = 0; i < jm->nr; i++)
		if (jvm__askable(&jm->jvms[i]) && alive(jm->jvms[i].pid)) {
			jm->jvms[i].final = true;
			nr++;
		}
	pthread_cond_signal(&jm->wake);
	while (waiting) {
		waiting = false;
		for (size_t i = 0; i < jm->nr; i++)
			waiting |= jm->jvms[i].final;
		if (waiting && pthread_cond_timedwait(&jm->done, &jm->lock, &ts) == ETIMEDOUT)
			break;
	}
	/* What is still under way ends on its own bound, before jvm_mapper__free() returns. */
	jm->stopping = true;
	pthread_cond_signal(&jm->wake);
	pthread_mutex_unlock(&jm->lock);
	if (nr)
		pr_info("jvm: final perf map requests: %zu, %s in %.1f ms", nr,
			waiting ? "not all answered" : "answered",
			(clock_ns(CLOCK_MONOTONIC) - start) / 1e6);
}
