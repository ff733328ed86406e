// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "alloc_preload.h"
#include "common/array.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/profile.h"
#include "common/proc_maps.h"
#include "common/procfs.h"
#include "elf/elf_file.h"
#include "event.h"
#include "preload/heap.h"
#include "profile.skel.h"
#include "common/stack_table.h"

/* enum bpf_attach_type's BPF_TRACE_UPROBE_SESSION (Linux 6.13), which Debian 12's headers lack. */
#define ALLOC_UPROBE_SESSION 57

/* The dynamic linker every program of this machine's ABI names; the only one we run. */
#define SYSTEM_LOADER "/lib64/ld-linux-x86-64.so.2"
/* How much of `ld.so --list`'s output is read: a few hundred objects. */
#define LOADER_OUTPUT_MAX (256 * 1024)

/* An allocator function: where it is probed, by which program. */
struct alloc_func_desc {
	const char *name;
	unsigned int func; /* enum alloc_func, or ALLOC_COOKIE_FREE or _MUNMAP */
	bool required;	   /* no allocator without it */
	bool libc;	   /* probed in the C library, whoever allocates */
};

static const struct alloc_func_desc funcs[] = {
	{ "malloc", ALLOC_FUNC_MALLOC, true, false },
	{ "free", ALLOC_COOKIE_FREE, true, false },
	{ "calloc", ALLOC_FUNC_CALLOC, false, false },
	{ "realloc", ALLOC_FUNC_REALLOC, false, false },
	{ "reallocarray", ALLOC_FUNC_REALLOCARRAY, false, false },
	{ "posix_memalign", ALLOC_FUNC_POSIX_MEMALIGN, false, false },
	{ "aligned_alloc", ALLOC_FUNC_ALIGNED_ALLOC, false, false },
	{ "memalign", ALLOC_FUNC_MEMALIGN, false, false },
	{ "valloc", ALLOC_FUNC_VALLOC, false, false },
	{ "pvalloc", ALLOC_FUNC_PVALLOC, false, false },
	{ "mmap", ALLOC_FUNC_MMAP, false, true },
	{ "munmap", ALLOC_COOKIE_MUNMAP, false, true },
};
#define NR_FUNCS (sizeof(funcs) / sizeof(funcs[0]))

/* Where a process's allocation functions are: a file's inode and offsets. */
struct alloc_proc {
	pid_t pid;
	bool before_exec;		  /* attached for the program it was about to exec */
	uint64_t allocator_ino, libc_ino; /* the files probed */
	struct bpf_link **links;
	size_t nr_links, alloc_links;
	int *session_fds; /* the links of its uprobe sessions */
	size_t nr_session_fds, alloc_session_fds;
	uint64_t ino[NR_ALLOC_FUNCS];	 /* 0: not probed */
	uint64_t offset[NR_ALLOC_FUNCS]; /* in the file */
	/* The heap functions' code, [start, end) in the allocator file (allocator_ino). */
	uint64_t code_start[NR_ALLOC_FUNCS], code_end[NR_ALLOC_FUNCS];
};

/* A sampled block not freed yet, in the open-addressing table below. */
struct live_block {
	uint64_t addr; /* 0: an empty slot */
	uint32_t pid;
	struct stack_entry *entry;
	double bytes, blocks; /* what it stands for */
	uint64_t time_ns;
};

struct alloc {
	struct profile_bpf *skel;
	uint64_t rate;
	bool sessions;	      /* uprobe sessions, not uprobes and uretprobes */
	struct hashtab procs; /* struct alloc_proc by pid */
	/*
	 * The sampler preloaded into the command (alloc_preload.h), or NULL;
	 * the uprobes on its two functions, for every process that loads it.
	 */
	char *preload;
	struct bpf_link *preload_links[2];

	/*
	 * Blocks whose free is watched, by (pid, address): linear probing,
	 * deleted by shifting back, since frees remove as many as are added
	 * (the generic hashtab.h cannot remove).
	 */
	struct live_block *live;
	size_t live_cap, live_nr;

	double total_bytes, total_blocks; /* the heap's allocations */
	double gone_bytes, gone_blocks;	  /* live when their process exited or exec'd */
	/* The heap now and at its peak; whether the peak is yet to be copied (alloc.h). */
	double cur_bytes, cur_blocks, gmax_bytes, gmax_blocks;
	uint64_t gmax_time;
	bool peak_pending;
	struct stack_entry **changed; /* entries changed since the last copy */
	size_t nr_changed, alloc_changed;

	uint64_t unknown_frees;		 /* of blocks whose record never came */
	uint64_t trap_ns;		 /* alloc__measure_trap()'s, or 0 */
	uint64_t trap_runs, trap_run_ns; /* its runs of the program, not the targets' */
	uint64_t probed;		 /* times attach() probed a process's allocator */
};

static bool proc_eq(const void *entry, const void *key)
{
	return ((const struct alloc_proc *)entry)->pid == *(const pid_t *)key;
}

/* A random draw of the exponential distribution of mean 1, by inversion. */
static double exp_draw(void)
{
	return -log((random() + 0.5) / ((double)RAND_MAX + 1));
}

/* Does the kernel run uprobe sessions (Linux 6.13 on)? Its session kfunc says so. */
static bool kernel_has_sessions(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool yes = btf && btf__find_by_name_kind(btf, "bpf_session_is_return", BTF_KIND_FUNC) > 0;

	btf__free(btf);
	return yes;
}

