// SPDX-License-Identifier: GPL-2.0-only
/*
 * profiler serve's parts that need no network: routing a request, splitting
 * --listen, the Prometheus text, and the queue between HTTP threads and the
 * sampling thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/http.h"
#include "serve/metrics.h"
#include "serve/scrape.h"
#include "test.h"

static enum http_route route(const char *method, const char *path, const char *seconds,
			     const char *format, struct scrape *s)
{
	char why[160];

	memset(s, 0, sizeof(*s));
	return http_route(method, path, seconds, format, s, why, sizeof(why));
}

/* go tool pprof's default request, and each format, as Go's pprof handler names them. */
TEST(serve_route_profile)
{
	struct scrape s;

	CHECK_U64(route("GET", "/debug/pprof/profile", NULL, NULL, &s), HTTP_PROFILE);
	CHECK_U64(s.seconds, 30);
	CHECK_U64(s.format, EXPORT_PPROF);
	CHECK_U64(route("GET", "/debug/pprof/profile", "1", "folded", &s), HTTP_PROFILE);
	CHECK_U64(s.seconds, 1);
	CHECK_U64(s.format, EXPORT_FOLDED);
	CHECK_U64(route("HEAD", "/debug/pprof/profile", "300", "svg", &s), HTTP_PROFILE);
	CHECK_U64(s.seconds, 300);
	CHECK_U64(s.format, EXPORT_SVG);
	CHECK_U64(route("GET", "/debug/pprof/profile", "15", "firefox", &s), HTTP_PROFILE);
	CHECK_U64(s.format, EXPORT_FIREFOX);
	CHECK_U64(route("GET", "/metrics", NULL, NULL, &s), HTTP_METRICS);
	CHECK_U64(route("GET", "/debug/pprof/", NULL, NULL, &s), HTTP_INDEX);
	CHECK_U64(route("GET", "/", NULL, NULL, &s), HTTP_INDEX);
}

/* seconds out of 1..300 or not a whole number, an unknown format, path or method. */
TEST(serve_route_rejects)
{
	static const char *const bad_seconds[] = { "0",	  "301", "",
						   "abc", "-5",	 "1e3",
						   "3.5", " 3",	 "99999999999999999999" };
	struct scrape s;
	char why[160];

	for (size_t i = 0; i < sizeof(bad_seconds) / sizeof(bad_seconds[0]); i++) {
		memset(&s, 0, sizeof(s));
		CHECK_U64(http_route("GET", "/debug/pprof/profile", bad_seconds[i], NULL, &s, why,
				     sizeof(why)),
			  HTTP_BAD_REQUEST);
		CHECK(strstr(why, "seconds="));
	}
	CHECK_U64(http_route("GET", "/debug/pprof/profile", "5", "xml", &s, why, sizeof(why)),
		  HTTP_BAD_REQUEST);
	CHECK(strstr(why, "format=xml"));
	/* A format the agent's profiles cannot be written in: DHAT's, of allocations. */
	CHECK_U64(http_route("GET", "/debug/pprof/profile", "5", "dhat", &s, why, sizeof(why)),
		  HTTP_BAD_REQUEST);
	CHECK(strstr(why, "format=dhat"));
	CHECK_U64(http_route("GET", "/debug/pprof/profile", "5", "svg", &s, why, sizeof(why)),
		  HTTP_PROFILE);
	CHECK_U64(route("GET", "/debug/pprof/heap", NULL, NULL, &s), HTTP_NOT_FOUND);
	CHECK_U64(route("GET", "/debug/pprof/profile/", NULL, NULL, &s), HTTP_NOT_FOUND);
	CHECK_U64(route("POST", "/debug/pprof/profile", NULL, NULL, &s), HTTP_BAD_METHOD);
	CHECK_U64(route("DELETE", "/metrics", NULL, NULL, &s), HTTP_BAD_METHOD);
	/* An unknown path is 404 whatever the method. */
	CHECK_U64(route("POST", "/nope", NULL, NULL, &s), HTTP_NOT_FOUND);
}

