/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pprof.h - write a profile in pprof's protobuf format (profile.proto).
 *
 * The output is a CPU profile as the Go runtime writes one:
 *
 *   sample_type          [["samples","count"], ["cpu","nanoseconds"]]
 *   period_type, period  ["cpu","nanoseconds"], p->period_ns
 *   default_sample_type  "cpu"
 *   time_nanos           p->start_time
 *   duration_nanos       p->duration
 *   comment              "profiler: N samples at F Hz", "lost samples: N",
 *                        "truncated stacks: N", "stack read errors: N" (always all four)
 *
 * Each struct profile_sample becomes one Sample with values [count, count * period_ns],
 * location ids leaf first, num labels "pid" and "tid" and str labels "thread",
 * "process" and "cmdline" (the latter three only when the name or command line
 * is known).
 *
 * An allocation profile (PROFILE_ALLOC) is a heap profile as the Go runtime
 * writes one, which `go tool pprof` reads as such (-sample_index=alloc_space
 * ...): sample_type [["alloc_objects","count"], ["alloc_space","bytes"],
 * ["inuse_objects","count"], ["inuse_space","bytes"]], inuse_space the
 * default, period_type ["space","bytes"] and period p->alloc_rate; a
 * sample's values are its alloc figures (blocks, bytes, end_blocks,
 * end_bytes: live at the end is "inuse"), and a str label "kind", "heap" or
 * "mmap", on every sample (-tagfocus=kind=heap gives the heap's figures).
 *
 * There is one Mapping per distinct `struct profile_mapping *`, one Location per
 * distinct `struct profile_frame *` (with a single Line, line 0, until the
 * symbolizer reports lines and inlined frames) and one Function per distinct
 * (name, system name, source file); a frame without a system name is its own
 * system name, so an unresolved frame "libfoo.so+0x1234" shows under that name.
 * Ids count from 1 and strings are numbered, after string_table[0] = "", in the
 * order in which a walk of the samples in array order (each stack leaf first)
 * first meets them, except that the first main-binary mapping met takes id 1
 * (pprof names mapping[0] as the profile's binary). Nothing is written in hash order, so the same profile
 * (after profile__sort()) always gives the same bytes.
 *
 * With @p->kernel_offsets, the kernel's mapping starts at 0 and each kernel
 * Location's address is its offset from the mapping's start (_text).
 *
 * Neither function modifies @p or keeps a pointer into it. Both return 0 or a
 * negative errno (-ENOMEM; -EIO or the stdio errno when @out fails) and log only
 * unexpected zlib failures. Thread-safe as long as @p is not being modified.
 */
#ifndef PROFILER_EXPORT_PPROF_H
#define PROFILER_EXPORT_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;

/*
 * Encode @p as an uncompressed protobuf Profile. On success *@buf is a
 * malloc()ed buffer of *@len bytes that the caller frees; on failure both are
 * left untouched.
 */
int pprof__encode(const struct profile *p, uint8_t **buf, size_t *len);

/*
 * Write @p to @out gzip-compressed, the form pprof tools expect in a .pb.gz
 * file. The gzip header carries no timestamp or name, so identical profiles
 * give identical files. @out is neither flushed nor closed: with a buffered
 * stream, a write error may only show at the caller's fflush() or fclose().
 */
int pprof__write(const struct profile *p, FILE *out);

#endif