int alloc__configure(struct profile_bpf *skel, uint64_t rate, uint64_t max_live)
{
	/*
	 * Sessions also for --alloc=1, whose every call is seen returning:
	 * that costs 4.8 us a malloc and free here, against 4.2 with
	 * uretprobes, but a uprobe made through perf takes the kernel a grace
	 * period to remove, one at a time: the end of a recording of ten
	 * processes waited 23 s for their 220 probes.
	 */
	bool sessions = rate && kernel_has_sessions();
	double sum = 0;

	/*
	 * What is loaded: nothing without --alloc; else a uprobe session
	 * where the kernel has them, a uprobe and a uretprobe where not.
	 */
	bpf_program__set_autoload(skel->progs.alloc_probe, rate && !sessions);
	bpf_program__set_autoload(skel->progs.alloc_ret, rate && !sessions);
	bpf_program__set_autoload(skel->progs.alloc_session, sessions);
	/* The preloaded sampler's, for a command that runs it (alloc_preload.h). */
	bpf_program__set_autoload(skel->progs.heap_sampled, rate);
	bpf_program__set_autoload(skel->progs.heap_freed, rate);
	if (sessions)
		bpf_program__set_expected_attach_type(skel->progs.alloc_session,
						      ALLOC_UPROBE_SESSION);
	if (!rate)
		return 0;
	pr_debug("alloc: %s", sessions ? "uprobe sessions" : "uprobes and uretprobes");
	skel->rodata->alloc_rate = rate;
	/*
	 * The intervals between sampling points: stratified draws of the
	 * exponential distribution, scaled so that their mean is @rate
	 * exactly (the midpoints' is 0.1% short of 1).
	 */
	for (int i = 0; i < ALLOC_NR_INTERVALS; i++)
		sum += -log((i + 0.5) / ALLOC_NR_INTERVALS);
	for (int i = 0; i < ALLOC_NR_INTERVALS; i++) {
		double v = -log((i + 0.5) / ALLOC_NR_INTERVALS) * ALLOC_NR_INTERVALS / sum;

		skel->rodata->alloc_intervals[i] = (uint64_t)(v * (double)rate + 0.5);
	}
	return bpf_map__set_max_entries(skel->maps.alloc_live,
					max_live ? max_live : ALLOC_LIVE_DEFAULT);
}

struct alloc *alloc__new(struct profile_bpf *skel, uint64_t rate, const char *preload)
{
	struct alloc *a = calloc(1, sizeof(*a));
	int nr_cpus = libbpf_num_possible_cpus(), fd;
	__s64 *left;
	__u32 zero = 0;

	if (!a)
		return NULL;
	if (preload && !(a->preload = strdup(preload))) {
		free(a);
		return NULL;
	}
	a->skel = skel;
	a->rate = rate;
	a->sessions = bpf_program__autoload(skel->progs.alloc_session);
	if (rate == 1 || nr_cpus <= 0)
		return a;
	/* Each CPU's first sampling point, drawn too: not the first byte. */
	left = calloc(nr_cpus, sizeof(*left));
	if (!left) {
		free(a);
		return NULL;
	}
	srandom(getpid() ^ (unsigned int)time(NULL));
	for (int i = 0; i < nr_cpus; i++)
		left[i] = (__s64)(exp_draw() * (double)rate) + 1;
	fd = bpf_map__fd(skel->maps.alloc_left);
	if (bpf_map_update_elem(fd, &zero, left, BPF_ANY))
		pr_debug("alloc: cannot set the first sampling points: %s", strerror(errno));
	free(left);
	return a;
}

void alloc__free(struct alloc *a)
{
	struct alloc_proc *p;
	size_t i;

	if (!a)
		return;
	alloc__detach(a);
	hashtab__for_each_entry(&a->procs, i, p) {
		free(p->links);
		free(p->session_fds);
		free(p);
	}
	hashtab__release(&a->procs);
	free(a->preload);
	free(a->live);
	free(a->changed);
	free(a);
}

/* Does the ELF file at @path define `malloc`? */
static bool defines_malloc(const char *path)
{
	struct elf_file *f = elf_file__open(path);
	uint64_t value, size;
	bool yes;

	if (!f)
		return false;
	yes = !elf__find_symbol(elf_file__elf(f), "malloc", &value, &size) && value;
	elf_file__put(f);
	return yes;
}

/* Is @path a C library (libc.so.6, libc-2.31.so, libc.musl-x86_64.so.1)? */
static bool is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	       !strncmp(base, "libc.musl", 9) || !strncmp(base, "ld-musl", 7);
}

/*
 * The variables of @pid's environment (0: ours) that decide which objects
 * the dynamic linker loads, LD_PRELOAD and LD_LIBRARY_PATH, into @env
 * (NULL-ended, room for 3), copied into @buf: all the loader we run is
 * given. Not LD_AUDIT and the like, which would run code in it.
 */
static void loader_env(pid_t pid, char *buf, size_t size, char **env)
{
	static const char *const names[] = { "LD_PRELOAD=", "LD_LIBRARY_PATH=" };
	extern char **environ;
	char from[32768], path[64];
	size_t nr = 0, used = 0, len = 0;
	ssize_t got;
	int fd;

	env[0] = NULL;
	if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/environ", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		got = fd < 0 ? -1 : read(fd, from, sizeof(from) - 1);
		if (fd >= 0)
			close(fd);
		len = got > 0 ? (size_t)got : 0;
		from[len] = '\0';
	}
	for (size_t i = 0; i < 2; i++) {
		const char *v = NULL;

		if (!pid) {
			for (char **e = environ; *e && !v; e++)
				if (!strncmp(*e, names[i], strlen(names[i])))
					v = *e;
		} else {
			for (size_t at = 0; at < len && !v; at += strlen(from + at) + 1)
				if (!strncmp(from + at, names[i], strlen(names[i])))
					v = from + at;
		}
		if (!v || strlen(v) + 1 > size - used)
			continue;
		env[nr++] = strcpy(buf + used, v);
		env[nr] = NULL;
		used += strlen(v) + 1;
	}
}