TEST(serve_split_address)
{
	char host[64], port[8];

	CHECK(!http_split_address("127.0.0.1:7071", host, sizeof(host), port, sizeof(port)));
	CHECK_STR(host, "127.0.0.1");
	CHECK_STR(port, "7071");
	CHECK(!http_split_address("[::1]:0", host, sizeof(host), port, sizeof(port)));
	CHECK_STR(host, "::1");
	CHECK_STR(port, "0");
	CHECK(!http_split_address("localhost:65535", host, sizeof(host), port, sizeof(port)));
	CHECK_STR(host, "localhost");
	CHECK(http_split_address("7071", host, sizeof(host), port, sizeof(port)));
	CHECK(http_split_address(":7071", host, sizeof(host), port, sizeof(port)));
	CHECK(http_split_address("127.0.0.1:", host, sizeof(host), port, sizeof(port)));
	CHECK(http_split_address("127.0.0.1:65536", host, sizeof(host), port, sizeof(port)));
	CHECK(http_split_address("127.0.0.1:http", host, sizeof(host), port, sizeof(port)));
	CHECK(http_split_address("[::1:7071", host, sizeof(host), port, sizeof(port)));
	CHECK(http_split_address("[]:7071", host, sizeof(host), port, sizeof(port)));
	CHECK(http_split_address(
		"averyveryveryveryveryveryveryveryveryveryveryveryveryverylonghost:1", host, 16,
		port, sizeof(port)));
}

/* HELP and TYPE before the samples; counts whole, times with their fraction. */
TEST(serve_bearer_token)
{
	CHECK(http_authorized("Bearer s3cret", "s3cret"));
	CHECK(http_authorized("bearer   s3cret  ", "s3cret"));
	CHECK(!http_authorized(NULL, "s3cret"));
	CHECK(!http_authorized("", "s3cret"));
	CHECK(!http_authorized("Bearer ", "s3cret"));
	CHECK(!http_authorized("Bearer s3cre", "s3cret"));
	CHECK(!http_authorized("Bearer s3crets", "s3cret"));
	CHECK(!http_authorized("Bearer S3cret", "s3cret"));
	CHECK(!http_authorized("Basic s3cret", "s3cret"));
	CHECK(!http_authorized("Bearers3cret", "s3cret"));
}

TEST(serve_metrics_text)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CHECK(out);
	if (!out)
		return;
	metrics__one(out, "a_total", "counter", "A count.", 12345678901.0);
	metrics__family(out, "b_seconds_total", "counter", "Time.");
	metrics__sample(out, "b_seconds_total", "program", "sample", 0.25);
	metrics__sample(out, "b_seconds_total", "program", "sched_switch", 0);
	/* Label values are the format's strings: a quote, a backslash and a newline escaped. */
	metrics__sample2(out, "c_total", "id", "7", "name", "a\"b\\c\nd", 3);
	fclose(out);
	CHECK_STR(text, "# HELP a_total A count.\n"
			"# TYPE a_total counter\n"
			"a_total 12345678901\n"
			"# HELP b_seconds_total Time.\n"
			"# TYPE b_seconds_total counter\n"
			"b_seconds_total{program=\"sample\"} 0.25\n"
			"b_seconds_total{program=\"sched_switch\"} 0\n"
			"c_total{id=\"7\",name=\"a\\\"b\\\\c\\nd\"} 3\n");
	free(text);
}

struct submitter {
	struct scrape_queue *q;
	struct scrape s;
	volatile bool gone; /* the client hung up */
	bool answered;
};

static bool submitter_gone(void *arg)
{
	struct submitter *t = arg;

	return t->gone;
}

static void *submit(void *arg)
{
	struct submitter *t = arg;

	t->answered = scrape_queue__submit_wait(t->q, &t->s, submitter_gone, t);
	return NULL;
}

/* Scrapes pending after this many 1 ms waits; for the sampling thread's side. */
static size_t wait_pending(struct scrape_queue *q, size_t n)
{
	size_t seen = 0;

	for (int i = 0; i < 5000 && seen < n; i++) {
		pthread_mutex_lock(&q->lock);
		seen = 0;
		for (struct scrape *s = q->pending; s; s = s->next)
			seen++;
		pthread_mutex_unlock(&q->lock);
		if (seen < n) {
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
		}
	}
	return seen;
}

/*
 * A scrape waits for the sampling thread's answer; past the queue's size a
 * scrape is refused with a 503 at once; once stopped, those waiting get a
 * 503 and so does any new one.
 */
