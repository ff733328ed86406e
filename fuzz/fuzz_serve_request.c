// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a client of profiler serve controls: a request's method, path and
 * "seconds" and "format" values (the input's first four NUL-separated
 * fields; libmicrohttpd has decoded them), through http_route(); the whole
 * input as a --listen HOST:PORT through http_split_address(); and as a
 * /proc/PID/cgroup, which a process's cgroup names (a container's
 * orchestrator picks them), through procfs__parse_cgroup(). A route is one
 * of the six, a profile asks for 1 to 300 s in a known format, an error
 * says why in one line; an address is split into a host that fits and a
 * port from 0 to 65535; a cgroup path is the returned length and one line.
 */
#include <stdbool.h>

#include "common/procfs.h"
#include "fuzz.h"
#include "serve/http.h"

static int fuzz_serve_request(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *field[4] = { NULL };
	char why[160], host[64], port[8], cgroup[32];
	struct scrape s = { 0 };
	enum http_route r;
	size_t at = 0, n;

	if (!text)
		return 0;
	fuzz_log_init();
	memcpy(text, data, size);
	text[size] = '\0';
	for (int i = 0; i < 4 && at <= size; i++) {
		field[i] = text + at;
		at += strlen(field[i]) + 1;
	}
	why[0] = '\0';
	r = http_route(field[0], field[1] ? field[1] : "", field[2], field[3], &s, why,
		       sizeof(why));
	FUZZ_CHECK(r <= HTTP_BAD_METHOD);
	if (r == HTTP_PROFILE) {
		FUZZ_CHECK(s.seconds >= 1 && s.seconds <= HTTP_MAX_SECONDS);
		FUZZ_CHECK(s.format != EXPORT_NONE);
	}
	if (r >= HTTP_BAD_REQUEST)
		FUZZ_CHECK(why[0] && strlen(why) < sizeof(why));

	if (!http_split_address(text, host, sizeof(host), port, sizeof(port))) {
		FUZZ_CHECK(strlen(host) < sizeof(host) && host[0]);
		FUZZ_CHECK(strtoul(port, NULL, 10) <= 65535);
	}

	n = procfs__parse_cgroup(text, cgroup, sizeof(cgroup));
	FUZZ_CHECK(n == strlen(cgroup) && n < sizeof(cgroup));
	FUZZ_CHECK(!strchr(cgroup, '\n'));
	free(text);
	return 0;
}

FUZZ_TARGET(fuzz_serve_request)
