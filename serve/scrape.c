// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "scrape.h"

int scrape_queue__init(struct scrape_queue *q, size_t max_open)
{
	int err;

	*q = (struct scrape_queue){ .max_open = max_open };
	err = pthread_mutex_init(&q->lock, NULL);
	if (err)
		return -err;
	err = pthread_cond_init(&q->answered, NULL);
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

void scrape_queue__submit_wait(struct scrape_queue *q, struct scrape *s)
{
	struct scrape **tail;

	s->done = false;
	s->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		pthread_mutex_unlock(&q->lock);
		scrape__answer_text(s, 503, "the profiler is stopping");
		return;
	}
	if (q->nr_open >= q->max_open) {
		pthread_mutex_unlock(&q->lock);
		scrape__answer_text(s, 503,
				    "%zu scrapes are being answered already: try again when one "
				    "is done",
				    q->max_open);
		return;
	}
	q->nr_open++;
	for (tail = &q->pending; *tail; tail = &(*tail)->next)
		;
	*tail = s;
	while (!s->done)
		pthread_cond_wait(&q->answered, &q->lock);
	q->nr_open--;
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
