/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.h - the aggregated, symbolized profile: what the symbolizer
 * produces and every exporter reads.
 *
 * A profile is a list of samples; each sample is one distinct stack of one
 * thread with the number of times it was seen and when. Frames and mappings
 * are shared between samples and compared by pointer: the symbolizer hands
 * out one `struct profile_frame` per distinct (mapping, address) and one
 * `struct profile_mapping` per distinct mapped file range, and they stay
 * valid until the symbolizer is freed, which must outlive the profile.
 * All strings are interned in profile->strings.
 *
 * Exporters iterate samples in array order; profile__sort() puts them in a
 * total order first, so the same samples always give the same bytes.
 */
#ifndef PROFILER_PROFILE_H
#define PROFILER_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strset;

/* A file (or pseudo-file) mapped into a process, as pprof's Mapping wants it. */
struct profile_mapping {
	uint64_t start, limit; /* [start, limit) in the process's address space */
	uint64_t file_offset;  /* offset in the file of @start */
	const char *filename;  /* path as mapped, "[vdso]", or "[kernel.kallsyms]" */
	const char *build_id;  /* lowercase hex of the GNU build-id, or NULL */
	bool has_functions;    /* at least one address in it resolved to a symbol */
	bool kernel;
	bool main_binary; /* the executable of the process that maps it */
};

/* One symbolized frame. */
struct profile_frame {
	uint64_t address;		       /* absolute address in the process or kernel */
	const struct profile_mapping *mapping; /* NULL when no mapping covers @address */
	/*
	 * Never NULL: the function, else a placeholder naming the module and
	 * the ELF address in it ("libfoo.so+0x1234"), else "[unknown]".
	 */
	const char *name;
	const char *system_name; /* linker (mangled) name; NULL when unresolved */
	const char *filename;	 /* source file, or NULL when unknown */
	bool kernel;
};

static inline bool profile_frame__resolved(const struct profile_frame *f)
{
	return f->system_name != NULL;
}

struct profile_sample {
	uint32_t pid, tid;
	const char *process_name; /* the thread group leader's comm */
	const char *thread_name;  /* the thread's comm */
	uint32_t nr_frames;
	const struct profile_frame **frames; /* leaf first; kernel frames before user frames */
	uint64_t count;			     /* samples, or intervals off CPU */
	uint64_t *times;		     /* @count timestamps, ns since profile->start_time */
	bool truncated;	    /* a stack filled its buffer: outer frames may be missing */
	bool offcpu;	    /* intervals off CPU, not on-CPU samples */
	uint64_t offcpu_ns; /* off CPU: the intervals' total length */
};

/*
 * What a profile measures, which decides the values exporters write:
 * PROFILE_CPU: on-CPU samples (count, and count * period in cpu time);
 * PROFILE_OFFCPU: those and intervals off CPU (offcpu time), kept apart;
 * PROFILE_WALL: both as one wall-clock time, samples weighing one period each.
 */
enum profile_mode {
	PROFILE_CPU,
	PROFILE_OFFCPU,
	PROFILE_WALL,
};

struct profile_stats {
	uint64_t samples;	  /* samples received */
	uint64_t lost;		  /* samples dropped: ring buffer full */
	uint64_t truncated;	  /* samples whose stack filled the buffer */
	uint64_t stack_errors;	  /* samples whose user or kernel stack could not be read */
	uint64_t maps_unreadable; /* processes none of whose maps could be read */
};

struct profile {
	struct strset *strings;		/* owned */
	struct profile_sample *samples; /* owned, as are each sample's frames and times arrays */
	size_t nr_samples, alloc_samples;
	uint32_t freq_hz;    /* sampling frequency per CPU */
	uint64_t period_ns;  /* 1e9 / freq_hz */
	uint64_t start_time; /* CLOCK_REALTIME at start, ns since the epoch */
	uint64_t duration;   /* ns */
	enum profile_mode mode;
	struct profile_stats stats;
};

/* Returns NULL and sets errno on failure. */
struct profile *profile__new(uint32_t freq_hz);
void profile__free(struct profile *p);

/*
 * Append a sample; @frames (leaf first) and @times are copied. Returns the
 * new sample or NULL on ENOMEM.
 */
struct profile_sample *profile__add_sample(struct profile *p, const struct profile_sample *s);

/* Order samples by pid, tid, thread name, then stack (names and addresses, leaf last). */
void profile__sort(struct profile *p);

/* Total of all samples' counts. */
uint64_t profile__total(const struct profile *p);

/* @s's on-CPU time (count * period), off-CPU time, and their sum, the wall-clock time; ns. */
uint64_t profile_sample__cpu_ns(const struct profile *p, const struct profile_sample *s);
uint64_t profile_sample__offcpu_ns(const struct profile_sample *s);
uint64_t profile_sample__wall_ns(const struct profile *p, const struct profile_sample *s);

#endif
