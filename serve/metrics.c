// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>

#include "metrics.h"

void metrics__family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics__sample(FILE *out, const char *name, const char *label, const char *value, double v)
{
	fputs(name, out);
	if (label)
		fprintf(out, "{%s=\"%s\"}", label, value);
	/* Counts print whole, as exactly as a double holds them; times with 9 digits. */
	if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, " %.0f\n", v);
	else
		fprintf(out, " %.9g\n", v);
}

void metrics__one(FILE *out, const char *name, const char *type, const char *help, double v)
{
	metrics__family(out, name, type, help);
	metrics__sample(out, name, NULL, NULL, v);
}
