/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export_test.h - what the exporters' unit tests share (defined in
 * test_pprof.c): one hand-built profile, and running an exporter into a
 * string or onto a full disk.
 */
#ifndef PROFILER_EXPORT_TEST_H
#define PROFILER_EXPORT_TEST_H

#include <stddef.h>
#include <stdio.h>

struct profile;

/*
 * The profile every exporter is tested on: user and kernel frames, two
 * processes and three threads, a frame of a mapping without symbols, a
 * frame without a mapping, a C++ frame whose system name differs, a sample
 * without frames, a process whose name has a space, and command lines:
 * two processes of one name run with different ones, and one whose command
 * line is unknown. @order, if not
 * NULL, is a permutation of 0..EXPORT_TEST_SAMPLES-1 giving the order in
 * which samples are added. NULL on ENOMEM.
 */
#define EXPORT_TEST_SAMPLES 8
struct profile *export_test_profile(const unsigned int *order);

typedef int (*export_write_fn)(const struct profile *p, FILE *out);

/* @write's output for @p in a malloc()ed string, its length in *@lenp (may be NULL); NULL on failure. */
char *export_test_string(export_write_fn write, const struct profile *p, size_t *lenp);

/*
 * What @write returns writing the test profile to /dev/full, unbuffered so
 * that the write itself fails: -ENOSPC when it reports the error; 1 when
 * the test could not be set up.
 */
int export_test_write_full(export_write_fn write);

#endif
