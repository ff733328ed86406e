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
#include <sys/utsname.h>

struct strset;

/* A file (or pseudo-file) mapped into a process, as pprof's Mapping wants it. */
struct profile_mapping {
	uint64_t start, limit;	/* [start, limit) in the process's address space */
	uint64_t file_offset;	/* offset in the file of @start */
	const char *filename;	/* path as mapped, "[vdso]", or "[kernel.kallsyms]" */
	const char *build_id;	/* lowercase hex of the GNU build-id, or NULL */
	bool has_functions;	/* at least one address in it resolved to a symbol */
	bool has_filenames;	/* ... to a source file */
	bool has_line_numbers;	/* ... to a source line */
	bool has_inline_frames; /* ... to a chain of inlined calls */
	bool kernel;
	bool main_binary; /* the executable of the process that maps it */
};

/* A function at an address: the frame's own, or one inlined into it. */
struct profile_line {
	/*
	 * Never NULL: the function (demangled), else a placeholder naming the
	 * module and the ELF address in it ("libfoo.so+0x1234"), else "[unknown]".
	 */
	const char *name;
	const char *system_name; /* linker (mangled) name; NULL when unresolved */
	const char *filename;	 /* source file, or NULL when unknown */
	uint32_t line;		 /* source line, 0 when unknown */
	uint32_t discriminator;	 /* of the line row, for the innermost line only */
};

/* How a frame was symbolized, for the quality counts. */
enum profile_frame_source {
	FRAME_LINES,	  /* function and source line */
	FRAME_SYMBOL,	  /* function name only */
	FRAME_NO_SYMBOL,  /* a mapped file, but nothing names the address */
	FRAME_NO_MAPPING, /* no mapping covers the address */
	FRAME_JIT,	  /* named by a perf map file of JIT-compiled code */
	FRAME_PYTHON,	  /* a Python function, read from the interpreter (py_frames.h) */
	FRAME_JS,	  /* a JavaScript function, read from V8 (py_frames.h) */
	NR_FRAME_SOURCES,
};

/*
 * One symbolized frame: an address and the functions at it. Code inlined
 * at the address gives several lines, innermost first, as pprof orders
 * them: lines[0] is the code at @address, which was inlined into lines[1]
 * at lines[0]'s call site ... and lines[nr_lines - 1] is the function
 * that holds the address. A frame always has at least one line.
 */
struct profile_frame {
	uint64_t address;		       /* absolute address in the process or kernel */
	const struct profile_mapping *mapping; /* NULL when no mapping covers @address */
	const struct profile_line *lines;
	uint32_t nr_lines;
	enum profile_frame_source source;
	bool kernel;
	/*
	 * What formats that give a frame one name show, where it is not
	 * lines[0].name: "qualname (file.py:LINE)" for a Python frame, as
	 * py-spy writes them; NULL otherwise.
	 */
	const char *label;
};

/* The one name of @f's own function (its last line) in formats that show one. */
static inline const char *profile_frame__label(const struct profile_frame *f)
{
	return f->label ? f->label : f->lines[f->nr_lines - 1].name;
}

/* The function holding the frame's address (the outermost of an inline chain). */
static inline const struct profile_line *profile_frame__func(const struct profile_frame *f)
{
	return &f->lines[f->nr_lines - 1];
}

static inline bool profile_frame__resolved(const struct profile_frame *f)
{
	return profile_frame__func(f)->system_name != NULL;
}

/* What a kind of allocation function hands out. */
enum profile_alloc_kind {
	ALLOC_HEAP, /* malloc and its family */
	ALLOC_MMAP, /* anonymous mmap: its own kind, never added to the heap's figures */
};

/*
 * Allocations of one stack (PROFILE_ALLOC), as DHAT counts them per
 * allocation point. Sampled by bytes (profile.alloc_rate), each figure is
 * an estimate, scaled as pprof heap profiles are: a sampled block of n bytes
 * stands for n / (1 - e^(-n/rate)) bytes and 1 / (1 - e^(-n/rate)) blocks.
 * With alloc_rate 1 (--alloc=1) every call is recorded and the figures
 * are exact. Blocks allocated and not freed before the end are live.
 */