/*
 * The objects a command will load, in load order, from `ld.so --list`, a
 * list of paths: of @exe, or the interpreter of a script, with @pid's
 * environment (0: ours).
 */
static int loader_list(const char *exe, pid_t pid, char ***paths, size_t *nr)
{
	char interp[PATH_MAX], env_buf[8192], *env[3];
	char *argv[] = { (char *)SYSTEM_LOADER, (char *)"--list",
			 (char *)alloc_exec_target(exe, interp, sizeof(interp)), NULL };
	posix_spawn_file_actions_t fa;
	size_t len = 0, alloc = 0, alloc_paths = 0;
	char *out = NULL, *line, *save;
	int pipefd[2], status, err;
	pid_t child;
	ssize_t n;

	*paths = NULL;
	*nr = 0;
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	/* The loader maps the objects and prints them; it runs none of their code. */
	loader_env(pid, env_buf, sizeof(env_buf), env);
	err = posix_spawn(&child, SYSTEM_LOADER, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (err) {
		close(pipefd[0]);
		return -err;
	}
	for (;;) {
		if (array__reserve(&out, &alloc, len + 4097, 1)) {
			err = -ENOMEM;
			break;
		}
		n = read(pipefd[0], out + len, 4096);
		if (n <= 0 || len + n > LOADER_OUTPUT_MAX)
			break;
		len += n;
	}
	close(pipefd[0]);
	waitpid(child, &status, 0);
	if (err || !out) {
		free(out);
		return err ? err : -ENOMEM;
	}
	out[len] = '\0';
	/* "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "\t/lib64/ld-linux... (0x...)" */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, "=> "), *path = arrow ? arrow + 3 : line, *end;

		path += strspn(path, " \t");
		if (*path != '/')
			continue;
		end = strstr(path, " (0x");
		if (end)
			*end = '\0';
		if (array__reserve(paths, &alloc_paths, *nr + 1, sizeof(**paths)) ||
		    !((*paths)[*nr] = strdup(path))) {
			err = -ENOMEM;
			break;
		}
		(*nr)++;
	}
	free(out);
	return err;
}

static void free_paths(char **paths, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
}

/*
 * The objects of a running process @pid, as paths through its root: the
 * executable first, then the others in the order of their maps.
 */
static int mapped_objects(pid_t pid, char ***paths, size_t *nr)
{
	char name[64], line[4096], *prev = NULL;
	size_t alloc = 0;
	FILE *f;
	int err = 0;

	*paths = NULL;
	*nr = 0;
	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	if (array__reserve(paths, &alloc, 1, sizeof(**paths))) {
		fclose(f);
		return -ENOMEM;
	}
	snprintf(name, sizeof(name), "/proc/%d/exe", pid);
	(*paths)[(*nr)++] = strdup(name);
	while (fgets(line, sizeof(line), f)) {
		struct proc_maps_line l;
		char *path;

		line[strcspn(line, "\n")] = '\0';
		if (proc_maps__parse_line(line, &l) || !l.path_len || l.path[0] != '/' ||
		    !strchr(l.perms, 'x') || (prev && !strcmp(prev, l.path)))
			continue;
		if (asprintf(&path, "/proc/%d/root%.*s", pid, (int)l.path_len, l.path) < 0 ||
		    array__reserve(paths, &alloc, *nr + 1, sizeof(**paths))) {
			err = -ENOMEM;
			break;
		}
		(*paths)[(*nr)++] = path;
		prev = path + strlen(path) - l.path_len;
	}
	fclose(f);
	return err;
}

/*
 * Which of @paths (in the dynamic linker's order) allocates: the first that
 * defines malloc, counting the C library last, as a preloaded or linked
 * allocator interposes on it. And which is the C library. Indexes, or -1.
 */
static void choose_allocator(char **paths, size_t nr, ssize_t *allocator, ssize_t *libc)
{
	*allocator = *libc = -1;
	for (size_t i = 0; i < nr; i++) {
		if (is_libc(paths[i])) {
			if (*libc < 0)
				*libc = i;
			continue;
		}
		if (*allocator < 0 && defines_malloc(paths[i]))
			*allocator = i;
	}
	if (*allocator < 0 && *libc >= 0 && defines_malloc(paths[*libc]))
		*allocator = *libc;
}

/* @vaddr of the ELF file @f as a file offset, for a uprobe: 0 or -ENOENT. */
static int vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *offset)
{
	size_t nr;
	const struct elf_segment *segs = elf_file__segments(f, &nr);

	for (size_t i = 0; i < nr; i++)
		if (vaddr >= segs[i].vaddr && vaddr - segs[i].vaddr < segs[i].filesz) {
			*offset = segs[i].offset + (vaddr - segs[i].vaddr);
			return 0;
		}
	return -ENOENT;
}

/*
 * Where to probe the function at ELF address @vaddr of @elf: its entry, or
 * just past a first instruction that the kernel would have to single-step
 * out of line (two traps: 9.6 us a call on this machine, against 0.8 us
 * for an instruction it emulates) when the next one is one it emulates, a
 * push or a conditional jump, and the first changes no register an
 * argument is in. glibc's free begins with test %rdi,%rdi, its memalign
 * family with a cmpb of a global.
 */
static uint64_t probe_point(Elf *elf, uint64_t vaddr)
{
	const unsigned char *b = elf__code_bytes(elf, vaddr, 16);
	size_t skip = 0;

	if (!b)
		return vaddr;
	if (b[0] == 0x48 && b[1] == 0x85 && b[2] == 0xff)
		skip = 3; /* test %rdi,%rdi */
	else if (b[0] == 0x80 && b[1] == 0x3d)
		skip = 7; /* cmpb $imm8,disp32(%rip) */
	if (!skip)
		return vaddr;
	b += skip;
	if ((b[0] >= 0x50 && b[0] <= 0x57) || (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57) ||
	    (b[0] >= 0x70 && b[0] <= 0x7f) || (b[0] == 0x0f && (b[1] & 0xf0) == 0x80))
		return vaddr + skip;
	return vaddr;
}

