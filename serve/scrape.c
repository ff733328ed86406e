// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scrape.h"

int scrape_queue__init(struct scrape_queue *q, size_t max_open)
{
	int err;

	pthread_condattr_t attr;

	*q = (struct scrape_queue){ .max_open = max_open };
	err = pthread_mutex_init(&q->lock, NULL);
	if (err)
		return -err;
	/* Waits are timed on the monotonic clock: setting the date must not stretch them. */
	err = pthread_condattr_init(&attr);
	if (!err) {
		err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		if (!err)
			err = pthread_cond_init(&q->answered, &attr);
		pthread_condattr_destroy(&attr);
	}
	if (err) {
		pthread_mutex_destroy(&q->lock);
		return -err;
	}
	return 0;
}

void scrape_queue__release(struct scrape_queue *q)
{
	pthread_cond_destroy(&q->answered);
	pthread_mutex_destroy(&q->lock);
	free(q->metrics);
}

void scrape__answer_text(struct scrape *s, unsigned int status, const char *fmt, ...)
{
	va_list ap;
	int len;

	free(s->body);
	s->status = status;
	s->content_type = "text/plain; charset=utf-8";
	va_start(ap, fmt);
	len = vasprintf(&s->body, fmt, ap);
	va_end(ap);
	if (len < 0) {
		s->body = NULL;
		s->len = 0;
		return;
	}
	s->len = len;
	/* vasprintf() left room for its NUL: the newline takes it. */
	s->body[s->len++] = '\n';
}

/* Take @s out of the pending list, under the lock: true when it was there. */
static bool unlink_pending(struct scrape_queue *q, struct scrape *s)
{
	for (struct scrape **p = &q->pending; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			return true;
		}
	}
	return false;
}

/* @ts plus @ms. */
static void add_ms(struct timespec *ts, long ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Milliseconds from @a to @b (negative when @b is earlier). */
static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000L + (b->tv_nsec - a->tv_nsec) / 1000000L;
}

/* The last metrics kept into @s, under the lock: true when there were some. */
static bool kept_metrics(struct scrape_queue *q, struct scrape *s)
{
	if (!q->metrics)
		return false;
	s->body = malloc(q->metrics_len ? q->metrics_len : 1);
	if (s->body) {
		memcpy(s->body, q->metrics, q->metrics_len);
		s->len = q->metrics_len;
	}
	s->status = 200;
	s->content_type = q->metrics_type;
	return true;
}

bool scrape_queue__submit_wait(struct scrape_queue *q, struct scrape *s, bool (*gone)(void *ctx),
			       void *ctx)
{
	bool profile = s->kind == SCRAPE_PROFILE, answered = true;
	struct timespec start, now, next;
	struct scrape **tail;

	s->done = false;
	s->abandoned = false;
	s->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		pthread_mutex_unlock(&q->lock);
		scrape__answer_text(s, 503, "the profiler is stopping");
		return true;
	}
	if (profile && q->nr_open >= q->max_open) {
		pthread_mutex_unlock(&q->lock);
		scrape__answer_text(s, 503,
				    "%zu scrapes are being answered already: try again when one "
				    "is done",
				    q->max_open);
		return true;
	}
	if (profile)
		q->nr_open++;
	for (tail = &q->pending; *tail; tail = &(*tail)->next)
		;
	*tail = s;
	clock_gettime(CLOCK_MONOTONIC, &start);
	next = start;
	add_ms(&next, SCRAPE_POLL_MS);
	while (!s->done) {
		pthread_cond_timedwait(&q->answered, &q->lock, &next);
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* Woken for another scrape's answer, or not yet time to look. */
		if (s->done || ms_between(&now, &next) > 0)
			continue;
		next = now;
		add_ms(&next, SCRAPE_POLL_MS);
		if (!profile && ms_between(&start, &now) >= SCRAPE_METRICS_WAIT_MS &&
		    unlink_pending(q, s)) {
			/* The sampling thread is busy: the metrics it kept last, else a 503. */
			if (!kept_metrics(q, s))
				scrape__answer_text(s, 503, "the profiler is busy: try again");
			break;
		}
		if (s->abandoned || !gone || !gone(ctx))
			continue;
		answered = false;
		if (unlink_pending(q, s))
			break;
		/* Taken: the sampling thread lets go of it at its next drain. */
		s->abandoned = true;
	}
	if (profile)
		q->nr_open--;
	pthread_mutex_unlock(&q->lock);
	return answered;
}

bool scrape_queue__abandoned(struct scrape_queue *q, const struct scrape *s)
{
	bool abandoned;

	pthread_mutex_lock(&q->lock);
	abandoned = s->abandoned;
	pthread_mutex_unlock(&q->lock);
	return abandoned;
}

void scrape_queue__keep_metrics(struct scrape_queue *q, const struct scrape *s)
{
	char *copy = s->body ? malloc(s->len ? s->len : 1) : NULL;

	if (!copy)
		return;
	memcpy(copy, s->body, s->len);
	pthread_mutex_lock(&q->lock);
	free(q->metrics);
	q->metrics = copy;
	q->metrics_len = s->len;
	q->metrics_type = s->content_type;
	pthread_mutex_unlock(&q->lock);
}

struct scrape *scrape_queue__take(struct scrape_queue *q)
{
	struct scrape *taken;

	pthread_mutex_lock(&q->lock);
	taken = q->pending;
	q->pending = NULL;
	pthread_mutex_unlock(&q->lock);
	return taken;
}

void scrape_queue__answer(struct scrape_queue *q, struct scrape *s)
{
	pthread_mutex_lock(&q->lock);
	s->done = true;
	pthread_cond_broadcast(&q->answered);
	pthread_mutex_unlock(&q->lock);
}

void scrape_queue__stop(struct scrape_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	for (struct scrape *s = q->pending, *next; s; s = next) {
		next = s->next;
		scrape__answer_text(s, 503, "the profiler is stopping");
		s->done = true;
	}
	q->pending = NULL;
	pthread_cond_broadcast(&q->answered);
	pthread_mutex_unlock(&q->lock);
}