struct profile_alloc {
	enum profile_alloc_kind kind;
	uint64_t bytes, blocks;		  /* allocated in all */
	uint64_t max_bytes, max_blocks;	  /* live at once at this stack's own peak */
	uint64_t gmax_bytes, gmax_blocks; /* live at the global peak (profile.alloc_gmax_ns) */
	uint64_t end_bytes, end_blocks;	  /* live at the end: never seen freed */
	/*
	 * The blocks' lifetimes added up, ns: allocation to free, or to the
	 * end for live ones; scaled like the rest.
	 */
	uint64_t lifetime_ns;
	uint64_t first_ns, last_ns; /* the first and last sampled allocation, since start_time */
};

struct profile_sample {
	uint32_t pid, tid;
	const char *process_name; /* the thread group leader's comm */
	const char *thread_name;  /* the thread's comm */
	/*
	 * The process's command line when the profiler first saw it (or after
	 * it exec'd), shortened and escaped (common/procfs.h); NULL when it
	 * was empty (a kernel thread) or could not be read.
	 */
	const char *cmdline;
	const char *cgroup; /* its cgroup v2 path when first seen; NULL: not known */
	/*
	 * Labels the program gave these samples (a goroutine's pprof labels):
	 * "KEY=VALUE" pairs, each ended by a newline, keys sorted; NULL: none.
	 * Neither holds a newline; a key holds no '='.
	 */
	const char *labels;
	const char *labels_root; /* @labels as one root frame, "KEY=VALUE KEY=VALUE"; NULL: none */
	uint32_t nr_frames;
	const struct profile_frame **frames; /* leaf first; kernel frames before user frames */
	uint64_t count;			     /* samples, or intervals off CPU */
	uint64_t *times;		     /* @count timestamps, ns since profile->start_time */
	bool truncated;	    /* a stack filled its buffer: outer frames may be missing */
	bool offcpu;	    /* intervals off CPU, not on-CPU samples */
	uint64_t offcpu_ns; /* off CPU: the intervals' total length */
	/*
	 * On CPU, with @cpu_measured: the time on CPU these samples stand for,
	 * their share of their thread's CPU time as the scheduler counted it
	 * (--wall); else they weigh one period each.
	 */
	bool cpu_measured;
	uint64_t cpu_ns;
	/* Off CPU: the intervals, more than @count when some were summed; 0: @count. */
	uint64_t intervals;
	/* The stand-in for a thread's time on CPU that no sample saw: counts no sample. */
	bool unsampled;
	/* PROFILE_ALLOC: what the allocations of this stack added up to (@count: sampled calls). */
	struct profile_alloc alloc;
};

/*
 * What a profile measures, which decides the values exporters write:
 * PROFILE_CPU: on-CPU samples (count, and count * period in cpu time);
 * PROFILE_OFFCPU: those and intervals off CPU (offcpu time), kept apart;
 * PROFILE_WALL: both as one wall-clock time, samples weighing one period each;
 * PROFILE_ALLOC: allocations (--alloc), each sample's alloc figures.
 */
enum profile_mode {
	PROFILE_CPU,
	PROFILE_OFFCPU,
	PROFILE_WALL,
	PROFILE_ALLOC,
};

struct profile_stats {
	uint64_t samples;	   /* on-CPU samples received */
	uint64_t idle_samples;	   /* ... of idle CPUs (-a), as "swapper" */
	uint64_t lost_samples;	   /* on-CPU samples dropped: ring buffer or stack table full */
	uint64_t not_taken;	   /* ... that the kernel did not hand the BPF program */
	uint64_t offcpu_intervals; /* intervals off CPU received (--off-cpu, --wall) */
	uint64_t offcpu_ns;	   /* their total length */
	uint64_t lost_offcpu;	   /* intervals off CPU dropped: no room to keep or send them */
	uint64_t offcpu_short;	   /* intervals off CPU left out, shorter than --off-cpu-min */
	uint64_t offcpu_short_ns;  /* their total length */
	uint64_t truncated;	   /* samples whose stack filled the buffer */
	uint64_t stack_errors;	   /* samples whose user or kernel stack could not be read */
	uint64_t maps_unreadable;  /* processes none of whose maps could be read */
	uint64_t frames[NR_FRAME_SOURCES]; /* distinct frames, by how they were symbolized */
	uint64_t dwarf_units_lost;	   /* DWARF units those needed that could not be read */
	/* PROFILE_ALLOC (heap kind; the estimates when sampled): */
	uint64_t alloc_bytes, alloc_blocks;	      /* allocated in all */
	uint64_t alloc_gmax_bytes, alloc_gmax_blocks; /* live at the peak */
	uint64_t alloc_end_bytes, alloc_end_blocks;   /* live at the end */
	uint64_t alloc_lost;	  /* sampled allocations lost: no room in the ring buffer */
	uint64_t alloc_untracked; /* sampled blocks whose free could not be watched: live map full */
	uint64_t alloc_foreign_frees; /* --alloc=1: frees of blocks never seen allocated */
};

