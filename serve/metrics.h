/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * metrics.h - Prometheus's text exposition format (version 0.0.4), written
 * one metric family at a time: its HELP and TYPE lines, then its samples.
 */
#ifndef PROFILER_METRICS_H
#define PROFILER_METRICS_H

#include <stdint.h>
#include <stdio.h>

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A family's header. @type is "counter" or "gauge"; @help is one line, no backslash. */
void metrics__family(FILE *out, const char *name, const char *type, const char *help);
/* A sample of the family just begun: @label="@value" when @label is not NULL. */
void metrics__sample(FILE *out, const char *name, const char *label, const char *value, double v);
/* A sample of the family just begun, of two labels: @label1="@value1",@label2="@value2". */
void metrics__sample2(FILE *out, const char *name, const char *label1, const char *value1,
		      const char *label2, const char *value2, double v);
/* A family of one sample, no labels. */
void metrics__one(FILE *out, const char *name, const char *type, const char *help, double v);

#endif
