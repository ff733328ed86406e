/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jvm.h - perf maps of HotSpot JVMs (JDK 17+), asked for without JVM flags.
 *
 * A JVM names its compiled methods in /tmp/perf-PID.map when asked to
 * through its attach socket (the diagnostic command Compiler.perfmap). The
 * jvm_mapper asks every JVM the collector sees (a process that maps
 * libjvm.so): when it is first seen; again after JVM_FIRST_REFRESH_NS,
 * then twice as long each time, up to every JVM_REFRESH_NS while it lives
 * (compiled code comes and goes, and a command may exit before the
 * recording ends); and once more by jvm_mapper__finish() at the end.
 *
 * A map the user gave is left alone: a JVM whose perf map exists before we
 * first ask (an agent writes it, or a flag) is never asked, and its map is
 * never touched. Once we asked (the JVM got the request, whether we got its
 * answer or not), the map is ours and later requests rewrite it; the
 * mapper removes it when it ends (jvm_mapper__free()), or an hour after
 * the JVM exited (profiler serve runs for days; the symbolizer reads the
 * map of a JVM gone before the end), if it is still the file the JVM wrote
 * at our last request. A JVM is its pid and its start time: a new process
 * of that pid is a new JVM. A map we caused is
 * thus gone before the next recording, which would otherwise take it for
 * the user's and never ask again.
 *
 * Asking means creating a trigger file (as the JVM's user, in a /tmp that
 * is root's and sticky or the user's own) and sending SIGQUIT to a JVM
 * whose attach listener is not running yet, then waiting for its socket,
 * and it
 * needs capabilities the recording drops once sampling is attached: the
 * requests run in a process of their own, the mapper, which
 * jvm_mapper__new() forks before the drop and which keeps only those
 * capabilities. The collector's calls only send it a pid, or ask for the
 * final requests, over a socket pair; the collector's process keeps no
 * capability of the mapper's and no thread. The mapper checks what it is
 * sent (a pid it signals must map libjvm.so, by its own look at
 * /proc/PID/maps), and the collector checks its reply: neither trusts the
 * other. It connects as the JVM's user (the JVM checks its peer's uid and
 * gid) by changing its effective ids for the connect() alone, to a socket
 * that is that user's (never through a symbolic link), and never waits
 * past a request's time for a JVM that does not accept. A failure is
 * logged at debug level and the JVM is asked no more; it is never fatal.
 * The mapper logs through the callback it inherits (common/log.h), to the
 * same stderr. When the collector's end of the socket closes it removes
 * the maps it caused and exits; it dies with the collector's process too,
 * leaving them.
 *
 * Thread-safety: call jvm_mapper__see() and jvm_mapper__finish() from one
 * thread (the collector's). jvm_mapper__new() forks: call it before the
 * process starts threads, from the thread that runs the recording to its
 * end (the mapper dies with that thread: PR_SET_PDEATHSIG).
 */
#ifndef PROFILER_JVM_H
#define PROFILER_JVM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_maps;
struct jvm_mapper;
struct runtime_ops;
struct stat;

/* How often a live JVM is asked again. */
#define JVM_REFRESH_NS (2ULL * 1000 * 1000 * 1000)
/* ... after the first answer: then twice as long each time, up to JVM_REFRESH_NS. */
#define JVM_FIRST_REFRESH_NS (100ULL * 1000 * 1000)

/*
 * Forks the mapper process, which keeps of the caller's capabilities only
 * those asking other users' JVMs needs (CAP_KILL, CAP_SETUID, CAP_SETGID,
 * CAP_SYS_PTRACE, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), in its bounding
 * set too, with no-new-privileges and no supplementary group, and closes
 * every descriptor it inherits but stderr: create it before dropping the
 * process's capabilities. NULL and errno on failure.
 */
struct jvm_mapper *jvm_mapper__new(void);

/*
 * Closes the socket, on which the mapper gives up the request under way
 * (removing a trigger file it made), removes the perf maps it caused, and
 * exits, and reaps it: killed (SIGKILL) if it has not exited within a
 * second, its maps left then. The maps it asked for are gone afterwards:
 * call it only once they are no longer needed, after the profile was
 * symbolized and written.
 */
void jvm_mapper__free(struct jvm_mapper *jm);

/*
 * A new snapshot of a process's maps: if it maps libjvm.so, send its pid to
 * the mapper, which asks a JVM it does not know yet. Cheap: a scan of the
 * mappings and a send() that never waits; a pid that cannot be sent (the
 * mapper is behind by hundreds, or gone) is counted, and logged at debug
 * level.
 */
void jvm_mapper__see(struct jvm_mapper *jm, const struct proc_maps *maps);

/*
 * The end of a recording: the mapper asks each JVM still alive once more
 * and replies how many it asked and how many answered; wait for that reply
 * at most @timeout_ns. No periodic request follows, and later calls of
 * jvm_mapper__see() and jvm_mapper__finish() do nothing.
 */
void jvm_mapper__finish(struct jvm_mapper *jm, uint64_t timeout_ns);

/*
 * Whether a JVM's /tmp, @st (an fstat() of it, opened through its
 * /proc/PID/root: a mount namespace its user may control), may hold the
 * trigger file the mapper creates there as the JVM's effective uid @uid:
 * a directory owned by root and sticky, or owned by @uid and sticky or
 * writable by no one else. Not another user's, nor root's where the sticky
 * bit does not protect what is in it.
 */
bool jvm__tmp_ok(const struct stat *st, uid_t uid);

/*
 * Open the JVM's attach socket @name in @dir (O_PATH, never following a
 * symbolic link), if it is what jcmd accepts: a socket owned by the JVM's
 * effective uid @uid, that no one else may read or write. A descriptor to
 * connect through (/proc/self/fd/N), or a negative errno: -ELOOP (a
 * symbolic link), -ENOTSOCK, -EPERM (another owner, or group or other
 * access), or openat()'s.
 */
int jvm__open_socket(int dir, const char *name, uid_t uid);

/* Whether @maps map libjvm.so: a HotSpot JVM. */
bool jvm__is_jvm(const struct proc_maps *maps);

/*
 * The same of the text of a /proc/PID/maps file (executable file mappings
 * only, as in a snapshot): the mapper's own check of a pid it is sent.
 */
bool jvm__maps_text_is_jvm(const char *text);

/*
 * The policy on the user's maps: whether to ask a JVM for its perf map,
 * given whether the map exists and whether we asked that JVM before.
 */
bool jvm__may_ask(bool map_exists, bool asked_before);

/*
 * The policy on removing a map we caused: whether the file @now (an
 * lstat(), never following a symbolic link) is still the map the JVM wrote
 * at our last request, which was inode @ino of device @dev (0: none), and
 * owned by the JVM's effective uid @uid. A regular file only.
 */
bool jvm__may_remove(const struct stat *now, dev_t dev, ino_t ino, uid_t uid);

/* The plug-in that asks the JVMs it sees for their perf maps (runtime.h). */
extern const struct runtime_ops jvm_runtime;

#endif
