/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python.h - Python frames in the stacks of processes running CPython.
 *
 * At each snapshot of a process's maps, python__snapshot() looks for a
 * CPython interpreter among its files (python3.X or libpython3.X.so, by
 * name, with the _PyRuntime and _PyEval_EvalFrameDefault symbols) and,
 * for a supported release, tells the BPF program where its runtime is
 * and how it is laid out (python_procs). From then on records of the
 * process carry the sampled thread's Python frames (struct python_frame).
 *
 * python__merge() names those frames, reading each code object once per
 * process (python_code.h), and puts them in the user stack in place of the
 * interpreter's C frames that ran them: each _PyEval_EvalFrameDefault
 * frame stands for the Python frames its call ran, innermost first, down
 * to the first one (PY_FRAME_ENTRY). C functions that Python code called
 * stay above their caller; C that called Python stays below. A frame's
 * address is its (name, file, line) in a py_frames table, which the
 * symbolizer names.
 *
 * Code objects are cached by process and address, and checked against the
 * first line number the BPF program read with each frame: one freed and
 * replaced by another at the same address with another first line is read
 * again. Names read stay when the process exits, so its last records are
 * named. Not thread-safe.
 */
#ifndef PROFILER_PYTHON_H
#define PROFILER_PYTHON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct elf_cache;
struct proc_maps;
struct py_frames;
struct runtime_ops;
struct sample_event;

struct python_stats {
	uint64_t processes;   /* processes whose Python frames were read */
	uint64_t unsupported; /* ... running a release this profiler cannot read */
	uint64_t samples;     /* records with Python frames */
	uint64_t code_reads;  /* code objects read */
	uint64_t unnamed;     /* Python frames whose code object could not be read */
	uint64_t truncated;   /* records whose Python stack was cut short (with frames or not) */
};

struct python;

/*
 * @procs_fd: the BPF program's python_procs map. Names go to @frames,
 * which must outlive it. NULL and errno on failure.
 */
struct python *python__new(struct elf_cache *elves, int procs_fd, struct py_frames *frames);
void python__free(struct python *py);

/* Has a process ever been put in the BPF program's map (so that samples look for theirs)? */
bool python__loaded(const struct python *py);

/*
 * Process @pid exec'd: whatever it ran is gone, though a new interpreter may
 * be the same file at the same place (a non-PIE python3.11 re-exec'ing
 * itself), with other code objects at the addresses of the old ones.
 */
void python__exec(struct python *py, pid_t pid);

/* Look at @maps, a new snapshot of its process's maps, for an interpreter. */
void python__snapshot(struct python *py, const struct proc_maps *maps);

/*
 * Put @e's Python frames in its user stack, named, in place of the
 * interpreter frames that ran them. 0 or -ENOMEM.
 */
int python__merge(struct python *py, struct sample_event *e);

/*
 * Forget the processes for which @alive(pid, @arg) does not hold: their
 * names, and their entries in the BPF map.
 */
void python__retain(struct python *py, bool (*alive)(pid_t pid, void *arg), void *arg);

void python__stats(const struct python *py, struct python_stats *stats);

/* The plug-in that reads CPython's frames (runtime.h). */
extern const struct runtime_ops python_runtime;

#endif