/* A BPF program's runs during a recording, and their time. */
struct profile_bpf_prog {
	const char *name; /* its first function's */
	uint32_t id;
	uint64_t runs, run_ns;
};

#define PROFILE_MAX_BPF_PROGS 3

struct profile {
	struct strset *strings;		/* owned */
	struct profile_sample *samples; /* owned, as are each sample's frames and times arrays */
	size_t nr_samples, alloc_samples;
	uint32_t freq_hz;    /* sampling frequency per CPU */
	uint64_t period_ns;  /* 1e9 / freq_hz */
	uint64_t start_time; /* CLOCK_REALTIME at start, ns since the epoch */
	uint64_t duration;   /* ns */
	enum profile_mode mode;
	/*
	 * PROFILE_ALLOC: on average one sample per @alloc_rate bytes allocated
	 * (1: every allocation); the global peak of live heap bytes, when
	 * (ns since start_time; the first time it was reached).
	 */
	uint64_t alloc_rate;
	uint64_t alloc_gmax_ns;
	struct profile_stats stats;
	/*
	 * The BPF programs that ran longest during the recording, the longest
	 * first (counted while kernel.bpf_stats_enabled is on): names interned.
	 */
	struct profile_bpf_prog bpf_progs[PROFILE_MAX_BPF_PROGS];
	size_t nr_bpf_progs;
	struct utsname host; /* the machine recorded on; all "" when uname() failed */
	/*
	 * Write kernel addresses as offsets from the kernel mapping's start
	 * (_text): the mapping from 0, each kernel frame at its offset, 0 for
	 * one outside it. Names are kept. For profiles served to whoever asks
	 * (profiler serve), which must not undo KASLR or kptr_restrict.
	 */
	bool kernel_offsets;
};

/* Returns NULL and sets errno on failure. @host is this machine's. */
struct profile *profile__new(uint32_t freq_hz);
void profile__free(struct profile *p);

/*
 * Append a sample; @frames (leaf first) and @times are copied. Returns the
 * new sample or NULL on ENOMEM.
 */
struct profile_sample *profile__add_sample(struct profile *p, const struct profile_sample *s);

/*
 * Order samples by pid, tid, thread name, process name, command line, then
 * stack (names and addresses, root first).
 */
void profile__sort(struct profile *p);

/*
 * What @s counts as events, in pprof's samples/count: on-CPU samples, or
 * intervals off CPU; none for the unsampled stand-in.
 */
uint64_t profile_sample__events(const struct profile_sample *s);

/* Total of all samples' counts. */
uint64_t profile__total(const struct profile *p);

/*
 * @s's on-CPU time (its measured share, else count * period), off-CPU
 * time, and their sum, the wall-clock time; ns.
 */
uint64_t profile_sample__cpu_ns(const struct profile *p, const struct profile_sample *s);
uint64_t profile_sample__offcpu_ns(const struct profile_sample *s);
uint64_t profile_sample__wall_ns(const struct profile *p, const struct profile_sample *s);

/* What folded output and flame graphs put above each stack's frames. */
enum profile_root {
	PROFILE_ROOT_COMM,    /* the process name, as stackcollapse-perf.pl does: the default */
	PROFILE_ROOT_CMDLINE, /* the command line, else (a kernel thread) the process name */
	PROFILE_ROOT_NONE,    /* nothing: the stacks of every process merged */
	PROFILE_ROOT_LABELS,  /* the samples' labels (a goroutine's), else the process name */
};

/* @s's root frame under @root: a name, or NULL for PROFILE_ROOT_NONE. */
static inline const char *profile_sample__root(const struct profile_sample *s,
					       enum profile_root root)
{
	switch (root) {
	case PROFILE_ROOT_CMDLINE:
		if (s->cmdline)
			return s->cmdline;
		break;
	case PROFILE_ROOT_NONE:
		return NULL;
	case PROFILE_ROOT_LABELS:
		if (s->labels_root)
			return s->labels_root;
		break;
	case PROFILE_ROOT_COMM:
		break;
	}
	return s->process_name;
}