/*
 * BPF_LINK_CREATE's attributes for a uprobe_multi link (Linux 6.6 on), as
 * the kernel lays them out in union bpf_attr: Debian 12's headers and
 * libbpf 1.1 predate them.
 */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
};

/*
 * Run @prog as a uprobe session at the @nr @offsets of @path in process
 * @pid, each with its cookie: the link's fd, or -errno. One link for all,
 * as each costs the kernel a grace period to remove.
 */
static int link_session(struct bpf_program *prog, pid_t pid, const char *path,
			const uint64_t *offsets, const uint64_t *cookies, size_t nr)
{
	struct uprobe_multi_attr attr;
	long fd;

	/* The kernel refuses attributes with a byte set past the fields it knows: padding too. */
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = bpf_program__fd(prog);
	attr.attach_type = ALLOC_UPROBE_SESSION;
	attr.path = (uintptr_t)path;
	attr.offsets = (uintptr_t)offsets;
	attr.cookies = (uintptr_t)cookies;
	attr.cnt = nr;
	attr.pid = pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

static int add_link(struct alloc_proc *p, struct bpf_link *link)
{
	if (array__reserve(&p->links, &p->alloc_links, p->nr_links + 1, sizeof(*p->links))) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	p->links[p->nr_links++] = link;
	return 0;
}

/* Remove @p's probes. */
static void detach_proc(struct alloc_proc *p)
{
	for (size_t i = 0; i < p->nr_links; i++)
		bpf_link__destroy(p->links[i]);
	p->nr_links = 0;
	for (size_t i = 0; i < p->nr_session_fds; i++)
		close(p->session_fds[i]);
	p->nr_session_fds = 0;
	memset(p->ino, 0, sizeof(p->ino));
}

/* Threads that remove the probes at the end, each a grace period at a time. */
#define DETACH_THREADS 8

struct detach_work {
	struct alloc_proc **procs;
	size_t nr, next;
	pthread_mutex_t lock;
};

static void *detach_thread(void *arg)
{
	struct detach_work *w = arg;

	for (;;) {
		struct alloc_proc *p = NULL;

		pthread_mutex_lock(&w->lock);
		if (w->next < w->nr)
			p = w->procs[w->next++];
		pthread_mutex_unlock(&w->lock);
		if (!p)
			return NULL;
		detach_proc(p);
	}
}

/*
 * Removing a probe waits for a grace period of the kernel's (60-100 ms
 * here): one process's take that once, a few dozen's as many times in turn,
 * while the recording's end waits. Removed from several threads, the waits
 * overlap.
 */
void alloc__detach(struct alloc *a)
{
	struct detach_work w = { .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t threads[DETACH_THREADS];
	size_t i, nr_threads = 0;
	struct alloc_proc *p;

	for (i = 0; i < 2; i++) {
		bpf_link__destroy(a->preload_links[i]);
		a->preload_links[i] = NULL;
	}
	w.procs = calloc(a->procs.nr ? a->procs.nr : 1, sizeof(*w.procs));
	hashtab__for_each_entry(&a->procs, i, p) {
		if (w.procs)
			w.procs[w.nr++] = p;
		else
			detach_proc(p);
	}
	for (; nr_threads < DETACH_THREADS && nr_threads < w.nr; nr_threads++)
		if (pthread_create(&threads[nr_threads], NULL, detach_thread, &w))
			break;
	detach_thread(&w); /* what no thread could take */
	for (i = 0; i < nr_threads; i++)
		pthread_join(threads[i], NULL);
	free(w.procs);
}

/*
 * The function alloc__measure_trap() probes: it begins with a push, as the
 * points probe_point() picks in the allocators do, which the kernel
 * emulates at a uprobe (an instruction stepped out of line costs a second
 * trap).
 */
void alloc_trap_point(void);
__asm__(".pushsection .text\n" HEAP_PROBE_POINT("alloc_trap_point") ".popsection\n");

/* Nanoseconds that @n calls of alloc_trap_point() take, the fastest of three rounds. */
static uint64_t time_trap_point(int n)
{
	void (*volatile call)(void) = alloc_trap_point;
	uint64_t best = UINT64_MAX;

	for (int round = 0; round < 3; round++) {
		struct timespec t0, t1;
		uint64_t ns;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < n; i++)
			call();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ULL + (uint64_t)t1.tv_nsec -
		     (uint64_t)t0.tv_nsec;
		if (ns < best)
			best = ns;
	}
	return best;
}

/* The offset in our program's file of alloc_trap_point(), from our maps; 0 if not found. */
static uint64_t trap_point_offset(void)
{
	uintptr_t addr = (uintptr_t)alloc_trap_point;
	struct proc_maps_line m;
	char line[PATH_MAX + 128];
	uint64_t found = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (!proc_maps__parse_line(line, &m) && addr >= m.start && addr < m.end &&
		    m.perms[2] == 'x')
			found = addr - m.start + m.pgoff;
	fclose(f);
	return found;
}

/* @prog's runs and run time so far (kernel.bpf_stats_enabled): 0 when not counted. */
static void prog_runs(const struct bpf_program *prog, uint64_t *runs, uint64_t *run_ns)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	*runs = *run_ns = 0;
	if (bpf_program__fd(prog) >= 0 &&
	    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
		*runs = info.run_cnt;
		*run_ns = info.run_time_ns;
	}
}

