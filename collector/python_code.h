/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python_code.h - CPython code objects, read out of a running process: the
 * name, file and line table the BPF program's Python frames (struct
 * python_frame) are named with, and the line of a frame's instruction.
 *
 * Nothing read is trusted: a code object's fields, strings and line table
 * are bounded and checked, so that memory that is not what the offsets say
 * (a freed object, a corrupt chain) gives an error, never a crash or a
 * read without end.
 */
#ifndef PROFILER_PYTHON_CODE_H
#define PROFILER_PYTHON_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/profile.h"

/*
 * The longest name and file name (in characters: up to 4 bytes each in
 * UTF-8) and line table (in bytes) read; longer ones are refused.
 */
#define PY_CODE_MAX_STRING 4096
#define PY_CODE_MAX_LINETABLE (1 << 20)

struct py_code {
	char *qualname;	     /* UTF-8: co_qualname (3.11+), else co_name */
	char *filename;	     /* UTF-8: co_filename */
	int32_t firstlineno; /* co_firstlineno */
	uint8_t *linetable;  /* co_linetable's bytes */
	size_t linetable_len;
};

/*
 * Read the code object at @addr of process @pid, laid out as @off says,
 * into @code (owned by the caller: py_code__release()). 0, or -errno:
 * -ESRCH the process is gone, -EFAULT memory that cannot be read, -EINVAL
 * what is there is not a code object as @off describes one (a string that
 * is not one, a length out of bounds), -ENOMEM. Strings are CPython's
 * compact ones, converted to UTF-8; a lone surrogate (a file name decoded
 * with surrogateescape) becomes U+FFFD. On error @code holds nothing.
 */
int py_code__read(pid_t pid, const struct python_offsets *off, uint64_t addr, struct py_code *code);
void py_code__release(struct py_code *code);

/*
 * The byte offset, from the first instruction of code object @code_addr,
 * of a frame's instruction as python_frame.instr records it (its
 * PY_FRAME_LINE_SHIFT bits masked off or not): 3.10's f_lasti counts
 * instructions, 3.11+ record a pointer. Negative: the frame has not
 * started (no instruction yet).
 */
int64_t py_code__offset(const struct python_offsets *off, uint64_t code_addr, uint64_t instr);

/*
 * The line of the instruction at byte offset @offset of @code, by its line
 * table in @off's release's format; @code->firstlineno for a negative
 * offset, 0 when the table gives none there.
 */
uint32_t py_code__line(const struct python_offsets *off, const struct py_code *code,
		       int64_t offset);

/* The two table formats, for tests: 3.10's co_linetable, and 3.11+'s locations. */
uint32_t py_linetable_310(const uint8_t *table, size_t len, int32_t firstlineno, int64_t offset);
uint32_t py_locations(const uint8_t *table, size_t len, int32_t firstlineno, int64_t offset);

#endif
