// SPDX-License-Identifier: GPL-2.0-only
/*
 * threads [SECONDS]: two named threads, "alpha-worker" in alpha_work() and
 * "beta-worker" in beta_work(), each on its own CPU-bound loop, while the
 * main thread waits for them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static volatile unsigned long sink;
static double end;

__attribute__((noinline)) void alpha_work(void)
{
	sink += burn(10);
}

__attribute__((noinline)) void beta_work(void)
{
	sink += burn(10);
}

static void *run(void *arg)
{
	void (*work)(void) = arg;

	while (now_seconds() < end)
		work();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t alpha, beta;

	end = now_seconds() + arg_seconds(argc, argv, 1, 10);
	if (pthread_create(&alpha, NULL, run, alpha_work) ||
	    pthread_create(&beta, NULL, run, beta_work)) {
		perror("threads: pthread_create");
		return 1;
	}
	pthread_setname_np(alpha, "alpha-worker");
	pthread_setname_np(beta, "beta-worker");
	pthread_join(alpha, NULL);
	pthread_join(beta, NULL);
	return 0;
}