int alloc__measure_trap(struct alloc *a)
{
	enum {
		CALLS = 2000
	};
	uint64_t offset = trap_point_offset(), cookie = ALLOC_FUNC_MALLOC, bare, probed, runs,
		 run_ns;
	struct bpf_program *prog = a->sessions ? a->skel->progs.alloc_session :
						 a->skel->progs.alloc_probe;
	struct bpf_link *link = NULL;
	int fd = -1, err = 0;

	if (!offset)
		return -ENOENT;
	prog_runs(prog, &runs, &run_ns);
	/*
	 * Our own process is no target: the program stops at its first
	 * check, as it does for the calls of a target's threads that are not
	 * sampled, and asks for no return.
	 */
	if (a->sessions) {
		fd = link_session(prog, getpid(), "/proc/self/exe", &offset, &cookie, 1);
		err = fd < 0 ? fd : 0;
	} else {
		link = bpf_program__attach_uprobe(prog, false, getpid(), "/proc/self/exe", offset);
		err = link ? 0 : -errno;
	}
	if (err)
		return err;
	probed = time_trap_point(CALLS);
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	bare = time_trap_point(CALLS);
	a->trap_ns = probed > bare ? (probed - bare) / CALLS : 1;
	prog_runs(prog, &a->trap_runs, &a->trap_run_ns);
	a->trap_runs -= runs;
	a->trap_run_ns -= run_ns;
	return 0;
}

void alloc__cost(const struct alloc *a, struct alloc_cost *cost)
{
	const struct bpf_program *progs[] = { a->skel->progs.alloc_session,
					      a->skel->progs.alloc_probe,
					      a->skel->progs.alloc_ret };

	memset(cost, 0, sizeof(*cost));
	cost->trap_ns = a->trap_ns;
	cost->probed = a->probed;
	if (procfs__read_long("/proc/sys/kernel/bpf_stats_enabled", 0) <= 0)
		return;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		uint64_t runs, run_ns;

		prog_runs(progs[i], &runs, &run_ns);
		cost->hits += runs;
		cost->run_ns += run_ns;
	}
	/* Not the calibration's. */
	cost->hits -= cost->hits >= a->trap_runs ? a->trap_runs : cost->hits;
	cost->run_ns -= cost->run_ns >= a->trap_run_ns ? a->trap_run_ns : cost->run_ns;
}

/* The probes of one file: where each function is, and its cookie. */
struct file_probes {
	uint64_t offsets[NR_FUNCS], cookies[NR_FUNCS];
	bool returns[NR_FUNCS]; /* it allocates: its return is probed too */
	size_t nr;
};

/*
 * Where function @i of @funcs is in @f (inode @ino), into @fp unless it is
 * another name of one there already (glibc's aligned_alloc is its
 * memalign); noted in @p. 0 or -ENOENT.
 */
static int find_func(struct alloc_proc *p, size_t i, struct elf_file *f, uint64_t ino, bool glibc,
		     struct file_probes *fp)
{
	const struct alloc_func_desc *d = &funcs[i];
	uint64_t value, size, offset;
	bool allocates = d->func < NR_ALLOC_FUNCS;

	if (elf__find_symbol(elf_file__elf(f), d->name, &value, &size) || !value ||
	    vaddr_to_offset(f, probe_point(elf_file__elf(f), value), &offset))
		return -ENOENT;
	if (allocates) {
		if (d->func < ALLOC_FUNC_MMAP &&
		    !vaddr_to_offset(f, value, &p->code_start[d->func]))
			p->code_end[d->func] = p->code_start[d->func] + size;
		p->ino[d->func] = ino;
		p->offset[d->func] = offset;
	}
	for (size_t k = 0; k < fp->nr; k++)
		if (fp->offsets[k] == offset)
			return 0;
	fp->offsets[fp->nr] = offset;
	fp->cookies[fp->nr] = d->func;
	if (glibc && (d->func == ALLOC_FUNC_POSIX_MEMALIGN || d->func == ALLOC_FUNC_ALIGNED_ALLOC ||
		      d->func == ALLOC_FUNC_MEMALIGN))
		fp->cookies[fp->nr] |= ALLOC_COOKIE_SMALL_ALIGN_IS_MALLOC;
	fp->returns[fp->nr++] = allocates;
	return 0;
}

/* Attach @fp's probes in @path for @p's process. 0 or -errno. */
static int attach_probes(struct alloc *a, struct alloc_proc *p, const char *path,
			 const struct file_probes *fp)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	struct bpf_link *link;
	int err, fd;

	if (!fp->nr)
		return 0;
	if (a->sessions) {
		fd = link_session(a->skel->progs.alloc_session, p->pid, path, fp->offsets,
				  fp->cookies, fp->nr);
		if (fd < 0)
			return fd;
		if (array__reserve(&p->session_fds, &p->alloc_session_fds, p->nr_session_fds + 1,
				   sizeof(*p->session_fds))) {
			close(fd);
			return -ENOMEM;
		}
		p->session_fds[p->nr_session_fds++] = fd;
		return 0;
	}
	for (size_t k = 0; k < fp->nr; k++) {
		opts.bpf_cookie = fp->cookies[k];
		opts.retprobe = false;
		link = bpf_program__attach_uprobe_opts(a->skel->progs.alloc_probe, p->pid, path,
						       fp->offsets[k], &opts);
		err = link ? add_link(p, link) : -errno;
		if (err || !fp->returns[k])
			continue;
		opts.retprobe = true;
		link = bpf_program__attach_uprobe_opts(a->skel->progs.alloc_ret, p->pid, path,
						       fp->offsets[k], &opts);
		err = link ? add_link(p, link) : -errno;
		if (err)
			return err;
	}
	return err;
}

