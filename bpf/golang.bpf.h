/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * golang.bpf.h - the pprof labels of the goroutine a sample interrupted, in
 * the Go programs user space put in `go_procs` (collector/golang.c): the
 * thread's g from its thread-local storage, its m's current goroutine
 * (the thread may be on its g0, running the scheduler or a system call for
 * it), and that goroutine's labels pointer, which is all a record carries:
 * user space reads the labels it points at, which Go never changes once
 * set (pprof.WithLabels makes a new set). Four reads of user memory.
 */
#ifndef PROFILER_BPF_GOLANG_BPF_H
#define PROFILER_BPF_GOLANG_BPF_H

#include "bpf/common.bpf.h"

/* Set by user space once a process is in go_procs: until then, no lookup per sample. */
volatile bool go_loaded;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_GO_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct go_proc);
} go_procs SEC(".maps");

/* The labels of the goroutine process @tgid's current thread runs, or 0. */
static __always_inline __u64 go_labels(__u32 tgid)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task;
	const struct go_proc *go;
	__u64 g, m, curg, labels;

	if (!go_loaded || !(go = bpf_map_lookup_elem(&go_procs, &tgid)))
		return 0;
	task = bpf_get_current_task_btf();
	if (bpf_probe_read_user(&g, sizeof(g), (void *)(task->thread.fsbase + go->tls_off)) || !g ||
	    bpf_probe_read_user(&m, sizeof(m), (void *)(g + go->g_m)) || !m ||
	    bpf_probe_read_user(&curg, sizeof(curg), (void *)(m + go->m_curg)) || !curg ||
	    bpf_probe_read_user(&labels, sizeof(labels), (void *)(curg + go->g_labels)))
		return 0;
	return labels;
#else
	return 0;
#endif
}

#endif
