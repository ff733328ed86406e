// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/log.h"
#include "http.h"

const char *const http_status_names[NR_HTTP_STATUSES] = {
	"200", "400", "401", "404", "405", "500", "503", "other",
};

/* clang-format off */
static const char index_html[] =
"<!DOCTYPE html>\n"
"<html><head><meta charset=\"utf-8\"><title>profiler serve</title></head><body>\n"
"<h1>profiler serve</h1>\n"
"<p>Profiles of this machine, sampled continuously, for Parca, Grafana\n"
"Pyroscope or <code>go tool pprof</code> to pull.</p>\n"
"<ul>\n"
"<li><a href=\"/debug/pprof/profile?seconds=30\">/debug/pprof/profile?seconds=30</a>:\n"
"the next 30 seconds (1 to 300) as gzipped pprof; add\n"
"<code>&amp;format=folded</code>, <code>svg</code> or <code>firefox</code>\n"
"for another format\n"
"(<a href=\"/debug/pprof/profile?seconds=5&amp;format=svg\">a 5 s flame graph</a>)</li>\n"
"<li><a href=\"/metrics\">/metrics</a>: the agent's counters, in Prometheus's text format</li>\n"
"</ul>\n"
"</body></html>\n";
/* clang-format on */

/* Is @s a whole number from 1 to HTTP_MAX_SECONDS? Into *@out. */
static bool parse_seconds(const char *s, uint32_t *out)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 6)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
	}
	if (v < 1 || v > HTTP_MAX_SECONDS)
		return false;
	*out = v;
	return true;
}

enum http_route http_route(const char *method, const char *path, const char *seconds,
			   const char *format, struct scrape *s, char *why, size_t size)
{
	bool profile = !strcmp(path, "/debug/pprof/profile");

	if (!profile && strcmp(path, "/metrics") && strcmp(path, "/debug/pprof/") &&
	    strcmp(path, "/debug/pprof") && strcmp(path, "/")) {
		snprintf(why, size,
			 "no such page: the profiles are at /debug/pprof/profile, the metrics at "
			 "/metrics");
		return HTTP_NOT_FOUND;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		snprintf(why, size, "method %.32s not allowed: use GET", method);
		return HTTP_BAD_METHOD;
	}
	if (!profile)
		return strcmp(path, "/metrics") ? HTTP_INDEX : HTTP_METRICS;
	s->kind = SCRAPE_PROFILE;
	s->seconds = HTTP_DEFAULT_SECONDS;
	if (seconds && !parse_seconds(seconds, &s->seconds)) {
		snprintf(why, size, "seconds=%.32s: expected a whole number from 1 to %d", seconds,
			 HTTP_MAX_SECONDS);
		return HTTP_BAD_REQUEST;
	}
	s->format = format ? export_format__from_name(format) : EXPORT_PPROF;
	/* DHAT's format holds allocations, which the agent does not record. */
	if (s->format == EXPORT_NONE || s->format == EXPORT_DHAT) {
		snprintf(why, size, "format=%.32s: expected pprof, folded, svg or firefox", format);
		return HTTP_BAD_REQUEST;
	}
	return HTTP_PROFILE;
}

/* A client's address, without its port: what the per-address limit counts. */
struct client_key {
	sa_family_t family;
	uint8_t addr[16];
};

enum conn_state {
	CONN_WAITING,	/* for a whole request: opened, or its last answer sent */
	CONN_ANSWERING, /* a whole request came: its answer is being made */
	CONN_SENDING,	/* the answer is being sent */
};

/* A connection, from its opening to its closing (the library's socket context). */
struct http_conn {
	int fd;
	struct client_key client;
	enum conn_state state;
	uint64_t since_ns; /* in @state since */
	bool evicted;	   /* shut down by us: closing */
	struct http_conn *prev, *next;
};

