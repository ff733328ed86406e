// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "metrics.h"

void metrics__family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* @label="@value", the value escaped as the format asks (a backslash, a quote, a newline). */
static void put_label(FILE *out, const char *label, const char *value)
{
	fprintf(out, "%s=\"", label);
	for (const char *c = value; *c; c++) {
		if (*c == '\\' || *c == '"')
			fputc('\\', out);
		if (*c == '\n')
			fputs("\\n", out);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

static void put_value(FILE *out, double v)
{
	/* Counts print whole, as exactly as a double holds them; times with 9 digits. */
	if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, " %.0f\n", v);
	else
		fprintf(out, " %.9g\n", v);
}

void metrics__sample(FILE *out, const char *name, const char *label, const char *value, double v)
{
	fputs(name, out);
	if (label) {
		fputc('{', out);
		put_label(out, label, value);
		fputc('}', out);
	}
	put_value(out, v);
}

void metrics__sample2(FILE *out, const char *name, const char *label1, const char *value1,
		      const char *label2, const char *value2, double v)
{
	fprintf(out, "%s{", name);
	put_label(out, label1, value1);
	fputc(',', out);
	put_label(out, label2, value2);
	fputc('}', out);
	put_value(out, v);
}

void metrics__one(FILE *out, const char *name, const char *type, const char *help, double v)
{
	metrics__family(out, name, type, help);
	metrics__sample(out, name, NULL, NULL, v);
}