/* Probe the functions of @path that @libc selects (the C library's, or the allocator's). */
static int attach_file(struct alloc *a, struct alloc_proc *p, const char *path, bool libc)
{
	struct elf_file *f = elf_file__open(path);
	struct file_probes fp = { .nr = 0 };
	bool glibc = is_libc(path);
	struct stat st;
	int err = 0;

	if (!f || stat(path, &st))
		return -errno;
	for (size_t i = 0; i < NR_FUNCS && !err; i++) {
		if (funcs[i].libc != libc)
			continue;
		err = find_func(p, i, f, st.st_ino, glibc, &fp);
		if (err == -ENOENT && !funcs[i].required)
			err = 0;
		else if (err)
			pr_debug("pid %d: no %s in %s", p->pid, funcs[i].name, path);
	}
	elf_file__put(f);
	if (!err)
		err = attach_probes(a, p, path, &fp);
	if (err == -ESRCH) /* it exited meanwhile: nothing to miss */
		pr_debug("pid %d exited before its allocator was probed", p->pid);
	else if (err)
		pr_debug("pid %d: cannot probe %s: %s", p->pid, path, strerror(-err));
	return err;
}

/* The inode of the file at @path, or 0. */
static uint64_t file_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

static bool same_file(const char *path, uint64_t ino)
{
	return ino && file_ino(path) == ino;
}

/*
 * The uprobes on the preloaded sampler's two functions: one each, on its
 * file, for every process (the BPF programs count only targets' calls).
 */
static int attach_preload(struct alloc *a)
{
	struct bpf_program *progs[2] = { a->skel->progs.heap_sampled, a->skel->progs.heap_freed };
	const char *names[2] = { HEAP_SAMPLED_FUNC, HEAP_FREED_FUNC };
	struct elf_file *f;
	int err = 0;

	if (a->preload_links[0])
		return 0;
	f = elf_file__open(a->preload);
	if (!f)
		return -errno;
	for (int i = 0; i < 2 && !err; i++) {
		uint64_t value, size, offset;

		if (elf__find_symbol(elf_file__elf(f), names[i], &value, &size) ||
		    vaddr_to_offset(f, value, &offset)) {
			err = -ENOENT;
			pr_warn("%s: no function %s", a->preload, names[i]);
			break;
		}
		a->preload_links[i] =
			bpf_program__attach_uprobe(progs[i], false, -1, a->preload, offset);
		if (!a->preload_links[i]) {
			err = -errno;
			pr_warn("cannot probe %s in %s: %s", names[i], a->preload, strerror(-err));
		}
	}
	elf_file__put(f);
	return err;
}

/* alloc__attach(); @before_exec: @exe is what @pid is about to exec, not what it runs. */
static int attach(struct alloc *a, pid_t pid, const char *exe, bool before_exec)
{
	ssize_t allocator, libc;
	struct alloc_proc *p;
	char **paths;
	size_t nr;
	bool added;
	int err;

	/* A command not started yet has our environment; another, its own. */
	err = exe ? loader_list(exe, before_exec ? 0 : pid, &paths, &nr) :
		    mapped_objects(pid, &paths, &nr);
	if (!err && exe && !nr) {
		/* A static program (or one the system loader does not know): itself only. */
		paths = malloc(sizeof(*paths));
		if (!paths || !(paths[0] = strdup(exe)))
			err = -ENOMEM;
		nr = err ? 0 : 1;
	}
	if (err) {
		pr_debug("pid %d: cannot find the objects of %s: %s", pid,
			 exe ? exe : "its program", strerror(-err));
		free_paths(paths, nr);
		return err;
	}
	choose_allocator(paths, nr, &allocator, &libc);
	if (allocator < 0) {
		pr_debug("pid %d: none of %zu objects defines malloc", pid, nr);
		free_paths(paths, nr);
		return ALLOC_NO_ALLOCATOR;
	}
	p = hashtab__find_or_add(&a->procs, hash_mix(0, pid), proc_eq, &pid, sizeof(*p), &added);
	if (!p) {
		free_paths(paths, nr);
		return -ENOMEM;
	}
	p->pid = pid;
	p->before_exec = before_exec;
	/*
	 * A process that exec'd a program with the same allocator: its probes
	 * (on the files, for its pid) hold in the new program as they did in
	 * the old, and stay, with no gap. Else they go: they would catch the
	 * new program's calls too.
	 */
	if (p->nr_links + p->nr_session_fds && same_file(paths[allocator], p->allocator_ino) &&
	    (libc < 0 || same_file(paths[libc], p->libc_ino))) {
		free_paths(paths, nr);
		return 0;
	}
	detach_proc(p);
	p->allocator_ino = file_ino(paths[allocator]);
	p->libc_ino = libc >= 0 ? file_ino(paths[libc]) : 0;
	pr_info("pid %d: allocator %s", pid, paths[allocator]);
	err = attach_file(a, p, paths[allocator], false);
	if (!err && libc >= 0)
		err = attach_file(a, p, paths[libc], true);
	if (!err)
		a->probed++;
	free_paths(paths, nr);
	return err;
}

int alloc__exec(struct alloc *a, pid_t pid)
{
	struct alloc_proc *p = hashtab__find(&a->procs, hash_mix(0, pid), proc_eq, &pid);
	char link[64], exe[PATH_MAX];
	ssize_t n;

	if (p && p->before_exec) {
		p->before_exec = false; /* the exec it was probed for */
		return 0;
	}
	/* The sampler's probes take its calls: its allocator's would count them twice. */
	if (a->preload && alloc_preload__runs(pid, a->preload)) {
		if (p)
			detach_proc(p);
		return 0;
	}
	/*
	 * Its program by name, for the loader we run: it has none of our
	 * capabilities, which /proc/PID/exe of another user's process needs.
	 */
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	return attach(a, pid, exe, false);
}

int alloc__attach(struct alloc *a, pid_t pid, const char *exe)
{
	/* The command, started with the sampler preloaded. */
	if (exe && a->preload)
		return attach_preload(a);
	return attach(a, pid, exe, exe != NULL);
}