struct http_server {
	struct MHD_Daemon *daemon;
	struct scrape_queue *queue;
	const char *token; /* what requests must carry, or NULL */
	char address[INET6_ADDRSTRLEN + 16];
	pthread_mutex_t lock; /* for everything below */
	uint64_t responses[NR_HTTP_STATUSES];
	unsigned int in_flight; /* requests begun and not yet answered in full */
	struct http_conn *conns; /* open, newest first */
	uint64_t evicted;	 /* connections closed for being slow or one too many */
	/* The thread that closes connections slow to send a request. */
	pthread_t reaper;
	pthread_cond_t wake;
	bool reaper_started, stopping;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void client_key(const struct sockaddr *sa, struct client_key *k)
{
	memset(k, 0, sizeof(*k));
	if (!sa)
		return;
	k->family = sa->sa_family;
	if (sa->sa_family == AF_INET)
		memcpy(k->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(k->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

static bool same_client(const struct client_key *a, const struct client_key *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* Close @c (its thread sees the end of the stream and lets it go). Under the lock. */
static void evict(struct http_server *h, struct http_conn *c, const char *why)
{
	c->evicted = true;
	h->evicted++;
	shutdown(c->fd, SHUT_RDWR);
	pr_debug("http: closed a connection %s", why);
}

/*
 * The connection waiting longest for its request or sending its answer
 * (the slowest client, or one kept alive and idle the longest), never one
 * whose answer is being made, from @client or (NULL) from anyone, and how
 * many connections, not closing, there are from there. Under the lock.
 */
static struct http_conn *oldest_waiting(struct http_server *h, const struct client_key *client,
					unsigned int *count)
{
	struct http_conn *oldest = NULL;

	*count = 0;
	for (struct http_conn *c = h->conns; c; c = c->next) {
		if (c->evicted || (client && !same_client(&c->client, client)))
			continue;
		++*count;
		if (c->state != CONN_ANSWERING && (!oldest || c->since_ns <= oldest->since_ns))
			oldest = c;
	}
	return oldest;
}

/*
 * MHD_AcceptPolicyCallback: a new connection past a limit makes room by
 * closing the oldest one waiting for a request, from its address first;
 * refused when all are being answered.
 */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct http_server *h = cls;
	struct client_key k;
	struct http_conn *c;
	unsigned int n;
	enum MHD_Result ret = MHD_YES;

	(void)len;
	client_key(addr, &k);
	pthread_mutex_lock(&h->lock);
	c = oldest_waiting(h, &k, &n);
	if (n >= HTTP_MAX_CONNECTIONS_PER_IP) {
		if (c)
			evict(h, c, "waiting for a request: its address opened one too many");
		else
			ret = MHD_NO;
	}
	c = oldest_waiting(h, NULL, &n);
	if (ret == MHD_YES && n >= HTTP_MAX_CONNECTIONS) {
		if (c)
			evict(h, c, "waiting for a request: one connection too many");
		else
			ret = MHD_NO;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/* MHD_NotifyConnectionCallback: a connection opens or closes. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *h = cls;
	struct http_conn *c = *socket_context;
	const union MHD_ConnectionInfo *fd, *addr;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		c = calloc(1, sizeof(*c));
		if (!c || !fd) {
			free(c);
			return; /* not tracked: no limit nor timeout applies, as before */
		}
		c->fd = fd->connect_fd;
		client_key(addr ? addr->client_addr : NULL, &c->client);
		c->since_ns = now_ns();
		pthread_mutex_lock(&h->lock);
		c->next = h->conns;
		if (h->conns)
			h->conns->prev = c;
		h->conns = c;
		pthread_mutex_unlock(&h->lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&h->lock);
	free(c);
	*socket_context = NULL;
}

static struct http_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* How often the reaper looks for connections slow to send a request. */
#define HTTP_REAP_INTERVAL_MS 250

/*
 * The reaper thread: close each connection waiting for a request longer than
 * HTTP_HEADERS_TIMEOUT_S, or sending its answer longer than HTTP_SEND_TIMEOUT_S.
 */
static void *reap(void *arg)
{
	struct http_server *h = arg;
	struct timespec next;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		uint64_t now = now_ns();

		for (struct http_conn *c = h->conns; c; c = c->next)
			if (!c->evicted && c->state == CONN_WAITING &&
			    now - c->since_ns > HTTP_HEADERS_TIMEOUT_S * 1000000000ULL)
				evict(h, c, "slow to send its request");
			else if (!c->evicted && c->state == CONN_SENDING &&
				 now - c->since_ns > HTTP_SEND_TIMEOUT_S * 1000000000ULL)
				evict(h, c, "slow to read its answer");
		clock_gettime(CLOCK_MONOTONIC, &next);
		next.tv_nsec += HTTP_REAP_INTERVAL_MS * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->wake, &h->lock, &next);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* @c (NULL: not tracked) is in @state from now. */
static void set_state(struct http_server *h, struct http_conn *c, enum conn_state state)
{
	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	c->state = state;
	c->since_ns = now_ns();
	pthread_mutex_unlock(&h->lock);
}

/* scrape_queue__submit_wait()'s question: has the client hung up? */
static bool client_gone(void *ctx)
{
	struct http_conn *c = ctx;
	struct pollfd p = { .fd = c->fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* How long stopping waits for the answers being sent (a 503 to a scrape, say). */
#define HTTP_STOP_WAIT_MS 2000

static void count_response(struct http_server *h, unsigned int status)
{
	static const unsigned int codes[HTTP_STATUS_OTHER] = { 200, 400, 401, 404, 405, 500, 503 };
	int i = 0;

	while (i < HTTP_STATUS_OTHER && codes[i] != status)
		i++;
	pthread_mutex_lock(&h->lock);
	h->responses[i]++;
	pthread_mutex_unlock(&h->lock);
}

uint64_t http_server__closed(struct http_server *h)
{
	uint64_t closed;

	pthread_mutex_lock(&h->lock);
	closed = h->evicted;
	pthread_mutex_unlock(&h->lock);
	return closed;
}

void http_server__responses(struct http_server *h, uint64_t counts[NR_HTTP_STATUSES])
{
	pthread_mutex_lock(&h->lock);
	memcpy(counts, h->responses, sizeof(h->responses));
	pthread_mutex_unlock(&h->lock);
}

/* Send @s's answer (taking its body), or a 500 when it has none (out of memory). */
static enum MHD_Result respond(struct http_server *h, struct MHD_Connection *conn, struct scrape *s)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned int status = s->body ? s->status : 500;

	if (s->body)
		r = MHD_create_response_from_buffer(s->len, s->body, MHD_RESPMEM_MUST_FREE);
	else
		r = MHD_create_response_from_buffer(strlen("out of memory\n"), "out of memory\n",
						    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(s->body);
		s->body = NULL;
		return MHD_NO;
	}
	s->body = NULL;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == s->status && s->content_type ?
					s->content_type :
					"text/plain; charset=utf-8");
	if (status == 200 && s->kind == SCRAPE_PROFILE && s->format == EXPORT_PPROF)
		MHD_add_response_header(r, "Content-Disposition",
					"attachment; filename=\"profile\"");
	if (status == 405)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == 401)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"profiler\"");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	count_response(h, status);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	static int headers_seen;
	struct http_server *h = cls;
	struct http_conn *c = conn_of(conn);
	struct scrape s = { .status = 200 };
	bool answered = true;
	char why[160];

	(void)version;
	(void)upload_data;
	/* The first call has the headers only: answer once the request is whole. */
	if (!*con_cls) {
		*con_cls = &headers_seen;
		pthread_mutex_lock(&h->lock);
		h->in_flight++;
		pthread_mutex_unlock(&h->lock);
		return MHD_YES;
	}
	/*
	 * A GET has no body to read: what a client sends anyway is dropped,
	 * and until it is all there the connection is still waiting for its
	 * request (a body trickled a byte at a time is as slow as headers).
	 */
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	set_state(h, c, CONN_ANSWERING);
	if (h->token &&
	    !http_authorized(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_AUTHORIZATION),
			     h->token)) {
		scrape__answer_text(&s, 401, "this agent answers requests with its token only: "
					     "send 'Authorization: Bearer TOKEN'");
		set_state(h, c, CONN_SENDING);
		return respond(h, conn, &s);
	}
	switch (http_route(method, url,
			   MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds"),
			   MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "format"), &s,
			   why, sizeof(why))) {
	case HTTP_PROFILE:
		answered = scrape_queue__submit_wait(h->queue, &s, c ? client_gone : NULL, c);
		break;
	case HTTP_METRICS:
		s.kind = SCRAPE_METRICS;
		answered = scrape_queue__submit_wait(h->queue, &s, c ? client_gone : NULL, c);
		break;
	case HTTP_INDEX:
		s.content_type = "text/html; charset=utf-8";
		s.body = strdup(index_html);
		s.len = s.body ? strlen(s.body) : 0;
		break;
	case HTTP_BAD_REQUEST:
		scrape__answer_text(&s, 400, "%s", why);
		break;
	case HTTP_NOT_FOUND:
		scrape__answer_text(&s, 404, "%s", why);
		break;
	case HTTP_BAD_METHOD:
		scrape__answer_text(&s, 405, "%s", why);
		break;
	}
	/* The client left: nobody to answer. */
	if (!answered) {
		free(s.body);
		return MHD_NO;
	}
	set_state(h, c, CONN_SENDING);
	return respond(h, conn, &s);
}

