// SPDX-License-Identifier: GPL-2.0-only
/*
 * inline_heavy: symbolization oracle input, built by gcc at -O3. Small static
 * inline helpers called from loops, a few levels deep, so most instructions
 * sit inside inlined frames, some of them inlined more than once into the
 * same caller. It reads its work from the command line, so nothing folds to
 * a constant.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vec3 {
	double x, y, z;
};

struct particle {
	struct vec3 pos, vel;
	uint32_t id;
};

static inline uint32_t rotl32(uint32_t v, int r)
{
	return (v << r) | (v >> (32 - r));
}

static inline uint32_t mix(uint32_t h, uint32_t k)
{
	k *= 0xcc9e2d51u;
	k = rotl32(k, 15);
	k *= 0x1b873593u;
	h ^= k;
	h = rotl32(h, 13);
	return h * 5 + 0xe6546b64u;
}

static inline uint32_t finish(uint32_t h, size_t len)
{
	h ^= (uint32_t)len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

static inline uint32_t hash_bytes(const unsigned char *p, size_t len, uint32_t seed)
{
	uint32_t h = seed;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t k;

		memcpy(&k, p + i, 4);
		h = mix(h, k);
	}
	if (i < len) {
		uint32_t k = 0;

		memcpy(&k, p + i, len - i);
		h = mix(h, k);
	}
	return finish(h, len);
}

static inline double dot(struct vec3 a, struct vec3 b)
{
	return a.x * b.x + a.y * b.y + a.z * b.z;
}

static inline struct vec3 scale(struct vec3 a, double s)
{
	return (struct vec3){ a.x * s, a.y * s, a.z * s };
}

static inline struct vec3 add(struct vec3 a, struct vec3 b)
{
	return (struct vec3){ a.x + b.x, a.y + b.y, a.z + b.z };
}

static inline struct vec3 reflect(struct vec3 v, struct vec3 n)
{
	return add(v, scale(n, -2.0 * dot(v, n)));
}

static inline void bounce(struct particle *p, double lo, double hi)
{
	static const struct vec3 walls[3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
	double c[3] = { p->pos.x, p->pos.y, p->pos.z };

	for (int i = 0; i < 3; i++)
		if (c[i] < lo || c[i] > hi)
			p->vel = reflect(p->vel, walls[i]);
}

static inline void step(struct particle *p, size_t n, double dt)
{
	for (size_t i = 0; i < n; i++) {
		p[i].pos = add(p[i].pos, scale(p[i].vel, dt));
		bounce(&p[i], -1.0, 1.0);
	}
}

__attribute__((noinline)) static double energy(const struct particle *p, size_t n)
{
	double e = 0;

	for (size_t i = 0; i < n; i++)
		e += 0.5 * dot(p[i].vel, p[i].vel);
	return e;
}

__attribute__((noinline)) static void simulate(struct particle *p, size_t n, int steps)
{
	for (int s = 0; s < steps; s++) {
		step(p, n, 0.01);
		if (s % 16 == 0)
			step(p, n, -0.001);
	}
}

static inline int cmp_u32(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

static inline void swap_u32(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;

	*a = *b;
	*b = t;
}

static inline void sift_down(uint32_t *v, size_t start, size_t n)
{
	size_t root = start;

	while (2 * root + 1 < n) {
		size_t child = 2 * root + 1;

		if (child + 1 < n && cmp_u32(v[child], v[child + 1]) < 0)
			child++;
		if (cmp_u32(v[root], v[child]) >= 0)
			return;
		swap_u32(&v[root], &v[child]);
		root = child;
	}
}

__attribute__((noinline)) static void heap_sort(uint32_t *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n);
	for (size_t end = n; end-- > 1;) {
		swap_u32(&v[0], &v[end]);
		sift_down(v, 0, end);
	}
}

/* A tiny stack machine: the opcode helpers inline into the dispatch loop. */
enum op {
	OP_PUSH,
	OP_ADD,
	OP_MUL,
	OP_HASH,
	OP_DUP,
	OP_DROP,
	OP_END
};

struct machine {
	uint32_t stack[64];
	int sp;
};

static inline void push(struct machine *m, uint32_t v)
{
	if (m->sp < 64)
		m->stack[m->sp++] = v;
}

static inline uint32_t pop(struct machine *m)
{
	return m->sp > 0 ? m->stack[--m->sp] : 0;
}

static inline void binary(struct machine *m, enum op op)
{
	uint32_t b = pop(m), a = pop(m);

	switch (op) {
	case OP_ADD:
		push(m, a + b);
		break;
	case OP_MUL:
		push(m, a * b);
		break;
	default:
		push(m, mix(a, b));
		break;
	}
}

static uint32_t run(const unsigned char *code, size_t len, uint32_t arg)
{
	struct machine m = { .sp = 0 };

	push(&m, arg);
	for (size_t pc = 0; pc < len; pc++) {
		switch (code[pc] % OP_END) {
		case OP_PUSH:
			push(&m, code[pc] * 31u + (uint32_t)pc);
			break;
		case OP_HASH: {
			uint32_t v = pop(&m);

			push(&m, hash_bytes((const unsigned char *)&v, sizeof(v), (uint32_t)pc));
			break;
		}
		case OP_DUP: {
			uint32_t v = pop(&m);

			push(&m, v);
			push(&m, v);
			break;
		}
		case OP_DROP:
			pop(&m);
			break;
		default:
			binary(&m, code[pc] % OP_END);
			break;
		}
	}
	return pop(&m);
}

int main(int argc, char **argv)
{
	const char *text = argc > 1 ? argv[1] : "the quick brown fox";
	size_t len = strlen(text), n = 64 + len;
	struct particle *p = calloc(n, sizeof(*p));
	uint32_t *keys = calloc(n, sizeof(*keys));

	if (!p || !keys)
		return 1;
	for (size_t i = 0; i < n; i++) {
		uint32_t h = hash_bytes((const unsigned char *)text, len, (uint32_t)i);

		keys[i] = h;
		p[i].id = h;
		p[i].pos =
			(struct vec3){ (h & 0xff) / 128.0 - 1, ((h >> 8) & 0xff) / 128.0 - 1, 0 };
		p[i].vel = (struct vec3){ (double)(h >> 24) / 256, 0.5, -0.25 };
	}
	simulate(p, n, argc > 2 ? atoi(argv[2]) : 100);
	heap_sort(keys, n);
	printf("%u %u %.3f %u\n", keys[0], keys[n - 1], energy(p, n),
	       run((const unsigned char *)text, len, keys[n / 2]));
	free(keys);
	free(p);
	return 0;
}
