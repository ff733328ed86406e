// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/procfs.h"
#include "options.h"
#include "record.h"
#include "serve.h"
#include "status_line.h"
#include "symbolize.h"
#include "version.h"

static int verbosity;

static void print_log(enum log_level level, const char *fmt, va_list args)
{
	if ((level == LOG_INFO && verbosity < 1) || (level == LOG_DEBUG && verbosity < 2))
		return;
	status_line__clear();
	fputs("profiler: ", stderr);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

/*
 * libbpf's warnings repeat our own one-line errors in detail: show them with
 * -v. Whole: a verifier's log, which says why a program was refused at its
 * end, runs to many kilobytes. Its other messages (about 1,900 lines of
 * loading the program) only with -vvv, so that -vv's are ours.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char *buf;
	size_t len;

	if (level != LIBBPF_WARN && verbosity < 3)
		return 0;
	if (vasprintf(&buf, fmt, args) < 0) {
		log_printf(LOG_DEBUG, "a libbpf message, out of memory: %s", fmt);
		return 0;
	}
	len = strlen(buf);
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	log_printf(level == LIBBPF_WARN ? LOG_INFO : LOG_DEBUG, "%s", buf);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	char err[512];
	long max_rate;
	int ret;

	log_set_print(print_log);
	if (argc > 1 && !strcmp(argv[1], "symbolize"))
		return symbolize_main(argc - 1, argv + 1);
	libbpf_set_print(libbpf_print);
	max_rate = procfs__read_long("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	if (options__parse(&o, argc, argv, max_rate > 0 ? max_rate : 0, err, sizeof(err))) {
		fprintf(stderr, "profiler: %s (see %s--help)\n", err, o.serve ? "serve " : "");
		options__release(&o);
		return 2;
	}
	if (o.help || o.version) {
		if (o.help)
			fputs(o.serve ? serve_usage : options_usage, stdout);
		else
			puts("profiler " PROFILER_VERSION);
		options__release(&o);
		return 0;
	}
	verbosity = o.verbose;
	ret = o.serve ? serve(&o) : record(&o);
	options__release(&o);
	return ret;
}
