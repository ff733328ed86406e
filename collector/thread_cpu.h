/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * thread_cpu.h - each thread's time on CPU during a recording, as the
 * scheduler counted it: what the BPF program's sched_switch handler adds
 * up in its `oncpu` map (with --wall), read once sampling stopped. Exact
 * where samples only estimate, it apportions a thread's wall time.
 */
#ifndef PROFILER_THREAD_CPU_H
#define PROFILER_THREAD_CPU_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_map;
struct thread_cpu;

/*
 * Read @oncpu, threads still on CPU counted up to @stop_ns (CLOCK_MONOTONIC).
 * NULL and errno on failure.
 */
struct thread_cpu *thread_cpu__read(const struct bpf_map *oncpu, uint64_t stop_ns);
void thread_cpu__free(struct thread_cpu *t);

/*
 * The time on CPU of thread @tid of @pid into *@ns; false when it is not
 * known (the map was full, or the thread never left its CPU): it then
 * keeps the time of its samples.
 */
bool thread_cpu__get(const struct thread_cpu *t, uint32_t pid, uint32_t tid, uint64_t *ns);

#endif