bool alloc__maps_hold(struct alloc *a, const struct proc_maps *maps, const struct sample_event *e)
{
	if (e->stack.flags & SAMPLE_ALLOC_PRELOADED)
		return e->stack.nr_user && proc_maps__find(maps, e->stack.user[0]);
	return alloc__func_address(a, maps, e) != 0;
}

uint64_t alloc__func_address(struct alloc *a, const struct proc_maps *maps,
			     const struct sample_event *e)
{
	pid_t pid = e->pid;
	const struct alloc_proc *p = hashtab__find(&a->procs, hash_mix(0, pid), proc_eq, &pid);
	uint64_t ino, offset;

	if (!p || !maps || e->alloc_func >= NR_ALLOC_FUNCS || !p->ino[e->alloc_func])
		return 0;
	ino = p->ino[e->alloc_func];
	offset = p->offset[e->alloc_func];
	for (size_t i = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];

		if (m->file && m->file->ino == ino && offset >= m->pgoff &&
		    offset - m->pgoff < m->end - m->start)
			return m->start + (offset - m->pgoff);
	}
	return 0;
}

bool alloc__by_allocator(struct alloc *a, const struct proc_maps *maps,
			 const struct sample_event *e)
{
	pid_t pid = e->pid;
	const struct alloc_proc *p = hashtab__find(&a->procs, hash_mix(0, pid), proc_eq, &pid);

	if (!p || !maps || e->alloc_func != ALLOC_FUNC_MMAP)
		return false;
	/* Its callers: return addresses, each in the call before it. */
	for (uint16_t i = 0; i < e->stack.nr_user; i++) {
		const struct proc_map *m = proc_maps__find(maps, e->stack.user[i] - (i > 0));
		uint64_t off;

		if (!m || !m->file || m->file->ino != p->allocator_ino)
			continue;
		off = e->stack.user[i] - (i > 0) - m->start + m->pgoff;
		for (int f = 0; f < ALLOC_FUNC_MMAP; f++)
			if (off >= p->code_start[f] && off < p->code_end[f])
				return true;
	}
	return false;
}

static uint64_t live_hash(uint32_t pid, uint64_t addr)
{
	return hash_mix(pid, addr);
}

static int live_grow(struct alloc *a)
{
	size_t cap = a->live_cap ? 2 * a->live_cap : 1024;
	struct live_block *old = a->live, *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < a->live_cap; i++) {
		size_t j;

		if (!old[i].addr)
			continue;
		for (j = live_hash(old[i].pid, old[i].addr) & (cap - 1); slots[j].addr;
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = old[i];
	}
	free(old);
	a->live = slots;
	a->live_cap = cap;
	return 0;
}

static int live_add(struct alloc *a, const struct live_block *b)
{
	size_t i;

	if ((a->live_nr + 1) * 4 > a->live_cap * 3 && live_grow(a))
		return -ENOMEM;
	for (i = live_hash(b->pid, b->addr) & (a->live_cap - 1); a->live[i].addr;
	     i = (i + 1) & (a->live_cap - 1))
		if (a->live[i].pid == b->pid && a->live[i].addr == b->addr)
			break; /* a block whose free never came: this one replaces it */
	if (!a->live[i].addr)
		a->live_nr++;
	a->live[i] = *b;
	return 0;
}

/* Take the block of @pid at @addr out of the table into @b: false when it is not there. */
static bool live_take(struct alloc *a, uint32_t pid, uint64_t addr, struct live_block *b)
{
	size_t mask = a->live_cap - 1, i, j;

	if (!a->live_cap)
		return false;
	for (i = live_hash(pid, addr) & mask; a->live[i].addr; i = (i + 1) & mask)
		if (a->live[i].pid == pid && a->live[i].addr == addr)
			break;
	if (!a->live[i].addr)
		return false;
	*b = a->live[i];
	/* Shift back the entries after it whose probe sequence passes through the hole. */
	for (j = (i + 1) & mask; a->live[j].addr; j = (j + 1) & mask) {
		size_t home = live_hash(a->live[j].pid, a->live[j].addr) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			a->live[i] = a->live[j];
			i = j;
		}
	}
	a->live[i].addr = 0;
	a->live_nr--;
	return true;
}

static int note_changed(struct alloc *a, struct stack_entry *s)
{
	if (s->alloc.changed)
		return 0;
	if (array__reserve(&a->changed, &a->alloc_changed, a->nr_changed + 1, sizeof(*a->changed)))
		return -ENOMEM;
	a->changed[a->nr_changed++] = s;
	s->alloc.changed = true;
	return 0;
}

/* The heap is leaving a peak: each entry changed since the last one holds its share of it. */
static void copy_peak(struct alloc *a)
{
	for (size_t i = 0; i < a->nr_changed; i++) {
		struct stack_alloc *s = &a->changed[i]->alloc;

		s->gmax_bytes = s->cur_bytes;
		s->gmax_blocks = s->cur_blocks;
		s->changed = false;
	}
	a->nr_changed = 0;
	a->peak_pending = false;
}

