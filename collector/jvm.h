/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jvm.h - perf maps of HotSpot JVMs (JDK 17+), asked for without JVM flags.
 *
 * A JVM names its compiled methods in /tmp/perf-PID.map when asked to
 * through its attach socket (the diagnostic command Compiler.perfmap). The
 * jvm_mapper asks every JVM the collector sees (a process that maps
 * libjvm.so): when it is first seen, again every JVM_REFRESH_NS while it
 * lives (compiled code comes and goes, and a command may exit before the
 * recording ends), and once more by jvm_mapper__finish() at the end.
 *
 * A map the user gave is left alone: a JVM whose perf map exists before we
 * first ask (an agent writes it, or a flag) is never asked. Once we asked,
 * the map is ours and later requests rewrite it.
 *
 * Asking means creating a trigger file and sending SIGQUIT to a JVM whose
 * attach listener is not running yet, then waiting for its socket, so the
 * requests run on a thread of the mapper's own: the collector's calls only
 * queue work. It connects as the JVM's user (the JVM checks its peer's
 * uid and gid) by changing that thread's effective ids for the connect()
 * alone. A failure is logged at debug level and the JVM is asked no
 * more; it is never fatal.
 *
 * Thread-safety: jvm_mapper__see() and jvm_mapper__finish() may be called
 * from one thread (the collector's), concurrently with the mapper's own.
 */
#ifndef PROFILER_JVM_H
#define PROFILER_JVM_H

#include <stdbool.h>
#include <stdint.h>

struct proc_maps;
struct jvm_mapper;

/* How often a live JVM is asked again. */
#define JVM_REFRESH_NS (2ULL * 1000 * 1000 * 1000)

/*
 * Starts the mapper's thread, which keeps of the caller's capabilities only
 * those asking other users' JVMs needs (CAP_KILL, CAP_CHOWN, CAP_SETUID,
 * CAP_SETGID, CAP_SYS_PTRACE, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
 * create it before dropping the process's. NULL and errno on failure.
 */
struct jvm_mapper *jvm_mapper__new(void);

/* Stops the thread, waiting for the request under way (each is bounded). */
void jvm_mapper__free(struct jvm_mapper *jm);

/*
 * A new snapshot of a process's maps: if it runs a JVM not known yet, queue
 * its first request. Cheap: a scan of the mappings and a lock.
 */
void jvm_mapper__see(struct jvm_mapper *jm, const struct proc_maps *maps);

/*
 * The end of a recording: ask each JVM still alive once more, and wait for
 * their answers, at most @timeout_ns. No periodic request follows.
 */
void jvm_mapper__finish(struct jvm_mapper *jm, uint64_t timeout_ns);

/* Whether @maps map libjvm.so: a HotSpot JVM. */
bool jvm__is_jvm(const struct proc_maps *maps);

/*
 * The policy on the user's maps: whether to ask a JVM for its perf map,
 * given whether the map exists and whether we asked that JVM before.
 */
bool jvm__may_ask(bool map_exists, bool asked_before);

#endif
