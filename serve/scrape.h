/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scrape.h - what HTTP clients ask of the agent, handed to the thread that
 * samples.
 *
 * Everything the collector and the symbolizer own is touched by one thread
 * only, the one that drains the ring buffer (neither is thread-safe). An
 * HTTP thread does not profile: it submits a scrape (a profile over the
 * next N seconds, or the metrics now) and waits; the sampling thread takes
 * the pending scrapes after each drain, records each over its own window,
 * writes its answer and wakes the HTTP thread. The queue bounds how many
 * profile scrapes wait or record at once; past that, and once the agent is
 * stopping, a scrape is refused at once. Metrics scrapes take no slot.
 *
 * A waiting HTTP thread asks every SCRAPE_POLL_MS whether its client is
 * still there: one that left gives its scrape up, and its slot is free
 * again at the sampling thread's next drain. A metrics scrape waits at
 * most SCRAPE_METRICS_WAIT_MS (the sampling thread may be busy
 * symbolizing a window); then it gets the last metrics the sampling
 * thread kept.
 */
#ifndef PROFILER_SCRAPE_H
#define PROFILER_SCRAPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/export.h"

enum scrape_kind {
	SCRAPE_PROFILE, /* a profile of the next @seconds */
	SCRAPE_METRICS, /* the counters, now */
};

struct scrape {
	enum scrape_kind kind;
	uint32_t seconds;	   /* SCRAPE_PROFILE */
	enum export_format format; /* SCRAPE_PROFILE */
	/* The answer, set by the sampling thread: */
	unsigned int status;	  /* HTTP status */
	const char *content_type; /* static */
	char *body;		  /* malloc()ed, handed to the HTTP response */
	size_t len;
	/* The queue's: */
	bool done;
	bool abandoned; /* given up while taken: the sampling thread drops it unanswered */
	struct scrape *next;
};

#define SCRAPE_POLL_MS 100
#define SCRAPE_METRICS_WAIT_MS 1000

struct scrape_queue {
	pthread_mutex_t lock;
	pthread_cond_t answered;
	struct scrape *pending; /* submitted, not yet taken: oldest first */
	size_t nr_open;		/* profile scrapes submitted and not answered yet */
	size_t max_open;
	bool stopping; /* no more scrapes: each open one is answered 503 */
	char *metrics; /* the last metrics answered, or NULL: owned */
	size_t metrics_len;
	const char *metrics_type;
};

/* An empty queue taking at most @max_open scrapes at once. 0 or -errno. */
int scrape_queue__init(struct scrape_queue *q, size_t max_open);
void scrape_queue__release(struct scrape_queue *q);

/*
 * From an HTTP thread: hand @s to the sampling thread and wait for its
 * answer. When the queue is full or stopping, @s is answered at once with
 * a 503 and a one-line reason. @gone(@ctx), when not NULL, is asked every
 * SCRAPE_POLL_MS whether the client left: then @s is given up, and this
 * returns false with no answer in @s (once the sampling thread lets go of
 * it, if it had taken it). Otherwise true, with the answer.
 */
bool scrape_queue__submit_wait(struct scrape_queue *q, struct scrape *s, bool (*gone)(void *ctx),
			       void *ctx);

/* From the sampling thread: did @s's client leave? Then drop it, and answer it anyway. */
bool scrape_queue__abandoned(struct scrape_queue *q, const struct scrape *s);

/* From the sampling thread: keep a copy of @s's answer, for a metrics scrape that cannot wait. */
void scrape_queue__keep_metrics(struct scrape_queue *q, const struct scrape *s);

/* From the sampling thread: the scrapes submitted since last asked, oldest first. */
struct scrape *scrape_queue__take(struct scrape_queue *q);
/* ... and each, once its answer is set: wakes its HTTP thread, which owns it again. */
void scrape_queue__answer(struct scrape_queue *q, struct scrape *s);

/*
 * Answer every scrape submitted from now on 503, and wake those waiting
 * in the queue: the sampling thread answers those it took itself.
 */
void scrape_queue__stop(struct scrape_queue *q);

/* Set @s's answer to @status with a text body: "@fmt\n". */
void scrape__answer_text(struct scrape *s, unsigned int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