int alloc__add(struct alloc *a, struct stack_entry *s, const struct sample_event *e)
{
	struct stack_alloc *sa = &s->alloc;
	double size = (double)e->weight_ns, blocks = 1;
	struct live_block b;
	int err;

	/*
	 * The preloaded sampler says how many of its sampling points the
	 * block's bytes reached, each standing for @rate bytes. A block the
	 * BPF program sampled, with probability 1 - e^(-size/rate), stands for
	 * 1 / that many.
	 */
	if (a->rate > 1 && e->alloc_points && e->weight_ns)
		blocks = (double)e->alloc_points * (double)a->rate / size;
	else if (a->rate > 1 && e->weight_ns)
		blocks = 1 / -expm1(-size / (double)a->rate);
	sa->mmap = e->alloc_func == ALLOC_FUNC_MMAP;
	sa->bytes += size * blocks;
	sa->blocks += blocks;
	sa->cur_bytes += size * blocks;
	sa->cur_blocks += blocks;
	if (sa->cur_bytes > sa->max_bytes || !sa->max_blocks) {
		sa->max_bytes = sa->cur_bytes;
		sa->max_blocks = sa->cur_blocks;
	}
	if (!sa->first_ns || e->time_ns < sa->first_ns)
		sa->first_ns = e->time_ns;
	if (e->time_ns > sa->last_ns)
		sa->last_ns = e->time_ns;
	if (!sa->mmap) {
		err = note_changed(a, s);
		if (err)
			return err;
		a->total_bytes += size * blocks;
		a->total_blocks += blocks;
		a->cur_bytes += size * blocks;
		a->cur_blocks += blocks;
		if (a->cur_bytes > a->gmax_bytes) {
			a->gmax_bytes = a->cur_bytes;
			a->gmax_blocks = a->cur_blocks;
			a->gmax_time = e->time_ns;
			a->peak_pending = true;
		}
	}
	/* Never freed as far as we can tell: live to the end, counted as untracked. */
	if (e->stack.flags & SAMPLE_ALLOC_UNTRACKED)
		return 0;
	b = (struct live_block){
		.addr = e->alloc_addr,
		.pid = e->pid,
		.entry = s,
		.bytes = size * blocks,
		.blocks = blocks,
		.time_ns = e->time_ns,
	};
	return live_add(a, &b);
}

void alloc__release(struct alloc *a, const struct free_event *e)
{
	struct stack_alloc *sa;
	struct live_block b;

	if (!live_take(a, e->pid, e->addr, &b)) {
		a->unknown_frees++;
		return;
	}
	sa = &b.entry->alloc;
	if (!sa->mmap) {
		if (a->peak_pending)
			copy_peak(a);
		a->cur_bytes -= b.bytes;
		a->cur_blocks -= b.blocks;
		if (note_changed(a, b.entry))
			a->peak_pending = true; /* copied at the end, whole, instead */
	}
	sa->cur_bytes -= b.bytes;
	sa->cur_blocks -= b.blocks;
	if (e->time_ns > b.time_ns)
		sa->lifetime_ns += (double)(e->time_ns - b.time_ns) * b.blocks;
}

void alloc__exit(struct alloc *a, pid_t pid, uint64_t time_ns)
{
	int fd = bpf_map__fd(a->skel->maps.alloc_live);
	size_t i = 0;

	if (a->peak_pending)
		copy_peak(a); /* the heap is about to shrink */
	while (i < a->live_cap) {
		struct live_block b = a->live[i];
		struct alloc_key key = { .pid = pid, .addr = b.addr };
		struct stack_alloc *sa;

		/* Taking a block shifts others back into its slot: look at it again. */
		if (!b.addr || b.pid != (uint32_t)pid || !live_take(a, b.pid, b.addr, &b)) {
			i++;
			continue;
		}
		bpf_map_delete_elem(fd, &key);
		sa = &b.entry->alloc;
		sa->cur_bytes -= b.bytes;
		sa->cur_blocks -= b.blocks;
		sa->gone_bytes += b.bytes;
		sa->gone_blocks += b.blocks;
		if (time_ns > b.time_ns)
			sa->lifetime_ns += (double)(time_ns - b.time_ns) * b.blocks;
		if (!sa->mmap) {
			a->cur_bytes -= b.bytes;
			a->cur_blocks -= b.blocks;
			a->gone_bytes += b.bytes;
			a->gone_blocks += b.blocks;
			if (note_changed(a, b.entry))
				a->peak_pending = true;
		}
	}
}

void alloc__finish(struct alloc *a, uint64_t end_ns)
{
	if (a->peak_pending)
		copy_peak(a);
	for (size_t i = 0; i < a->live_cap; i++) {
		const struct live_block *b = &a->live[i];

		if (b->addr && end_ns > b->time_ns)
			b->entry->alloc.lifetime_ns += (double)(end_ns - b->time_ns) * b->blocks;
	}
}

void alloc__stats(const struct alloc *a, struct profile_stats *stats, uint64_t *gmax_time)
{
	__u64 *values, sums[STAT__MAX] = { 0 };
	int nr_cpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(a->skel->maps.stats);

	stats->alloc_bytes = (uint64_t)(a->total_bytes + 0.5);
	stats->alloc_blocks = (uint64_t)(a->total_blocks + 0.5);
	stats->alloc_gmax_bytes = (uint64_t)(a->gmax_bytes + 0.5);
	stats->alloc_gmax_blocks = (uint64_t)(a->gmax_blocks + 0.5);
	stats->alloc_end_bytes = (uint64_t)(a->cur_bytes + a->gone_bytes + 0.5);
	stats->alloc_end_blocks = (uint64_t)(a->cur_blocks + a->gone_blocks + 0.5);
	*gmax_time = a->gmax_time;
	values = nr_cpus > 0 ? calloc(nr_cpus, sizeof(*values)) : NULL;
	for (__u32 k = STAT_LOST_ALLOCS; values && k <= STAT_FOREIGN_FREES; k++)
		if (!bpf_map_lookup_elem(fd, &k, values))
			for (int cpu = 0; cpu < nr_cpus; cpu++)
				sums[k] += values[cpu];
	free(values);
	stats->alloc_lost = sums[STAT_LOST_ALLOCS];
	/* A lost free leaves its block live to the end: as wrong as one not watched. */
	stats->alloc_untracked = sums[STAT_ALLOC_UNTRACKED] + sums[STAT_LOST_FREES];
	stats->alloc_foreign_frees = sums[STAT_FOREIGN_FREES];
}