TEST(serve_scrape_queue)
{
	struct scrape_queue q;
	struct submitter t[3];
	pthread_t th[3];
	struct scrape *taken, extra = { .kind = SCRAPE_PROFILE };

	CHECK(!scrape_queue__init(&q, 2));
	for (int i = 0; i < 2; i++) {
		t[i] = (struct submitter){ .q = &q,
					   .s = { .kind = SCRAPE_PROFILE, .seconds = i + 1 } };
		CHECK(!pthread_create(&th[i], NULL, submit, &t[i]));
	}
	CHECK_U64(wait_pending(&q, 2), 2);
	/* The third is one too many. */
	scrape_queue__submit_wait(&q, &extra, NULL, NULL);
	CHECK_U64(extra.status, 503);
	CHECK(extra.body && strstr(extra.body, "try again"));
	free(extra.body);

	/* The sampling thread answers the first it took; the other waits on. */
	taken = scrape_queue__take(&q);
	CHECK(taken && taken->next && !taken->next->next);
	if (!taken)
		return;
	scrape__answer_text(taken, 200, "answer %u", taken->seconds);
	scrape_queue__answer(&q, taken);
	CHECK(!pthread_join(taken == &t[0].s ? th[0] : th[1], NULL));
	CHECK_U64(taken->status, 200);
	CHECK(taken->len == strlen("answer 1\n") || taken->len == strlen("answer 2\n"));

	/* Stopping: the one taken and not answered is the sampling thread's to answer. */
	t[2] = (struct submitter){ .q = &q, .s = { .kind = SCRAPE_METRICS } };
	CHECK(!pthread_create(&th[2], NULL, submit, &t[2]));
	CHECK_U64(wait_pending(&q, 1), 1);
	scrape_queue__stop(&q);
	CHECK(!pthread_join(th[2], NULL));
	CHECK_U64(t[2].s.status, 503);
	scrape__answer_text(taken->next, 503, "stopping");
	scrape_queue__answer(&q, taken->next);
	CHECK(!pthread_join(taken == &t[0].s ? th[1] : th[0], NULL));
	extra = (struct scrape){ .kind = SCRAPE_METRICS };
	scrape_queue__submit_wait(&q, &extra, NULL, NULL);
	CHECK_U64(extra.status, 503);
	for (int i = 0; i < 3; i++)
		free(t[i].s.body);
	free(extra.body);
	scrape_queue__release(&q);
}

/*
 * A client that hangs up frees its slot: at once while its scrape waits to
 * be taken, once the sampling thread drops it when taken. Metrics take no
 * slot, and get the metrics kept last when the sampling thread is busy.
 */
TEST(serve_scrape_abandoned)
{
	struct scrape_queue q;
	struct submitter t[2] = { { .q = &q, .s = { .kind = SCRAPE_PROFILE, .seconds = 300 } },
				  { .q = &q, .s = { .kind = SCRAPE_PROFILE, .seconds = 300 } } };
	struct scrape *taken, m = { .kind = SCRAPE_METRICS }, kept = { .kind = SCRAPE_METRICS };
	pthread_t th[2];
	struct timespec a, b;

	CHECK(!scrape_queue__init(&q, 1));
	CHECK(!pthread_create(&th[0], NULL, submit, &t[0]));
	CHECK_U64(wait_pending(&q, 1), 1);
	/* Positive precondition: the one slot is taken. */
	CHECK(pthread_mutex_lock(&q.lock) == 0);
	CHECK_U64(q.nr_open, 1);
	pthread_mutex_unlock(&q.lock);

	/* Pending, then its client leaves: given up, unanswered, its slot free. */
	t[0].gone = true;
	CHECK(!pthread_join(th[0], NULL));
	CHECK(!t[0].answered);
	CHECK_U64(q.nr_open, 0);
	CHECK(!scrape_queue__take(&q));

	/* Taken, then its client leaves: the sampling thread sees it and answers. */
	CHECK(!pthread_create(&th[1], NULL, submit, &t[1]));
	CHECK_U64(wait_pending(&q, 1), 1);
	taken = scrape_queue__take(&q);
	CHECK(taken == &t[1].s);
	CHECK(!scrape_queue__abandoned(&q, taken));
	t[1].gone = true;
	for (int i = 0; i < 5000 && !scrape_queue__abandoned(&q, taken); i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	CHECK(scrape_queue__abandoned(&q, taken));
	scrape__answer_text(taken, 499, "the client left");
	scrape_queue__answer(&q, taken);
	CHECK(!pthread_join(th[1], NULL));
	CHECK(!t[1].answered);
	CHECK_U64(q.nr_open, 0);
	free(t[1].s.body);

	/* Nobody takes it: a metrics scrape gets what was kept, within its wait. */
	scrape__answer_text(&kept, 200, "kept_total 1");
	scrape_queue__keep_metrics(&q, &kept);
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK(scrape_queue__submit_wait(&q, &m, NULL, NULL));
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK_U64(m.status, 200);
	CHECK(m.body && m.len == kept.len && !memcmp(m.body, kept.body, m.len));
	CHECK(b.tv_sec - a.tv_sec <= 2);
	CHECK(!scrape_queue__take(&q));
	free(m.body);
	free(kept.body);
	scrape_queue__release(&q);
}
