/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dhat.h - write an allocation profile (PROFILE_ALLOC) as a DHAT file: the
 * JSON of valgrind's DHAT at file version 2, which DHAT's own viewer
 * (dh_view.html, shipped with valgrind) loads.
 *
 * Header. "mode" "heap" and "verb" "Allocated", as DHAT's heap mode writes
 * them; "bklt" true (lifetimes, peaks and live bytes are known) and "bkacc"
 * false (reads and writes of blocks are not: no "rb", "wb" or "acc"). Time is
 * in microseconds: "tu" "µs" and "Mtu" "s" (10^6 µs), so that the viewer's
 * rates read "bytes/s"; DHAT's own files count instructions. "te" is
 * profile->duration, "tg" profile->alloc_gmax_ns, "tuth" (the viewer's
 * "short-lived" threshold) 1 µs, where DHAT's 500 instructions lie. "cmd"
 * and "pid" name the main process: the one whose heap samples allocated the
 * most bytes (the lowest pid of equals), by its command line, else its name.
 *
 * Program points. One per distinct stack, as DHAT has one per stack of its one
 * process: samples whose frames read the same (the threads of a process, and
 * the processes of a program at the same addresses) are added up, which the
 * viewer requires (it refuses two PPs of one stack). Each PP has "tb"/"tbk"
 * (bytes and blocks allocated), "tl" (their lifetimes added up, µs), "mb"/"mbk"
 * (the stack's own peak; merged samples' peaks are added, an upper bound that
 * keeps mb >= gb), "gb"/"gbk" (live at the global peak) and "eb"/"ebk" (live at
 * the end), from each sample's struct profile_alloc. Only ALLOC_HEAP samples
 * count: anonymous mmaps (ALLOC_MMAP) are not heap blocks, and DHAT leaves
 * them out too.
 *
 * Frames. "fs" lists a PP's frames innermost first, as DHAT does (from the
 * allocation function out), as indexes into "ftbl", whose entry 0 is
 * "[root]". Each entry reads as valgrind describes an address:
 *   "0x4011A6: site70 (alloc_sites.c:21)"       function, file and line
 *   "0x7F01234: g_malloc (in /usr/lib/libglib-2.0.so.0)"   no line known
 *   "0x10C794: ??? (in /usr/bin/ls)"             no symbol
 *   "0xDEADBEEF: ???"                            no mapping
 * the address in uppercase hex, the file without its directory. Code
 * inlined at an address gives one entry per function, innermost first, all at
 * that address, as valgrind reads inline information. A truncated stack ends
 * with "[truncated]", a stack without frames is "[unknown]".
 *
 * Order. PPs are sorted by their frames' text and "ftbl" numbered in the order
 * the sorted PPs first use its entries, so the same samples give the same
 * bytes in any order (the header's cmd takes the first command line of the
 * main process in array order: profile__sort() first). Strings are escaped as
 * JSON requires; bytes that are not UTF-8 become U+FFFD.
 *
 * dhat__write() does not modify @p and returns 0 or a negative errno:
 * -EINVAL, writing nothing, for a profile that is not PROFILE_ALLOC; -ENOMEM;
 * -EIO or the stdio errno when @out fails (part of the output may then have
 * been written). @out is neither flushed nor closed. Thread-safe as long as
 * @p is not being modified.
 */
#ifndef PROFILER_EXPORT_DHAT_H
#define PROFILER_EXPORT_DHAT_H

#include <stdio.h>

struct profile;

/* Write the allocation profile @p as a DHAT file (version 2). */
int dhat__write(const struct profile *p, FILE *out);

#endif
