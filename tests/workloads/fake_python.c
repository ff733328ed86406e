// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_python [SECONDS]: a program that looks like CPython 3.11 to the
 * profiler, once copied to a file named python3.11, and whose interpreter
 * state is garbage: for tests/e2e/python.sh's bad-input checks.
 *
 * It has the two symbols the profiler looks for, _PyRuntime and
 * _PyEval_EvalFrameDefault (where it spins), laid out as 3.11's are as far
 * as the way to this thread's state goes, so the BPF program finds the
 * thread and walks its frames. The frames are garbage that changes while
 * it runs: a chain that loops (past the frame limit), pointers into
 * nothing, code objects of random bytes, instruction pointers anywhere.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "work.h"

#define NR_FRAMES 64
#define FRAME_BYTES 128

/* 3.11's offsets, as collector/python_offsets.c has them. */
#define RUNTIME_INTERPRETERS_HEAD 40
#define INTERP_THREADS_HEAD 16
#define TSTATE_THREAD_ID 152
#define TSTATE_CFRAME 56
#define CFRAME_CURRENT_FRAME 8
#define FRAME_CODE 32
#define FRAME_PREVIOUS 48
#define FRAME_INSTR 56
#define FRAME_IS_ENTRY 68

unsigned char _PyRuntime[4096] __attribute__((aligned(64)));
static unsigned char interp[256], tstate[256], cframe[64];
static unsigned char frames[NR_FRAMES][FRAME_BYTES] __attribute__((aligned(64)));
static unsigned char codes[16][512] __attribute__((aligned(64)));
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void)
{
	return xorshift64(&rng);
}

static void put(unsigned char *at, uint64_t v)
{
	memcpy(at, &v, sizeof(v));
}

/* A pointer that may be anything: a frame, a code object, unmapped, null. */
static uint64_t some_pointer(void)
{
	switch (next_random() % 5) {
	case 0:
		return (uintptr_t)frames[next_random() % NR_FRAMES];
	case 1:
		return (uintptr_t)codes[next_random() % 16];
	case 2:
		return next_random() & 0x7fffffffffffULL;
	case 3:
		return 0;
	default:
		return (uintptr_t)frames[next_random() % NR_FRAMES] + next_random() % FRAME_BYTES;
	}
}

/* Change one thing of the garbage: a frame's field, or a code object's bytes. */
static void mutate(void)
{
	unsigned char *f = frames[next_random() % NR_FRAMES];

	switch (next_random() % 4) {
	case 0:
		put(f + FRAME_PREVIOUS, some_pointer());
		break;
	case 1:
		put(f + FRAME_CODE, some_pointer());
		break;
	case 2:
		put(f + FRAME_INSTR, next_random());
		f[FRAME_IS_ENTRY] = next_random() & 1;
		break;
	default:
		put(&codes[next_random() % 16][next_random() % 504], next_random());
		break;
	}
}

__attribute__((noinline)) unsigned long _PyEval_EvalFrameDefault(double seconds)
{
	double end = now_seconds() + seconds;
	unsigned long x = 0;

	while (now_seconds() < end) {
		x += burn(1);
		for (int i = 0; i < 16; i++)
			mutate();
	}
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;

	put(_PyRuntime + RUNTIME_INTERPRETERS_HEAD, (uintptr_t)interp);
	put(interp + INTERP_THREADS_HEAD, (uintptr_t)tstate);
	put(tstate + TSTATE_THREAD_ID, (uintptr_t)pthread_self());
	put(tstate + TSTATE_CFRAME, (uintptr_t)cframe);
	put(cframe + CFRAME_CURRENT_FRAME, (uintptr_t)frames[0]);
	/* A chain that loops from the start, then garbage as it runs. */
	for (int i = 0; i < NR_FRAMES; i++) {
		put(frames[i] + FRAME_PREVIOUS, (uintptr_t)frames[(i + 1) % NR_FRAMES]);
		put(frames[i] + FRAME_CODE, (uintptr_t)codes[i % 16]);
	}
	for (size_t i = 0; i < sizeof(codes); i++)
		((unsigned char *)codes)[i] = next_random();
	return _PyEval_EvalFrameDefault(seconds) == 42;
}
