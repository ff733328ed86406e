// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/procfs.h"
#include "options.h"
#include "platform.h"
#include "record.h"
#include "serve.h"
#include "status_line.h"
#include "symbolize.h"
#include "version.h"

static int verbosity;

/*
 * Escaped (log_write_escaped()): a message may quote bytes a target chose.
 * One write of the whole line, which the JVM helper's lines do not cut.
 */
static void print_log(enum log_level level, const char *fmt, va_list args)
{
	char *msg, *line = NULL;
	size_t len = 0;
	FILE *out;

	if ((level == LOG_INFO && verbosity < 1) || (level == LOG_DEBUG && verbosity < 2))
		return;
	if (vasprintf(&msg, fmt, args) < 0)
		return;
	out = open_memstream(&line, &len);
	if (out) {
		fputs("profiler: ", out);
		log_write_escaped(out, msg);
		fputc('\n', out);
	}
	if (out && !fclose(out)) {
		status_line__clear();
		fwrite(line, 1, len, stderr);
	}
	free(line);
	free(msg);
}

/*
 * libbpf's warnings repeat our own one-line errors in detail: show them with
 * -v. Whole, a line of ours per line of theirs: a verifier's log, which says
 * why a program was refused at its end, runs to many kilobytes. Its other
 * messages (about 1,900 lines of loading the program) only with -vvv, so
 * that -vv's are ours.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char *buf, *line, *save = NULL;

	if (level != LIBBPF_WARN && verbosity < 3)
		return 0;
	if (vasprintf(&buf, fmt, args) < 0) {
		log_printf(LOG_DEBUG, "a libbpf message, out of memory: %s", fmt);
		return 0;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		log_printf(level == LIBBPF_WARN ? LOG_INFO : LOG_DEBUG, "%s", line);
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
	if (platform__check(err, sizeof(err))) {
		fprintf(stderr, "profiler: %s\n", err);
		options__release(&o);
		return 1;
	}
	ret = o.serve ? serve(&o) : record(&o);
	options__release(&o);
	return ret;
}
