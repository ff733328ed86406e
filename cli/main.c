// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "options.h"
#include "record.h"

static int verbosity;

static void print_log(enum log_level level, const char *fmt, va_list args)
{
	if ((level == LOG_INFO && verbosity < 1) || (level == LOG_DEBUG && verbosity < 2))
		return;
	fputs("profiler: ", stderr);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

/* The kernel's limit on -F, or 0 if it cannot be read. */
static unsigned int max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned int rate = 0;

	if (f) {
		if (fscanf(f, "%u", &rate) != 1)
			rate = 0;
		fclose(f);
	}
	return rate;
}

int main(int argc, char **argv)
{
	struct options o;
	char err[512];
	int ret;

	log_set_print(print_log);
	if (options__parse(&o, argc, argv, max_sample_rate(), err, sizeof(err))) {
		fprintf(stderr, "profiler: %s (see --help)\n", err);
		options__release(&o);
		return 2;
	}
	if (o.help) {
		fputs(options_usage, stdout);
		options__release(&o);
		return 0;
	}
	verbosity = o.verbose;
	ret = record(&o);
	options__release(&o);
	return ret;
}