/* A request's answer was sent, or its connection closed: it is no longer in flight. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct http_server *h = cls;
	struct http_conn *c = conn_of(conn);

	(void)why;
	if (!*con_cls)
		return;
	*con_cls = NULL;
	pthread_mutex_lock(&h->lock);
	h->in_flight--;
	pthread_mutex_unlock(&h->lock);
	/* Kept alive: waiting for its next request from now. */
	set_state(h, c, CONN_WAITING);
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
	char buf[256];
	size_t len;

	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	pr_debug("http: %s", buf);
}

int http_split_address(const char *spec, char *host, size_t host_size, char *port, size_t port_size)
{
	const char *colon = strrchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : 0;
	unsigned long n;
	char *end;

	if (!colon || !len || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -EINVAL;
	n = strtoul(colon + 1, &end, 10);
	if (n > 65535)
		return -EINVAL;
	/* [::1]: the brackets only keep the address's colons apart from the port's. */
	if (spec[0] == '[') {
		if (len < 3 || spec[len - 1] != ']')
			return -EINVAL;
		spec++;
		len -= 2;
	}
	if (len >= host_size)
		return -EINVAL;
	memcpy(host, spec, len);
	host[len] = '\0';
	snprintf(port, port_size, "%lu", n);
	return 0;
}

/*
 * A listening socket for "HOST:PORT" into *@fd, its address as bound into
 * @h->address. 0, or -1 with the reason in @why.
 */
static int open_listener(struct http_server *h, const char *listen_on, int *fd, char *why,
			 size_t size)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	struct sockaddr_storage bound;
	socklen_t len = sizeof(bound);
	char host[256], port[8], bhost[INET6_ADDRSTRLEN], bport[8];
	int one = 1, err;

	if (http_split_address(listen_on, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, size, "invalid --listen '%s': expected HOST:PORT", listen_on);
		return -1;
	}
	err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		snprintf(why, size, "cannot listen on '%s': %s", listen_on,
			 err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err));
		return -1;
	}
	*fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(*fd, res->ai_addr, res->ai_addrlen) || listen(*fd, 64) ||
	    getsockname(*fd, (struct sockaddr *)&bound, &len) ||
	    getnameinfo((struct sockaddr *)&bound, len, bhost, sizeof(bhost), bport, sizeof(bport),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(why, size, "cannot listen on '%s': %s%s", listen_on, strerror(errno),
			 errno == EADDRINUSE ? ": another program has that port, choose "
					       "another with --listen" :
					       "");
		if (*fd >= 0)
			close(*fd);
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	snprintf(h->address, sizeof(h->address), bound.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		 bhost, bport);
	return 0;
}

