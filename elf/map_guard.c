// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/map_guard.h"

/* A guarded mapping: [start, end), start 0 when the slot is free. */
struct guarded {
	uintptr_t start, end;
};

static struct guarded guarded[MAP_GUARD_MAX];
static uint64_t faults;
static bool installed;

/* The guarded mapping holding @addr, or NULL: what the handler may read, atomically. */
static bool is_guarded(uintptr_t addr)
{
	for (size_t i = 0; i < MAP_GUARD_MAX; i++) {
		uintptr_t start = __atomic_load_n(&guarded[i].start, __ATOMIC_ACQUIRE);

		if (start && addr >= start &&
		    addr < __atomic_load_n(&guarded[i].end, __ATOMIC_RELAXED))
			return true;
	}
	return false;
}

/*
 * Async-signal-safe: a lookup, mmap() and an atomic add. The faulting
 * instruction runs again on return, and reads the zeros. Writable, as a
 * private mapping libelf writes to (ELF_C_READ_MMAP_PRIVATE) is.
 */
static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
	uintptr_t addr = (uintptr_t)info->si_addr, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int saved = errno;

	(void)uctx;
	if (info->si_code == BUS_ADRERR && is_guarded(addr) &&
	    mmap((void *)(addr & ~(page - 1)), page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
		__atomic_add_fetch(&faults, 1, __ATOMIC_RELAXED);
		errno = saved;
		return;
	}
	/* Not ours: the default action, when the instruction faults again. */
	signal(sig, SIG_DFL);
	errno = saved;
}

static int install(void)
{
	struct sigaction sa;

	if (installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return -errno;
	installed = true;
	return 0;
}

int map_guard__add(const void *base, size_t size)
{
	int err = install();

	if (err)
		return err;
	for (size_t i = 0; i < MAP_GUARD_MAX; i++) {
		if (guarded[i].start)
			continue;
		/* The end first: a start the handler sees has its end. */
		__atomic_store_n(&guarded[i].end, (uintptr_t)base + size, __ATOMIC_RELAXED);
		__atomic_store_n(&guarded[i].start, (uintptr_t)base, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

void map_guard__remove(const void *base)
{
	for (size_t i = 0; i < MAP_GUARD_MAX; i++)
		if (guarded[i].start == (uintptr_t)base) {
			__atomic_store_n(&guarded[i].start, 0, __ATOMIC_RELEASE);
			return;
		}
}

uint64_t map_guard__faults(void)
{
	return __atomic_load_n(&faults, __ATOMIC_RELAXED);
}