/*
 * @s's count in the unit of folded output and flame graphs: samples on
 * CPU; microseconds off CPU (on-CPU samples count 0), as offcputime writes
 * them; microseconds of wall-clock time; or bytes allocated.
 */
uint64_t profile_sample__folded_count(const struct profile *p, const struct profile_sample *s);

/*
 * The summary of a profile: the counts that say what it holds and what it
 * misses, one "what: N" line each, built in one place so that stderr, the
 * pprof comments, the Firefox markers and the SVG's subtitle say the same
 * in the same words. The lines, in this order:
 *
 *   on-CPU samples: N in S s at F Hz    (stats.samples, duration, freq_hz)
 *   samples lost: N                     (stats.lost_samples)
 *   samples not taken: N (the CPU was running another BPF program)
 *                                       (stats.not_taken; when at least 20, and 1% of
 *                                        the samples with them)
 *   intervals off CPU: N (S s)          (stats.offcpu_intervals, offcpu_ns;
 *   intervals off CPU lost: N            these two with --off-cpu and --wall)
 *   intervals off CPU under --off-cpu-min: N (S s)
 *                                       (stats.offcpu_short, _ns; only if any)
 *   truncated stacks: N
 *   stack read errors: N
 *   processes with unreadable maps: N
 *   frames: N with source lines, N function only, N unnamed, N unmapped, N JIT,
 *     N Python
 *   DWARF units unreadable: N
 *   BPF program NAME (id N): N runs, S us a run, P% of a CPU
 *                                                   (bpf_progs: up to three, the
 *                                                    longest first; only if counted)
 *
 * An allocation profile (PROFILE_ALLOC) has DHAT's figures, of the heap
 * kind, in place of the lines of samples and intervals, in three groups:
 * what was allocated (SUMMARY_SAMPLES), what was live (SUMMARY_LIVE), how
 * it was sampled and what was lost (SUMMARY_SAMPLING); the stack and frame
 * lines follow them:
 *
 *   allocated: N bytes in N blocks over S s         (stats.alloc_bytes, _blocks)
 *   anonymous mmap: N bytes in N mappings           (ALLOC_MMAP samples; only if any)
 *   peak live: N bytes in N blocks at S s           (stats.alloc_gmax_*, alloc_gmax_ns;
 *                                                    no "at" when nothing was live)
 *   live at the end: N bytes in N blocks            (stats.alloc_end_*)
 *   sampling: one sample per N bytes on average     (alloc_rate; with 1:
 *                                                    "sampling: every allocation")
 *   sampled allocations lost: N                     (stats.alloc_lost)
 *   frees not watched: N blocks, live to the end (live map full, or a free lost)
 *                                                   (stats.alloc_untracked; only if any)
 *   frees of blocks not seen allocated: N           (stats.alloc_foreign_frees; only if
 *                                                    any, which --alloc=1 alone sees)
 *
 * Sampled (alloc_rate > 1), the lines of figures in bytes and blocks end
 * in " (estimated)": they are scaled samples, not counts.
 *
 * Counts are plain decimal numbers (no separators), times in seconds with
 * a point, whatever the locale, so scripts can read any of the outputs.
 * Each line belongs to a group; stderr and the SVG put a group on one line
 * of text. A new count is one more line in profile__summary().
 */
enum profile_summary_group {
	SUMMARY_SAMPLES,  /* what was recorded, and what was lost */
	SUMMARY_LIVE,	  /* allocations: what was live, at the peak and at the end */
	SUMMARY_SAMPLING, /* allocations: how they were sampled, what was lost or not watched */
	SUMMARY_STACKS,	  /* how much of the stacks could be read */
	SUMMARY_FRAMES,	  /* how well their frames were named */
	SUMMARY_BPF,	  /* the BPF programs that ran longest, if counted */
	NR_SUMMARY_GROUPS,
};

#define PROFILE_SUMMARY_MAX 16
#define PROFILE_SUMMARY_LEN 128

struct profile_summary_line {
	enum profile_summary_group group;
	char text[PROFILE_SUMMARY_LEN]; /* "what: N", no newline */
};

struct profile_summary {
	size_t nr;
	struct profile_summary_line lines[PROFILE_SUMMARY_MAX]; /* grouped, in group order */
};

/* Fill @sum with @p's summary lines. */
void profile__summary(const struct profile *p, struct profile_summary *sum);

#endif