int http_read_token(const char *path, char **token, char *why, size_t size)
{
	char buf[HTTP_MAX_TOKEN_BYTES + 2];
	const char *start;
	struct stat st;
	size_t len;
	ssize_t n;
	int fd;

	/* Not blocking: a FIFO in its place is refused, not waited on. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(why, size, "cannot read --token-file '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, size, "cannot read --token-file '%s': not a regular file", path);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(why, size, "cannot read --token-file '%s': %s", path, strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (start = buf; *start == ' ' || *start == '\t'; start++)
		;
	len = strlen(start);
	while (len && (start[len - 1] == ' ' || start[len - 1] == '\t' || start[len - 1] == '\r'))
		len--;
	if (!len || len > HTTP_MAX_TOKEN_BYTES) {
		snprintf(why, size,
			 "--token-file '%s' holds no token: put one of 1 to %d characters on "
			 "its first line",
			 path, HTTP_MAX_TOKEN_BYTES);
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		if (start[i] <= ' ' || start[i] > '~') {
			snprintf(why, size,
				 "--token-file '%s': its token has a blank or a character that is "
				 "not printable ASCII, which no header can carry",
				 path);
			return -1;
		}
	*token = strndup(start, len);
	if (!*token) {
		snprintf(why, size, "cannot read --token-file '%s': %s", path, strerror(errno));
		return -1;
	}
	if (st.st_mode & 0077)
		pr_warn("--token-file '%s' may be read by others than its owner (mode %04o): "
			"any of them can scrape; chmod 600 it",
			path, (unsigned int)(st.st_mode & 07777));
	return 0;
}

bool http_authorized(const char *authorization, const char *token)
{
	size_t len = strlen(token), n;
	unsigned char diff;

	if (!authorization || strncasecmp(authorization, "Bearer ", 7))
		return false;
	authorization += 7;
	while (*authorization == ' ')
		authorization++;
	n = strlen(authorization);
	while (n && (authorization[n - 1] == ' ' || authorization[n - 1] == '\t'))
		n--;
	/* Every byte of the token compared, whatever differs first: no timing to learn it by. */
	diff = n != len;
	for (size_t i = 0; i < len; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < n ? authorization[i] : 0);
	return !diff;
}

