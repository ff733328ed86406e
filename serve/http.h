/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * http.h - the agent's HTTP endpoints, over GNU libmicrohttpd.
 *
 * Paths as Go's net/http/pprof has them, so scrapers written for Go
 * programs (Parca, Grafana Alloy, go tool pprof) work unchanged:
 *
 *   GET /debug/pprof/profile?seconds=N[&format=F]  a profile (scrape.h)
 *   GET /debug/pprof/ (and /)                      an index page
 *   GET /metrics                                   Prometheus's text format
 *
 * Anything else is 404, another method 405, a bad argument 400, each with
 * a one-line text body naming the cause. Requests are served from threads
 * of the library's, one per connection: a request line and headers of at
 * most HTTP_MAX_REQUEST_BYTES, and a client idle for HTTP_IDLE_TIMEOUT_S
 * is disconnected.
 *
 * Local clients are not trusted to be kind. A connection that has not sent
 * a whole request within HTTP_HEADERS_TIMEOUT_S of opening (or of its last
 * answer) is closed, however slowly it trickles bytes, and so is one that
 * has not read its answer within HTTP_SEND_TIMEOUT_S. At most
 * HTTP_MAX_CONNECTIONS connections, HTTP_MAX_CONNECTIONS_PER_IP from one
 * address: a connection past either limit closes the one waiting longest
 * for its request or reading its answer (the slowest client, never one
 * whose answer is being made), and is refused only when there is none. A
 * client that hangs up while its profile is recorded frees its slot
 * (scrape.h).
 *
 * With a token (--token-file), every request must carry it as
 * "Authorization: Bearer TOKEN", as Parca's and Alloy's scrape configs send
 * it (bearer_token_file); one without it, or with another, is 401.
 */
#ifndef PROFILER_HTTP_H
#define PROFILER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scrape.h"

/* A profile covers 1 to this many seconds; go tool pprof asks for 30 by default. */
#define HTTP_MAX_SECONDS 300
#define HTTP_DEFAULT_SECONDS 30
#define HTTP_MAX_REQUEST_BYTES (16 * 1024)
#define HTTP_MAX_CONNECTIONS 32
#define HTTP_MAX_CONNECTIONS_PER_IP 16
#define HTTP_IDLE_TIMEOUT_S 15
#define HTTP_HEADERS_TIMEOUT_S 5
#define HTTP_SEND_TIMEOUT_S 30

/* What a request asks for. */
enum http_route {
	HTTP_PROFILE, /* a scrape of kind SCRAPE_PROFILE */
	HTTP_METRICS,
	HTTP_INDEX,
	HTTP_BAD_REQUEST, /* 400 */
	HTTP_NOT_FOUND,	  /* 404 */
	HTTP_BAD_METHOD,  /* 405 */
};

/*
 * Route a request: @method, @path (without the query), and the query's
 * "seconds" and "format" values (NULL when absent). For HTTP_PROFILE,
 * @s->seconds and @s->format are set; for an error, @why says it in one
 * line. Does no I/O.
 */
enum http_route http_route(const char *method, const char *path, const char *seconds,
			   const char *format, struct scrape *s, char *why, size_t size);

/* Responses by status, for the metrics: these, and the rest as "other". */
enum http_status_index {
	HTTP_STATUS_200,
	HTTP_STATUS_400,
	HTTP_STATUS_401,
	HTTP_STATUS_404,
	HTTP_STATUS_405,
	HTTP_STATUS_500,
	HTTP_STATUS_503,
	HTTP_STATUS_OTHER,
	NR_HTTP_STATUSES,
};
extern const char *const http_status_names[NR_HTTP_STATUSES];

/*
 * Split "HOST:PORT" (an IPv4 address or a name, or [IPv6]; a port from 0
 * to 65535) into @host, without brackets, and @port. 0 or -EINVAL.
 */
int http_split_address(const char *spec, char *host, size_t host_size, char *port,
		       size_t port_size);

/* The longest token a token file may hold. */
#define HTTP_MAX_TOKEN_BYTES 1024

/*
 * Read the token of the file @path: its first line, blanks around it left
 * out, of printable ASCII and no blank (RFC 6750's token68 and more), at
 * most HTTP_MAX_TOKEN_BYTES. Into *@token (malloc()ed), and 0; else -1
 * with a one-line reason in @why. A file that others than its owner may
 * read is used, with a warning: any of them can scrape.
 */
int http_read_token(const char *path, char **token, char *why, size_t size);

/* Does @authorization (a request's header, or NULL) carry "Bearer @token"? */
bool http_authorized(const char *authorization, const char *token);

struct http_server;

/*
 * Listen on @listen ("HOST:PORT": an IPv4 address, [IPv6] or a name; port 0
 * for any free one) and serve, submitting scrapes to @q; with @token (not
 * NULL), to requests that carry it. Returns NULL with a one-line reason in
 * @why.
 */
struct http_server *http_server__start(const char *listen, const char *token,
				       struct scrape_queue *q, char *why, size_t size);
/* Stop listening and wait for the requests being answered (stop @q first). */
void http_server__stop(struct http_server *h);
/* The address listened on, as "127.0.0.1:7071" or "[::1]:7071". */
const char *http_server__address(const struct http_server *h);
/*
 * Connections closed by the agent so far: slow to send a request, or made
 * room for past a limit. Thread-safe.
 */
uint64_t http_server__closed(struct http_server *h);
/* Responses sent so far, by status. Thread-safe. */
void http_server__responses(struct http_server *h, uint64_t counts[NR_HTTP_STATUSES]);

#endif
