// SPDX-License-Identifier: GPL-2.0-only
/*
 * sleeper [SECONDS [ON_MS [OFF_MS]]]: one thread alternates ON_MS
 * milliseconds of CPU in burn_phase() with OFF_MS milliseconds asleep in
 * sleep_phase() (default 4 seconds, 10 ms on, 10 ms off), so with equal ON_MS
 * and OFF_MS half of its wall-clock time is spent off CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>

#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void burn_phase(unsigned long ms)
{
	double end = now_seconds() + ms / 1000.0;

	while (now_seconds() < end)
		sink += burn(1);
}

/*
 * The nanosleep system call, made from this function's own frame. glibc's
 * nanosleep() and clock_nanosleep() set up no frame pointer, so a
 * frame-pointer unwinder that starts inside them reads our return address
 * as theirs and skips sleep_phase(): the blocked stack would read
 * main -> clock_nanosleep.
 */
static inline long sys_nanosleep(struct timespec *req, struct timespec *rem)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(req), "S"(rem)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_nanosleep;
	register long x0 __asm__("x0") = (long)req;
	register long x1 __asm__("x1") = (long)rem;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
	return x0;
#else
	return nanosleep(req, rem) ? -errno : 0;
#endif
}

__attribute__((noinline)) void sleep_phase(unsigned long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (sys_nanosleep(&ts, &ts) == -EINTR)
		;
	sink++;
}

int main(int argc, char **argv)
{
	double seconds = arg_seconds(argc, argv, 1, 4);
	unsigned long on_ms = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
	unsigned long off_ms = argc > 3 ? strtoul(argv[3], NULL, 10) : 10;
	double end = now_seconds() + seconds;

	while (seconds < 0 || now_seconds() < end) {
		burn_phase(on_ms);
		sleep_phase(off_ms);
	}
	return 0;
}