struct http_server *http_server__start(const char *listen_on, const char *token,
				       struct scrape_queue *q, char *why, size_t size)
{
	struct http_server *h = calloc(1, sizeof(*h));
	pthread_condattr_t attr;
	int fd, err;

	if (!h) {
		snprintf(why, size, "cannot start the HTTP server: %s", strerror(errno));
		return NULL;
	}
	h->queue = q;
	h->token = token;
	pthread_mutex_init(&h->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&h->wake, &attr);
	pthread_condattr_destroy(&attr);
	if (open_listener(h, listen_on, &fd, why, size))
		goto out_free;
	h->daemon = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_ERROR_LOG | MHD_USE_ITC,
		0, on_accept, h, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, h, MHD_OPTION_LISTEN_SOCKET, fd,
		/* The library's limits leave room for the connections on_accept() is closing. */
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNECTIONS * 2,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNECTIONS_PER_IP * 2,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MAX_REQUEST_BYTES, MHD_OPTION_END);
	if (!h->daemon) {
		snprintf(why, size, "cannot start the HTTP server on %s", h->address);
		close(fd);
		goto out_free;
	}
	err = pthread_create(&h->reaper, NULL, reap, h);
	if (err) {
		snprintf(why, size, "cannot start the HTTP server: %s", strerror(err));
		MHD_stop_daemon(h->daemon);
		close(fd);
		goto out_free;
	}
	h->reaper_started = true;
	return h;

out_free:
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

void http_server__stop(struct http_server *h)
{
	unsigned int left = 1;
	int fd;

	if (!h)
		return;
	/* No new connection; the answers begun are sent in full, if it takes not too long. */
	fd = MHD_quiesce_daemon(h->daemon);
	for (int ms = 0; left && ms < HTTP_STOP_WAIT_MS; ms += 10) {
		pthread_mutex_lock(&h->lock);
		left = h->in_flight;
		pthread_mutex_unlock(&h->lock);
		if (left)
			usleep(10 * 1000);
	}
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
	if (h->reaper_started)
		pthread_join(h->reaper, NULL);
	MHD_stop_daemon(h->daemon);
	if (fd >= 0)
		close(fd);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

const char *http_server__address(const struct http_server *h)
{
	return h->address;
}
