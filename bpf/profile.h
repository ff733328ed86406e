/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.h - what the BPF program and user space share: the ring-buffer
 * records and the per-CPU counters. Fixed-size __u* types only, so both sides
 * agree on the layout. Every record starts with its __u32 type.
 */
#ifndef PROFILER_BPF_PROFILE_H
#define PROFILER_BPF_PROFILE_H

#ifndef __bpf__
#include <linux/types.h> /* the BPF side has them from vmlinux.h */
#endif

/*
 * The most frames of a kernel stack, and of a user stack that the kernel
 * walks by its frame pointers (--call-graph fp): the kernel's default
 * perf_event_max_stack, which bpf_get_stack() obeys.
 */
#define PROFILE_MAX_STACK 127
/*
 * The most frames of a user stack unwound from unwind tables, in the BPF
 * program or from a copy in user space (--max-frames): Java, Go and deep
 * C++ (a compiler's parser) run deeper than 127.
 */
#define PROFILE_MAX_USER_STACK 1024
#define PROFILE_COMM_LEN 16
#define PROFILE_MAX_TARGETS 16384
/* Threads off CPU at once whose stacks are kept until they run again. */
#define PROFILE_MAX_OFFCPU 65536
/* Sums of short intervals off CPU (by thread and stack) kept at once. */
#define PROFILE_MAX_OFFCPU_SUMS 16384
/* Counts of on-CPU samples (by thread and stack) kept at once: 1.4 MiB of kernel memory. */
#define PROFILE_MAX_SAMPLE_SUMS 16384

/*
 * The user registers a sample records, indexed by their DWARF numbers in the
 * x86-64 psABI (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, then the
 * return-address column, rip), so CFI rules index them directly.
 */
#define PROFILE_NR_REGS 17
#define PROFILE_REG_BP 6
#define PROFILE_REG_SP 7
#define PROFILE_REG_IP 16
/*
 * Bytes of user stack every sample copies from the stack pointer: a leaf
 * function that has not set up its frame pointer keeps its return address
 * there, above the few registers it may have pushed.
 */
#define PROFILE_LEAF_STACK_BYTES 256
/* The most --call-graph dwarf copies: perf's limit too. */
#define PROFILE_MAX_STACK_COPY 65528

/* Values in the `targets` map. */
#define TARGET_ACTIVE 1
#define TARGET_AT_EXEC 2 /* a command not started yet: active from its exec on */
/* Or'ed in by the BPF program: sampled since it became a target or exec'd. */
#define TARGET_SEEN 0x80

enum event_type {
	EVENT_SAMPLE = 1, /* struct sample_head: an on-CPU sample */
	EVENT_OFFCPU,	  /* struct sample_head: an interval off CPU */
	EVENT_FORK,	  /* struct process_event: a target forked a process */
	EVENT_EXEC,	  /* struct process_event: a process exec'd */
	EVENT_ALLOC,	  /* struct sample_head: a sampled allocation (--alloc) */
	EVENT_FREE,	  /* struct free_event: a sampled block freed */
};

/* sample_head.flags */
#define SAMPLE_USER_TRUNCATED (1U << 0)	  /* the user stack filled its buffer */
#define SAMPLE_KERNEL_TRUNCATED (1U << 1) /* the kernel stack filled its buffer */
#define SAMPLE_USER_ERROR (1U << 2)	  /* bpf_get_stack() failed on the user stack */
#define SAMPLE_KERNEL_ERROR (1U << 3)	  /* ... on the kernel stack */
#define SAMPLE_USER_REGS (1U << 4)	  /* the record carries the user registers */
#define SAMPLE_USER_UNWOUND (1U << 5)	  /* the user stack was unwound from unwind tables */
#define SAMPLE_USER_COMPLETE (1U << 6)	  /* ... and reached the outermost frame */
#define SAMPLE_USER_STALE (1U << 7)	  /* ... through code its process's tables do not map */
/* Why a user stack unwound from tables ended short: one of UNWIND_STOP_*, in flags. */
#define SAMPLE_STOP_SHIFT 8
#define SAMPLE_STOP_MASK (7U << SAMPLE_STOP_SHIFT)
#define SAMPLE_PYTHON_TRUNCATED                                                                    \
	(1U << 11)		       /* the Python stack had more frames than the record holds */
#define SAMPLE_PYTHON_ERROR (1U << 12) /* a Python frame could not be read: the rest is missing */
/* EVENT_ALLOC: no room in alloc_live to watch for the block's free: it counts as live to the end. */
#define SAMPLE_ALLOC_UNTRACKED (1U << 13)
/*
 * EVENT_SAMPLE: the first sample of its thread with these stacks; the later
 * ones are counted in the kernel (`sample_sums`), not sent.
 */
#define SAMPLE_SUMMED (1U << 14)
/* Frames of the user stack are JavaScript functions (V8_FRAME_TAG), not addresses. */
#define SAMPLE_V8_FRAMES (1U << 15)
/*
 * EVENT_ALLOC: sampled by the preloaded sampler (preload/heap.c): the user
 * stack's leaf is its probe, above the allocation function it wraps.
 */
#define SAMPLE_ALLOC_PRELOADED (1U << 16)

enum unwind_stop_reason {
	UNWIND_STOP_NONE,
	UNWIND_STOP_NO_INFO,	 /* code its file has no unwind information for */
	UNWIND_STOP_UNSUPPORTED, /* a rule the BPF program cannot follow */
	UNWIND_STOP_FP,		 /* code without a table whose frame pointer led nowhere */
	UNWIND_STOP_READ,	 /* stack memory that could not be read */
	UNWIND_STOP_MAX_FRAMES,	 /* more frames than the walk may write (--max-frames) */
	UNWIND_STOP_NEW_CODE,	 /* code mapped since the process's tables were loaded */
	UNWIND_STOP_NO_ROOM,	 /* code whose file's table did not fit */
};

/* Indexes of the per-CPU `stats` array. */
enum profile_stat {
	STAT_LOST_SAMPLES,     /* on-CPU samples lost: no room in the ring buffer */
	STAT_USER_STACK_ERROR, /* records written (or counted) whose user stack could not be read */
	STAT_KERNEL_STACK_ERROR, /* ... whose kernel stack could not be read */
	STAT_TRUNCATED,		 /* ... with a truncated stack */
	STAT_OFFCPU_DROPPED,	 /* off-CPU intervals lost: too many threads off CPU */
	STAT_NO_TABLES,		 /* records whose process had no unwind tables loaded yet */
	STAT_LOST_OFFCPU,	 /* off-CPU records lost: no room in the ring buffer */
	STAT_LOST_PROCESS,	 /* fork and exec records lost: no room in the ring buffer */
	STAT_OFFCPU_SUMS_FULL,	 /* short intervals sent alone: no room to sum them */
	STAT_PYTHON_TRUNCATED,	 /* records whose Python stack filled its room */
	STAT_PYTHON_ERROR,	 /* records whose Python stack ended at memory it could not read */
	STAT_LOST_ALLOCS,	 /* sampled allocations lost: no room in the ring buffer */
	STAT_LOST_FREES,	 /* frees of sampled blocks lost: ... */
	STAT_ALLOC_UNTRACKED,	 /* sampled blocks not watched: alloc_live full */
	STAT_FOREIGN_FREES,	 /* --alloc=1: frees of blocks never seen allocated */
	STAT_SUMMED,		 /* on-CPU samples counted in `sample_sums`, not sent */
	STAT_SUMS_FULL,		 /* ... sent: no room in `sample_sums` to count their stacks */
	STAT_OFFCPU_SHORT,	 /* off-CPU intervals shorter than offcpu_min_ns, left out */
	STAT_OFFCPU_SHORT_NS,	 /* ... their total length */
	STAT_SAMPLE_RUNS,	 /* profile_sample's runs: the samples the kernel handed it */
	STAT_SAMPLE_DUE,	 /* firings of its clock's timer: the samples the kernel took */
	/* (both but in the idle task) */
	STAT__MAX,
};

/*
 * EVENT_SAMPLE and EVENT_OFFCPU records: this head, then @nr_ips_room
 * addresses of which the first @nr_kernel are the kernel stack and the next
 * @nr_user the user stack, each leaf first, then @nr_python Python frames
 * of two words each (struct python_frame's layout), innermost first. A record whose stack was
 * unwound in the kernel ends there, with no room to spare: most are a few
 * hundred bytes. One flagged SAMPLE_USER_REGS goes on with the user
 * registers (PROFILE_NR_REGS words) and @user_stack_size bytes of user
 * stack, from the stack pointer up, for user space to unwind.
 */
struct sample_head {
	__u32 type;
	__u32 cpu;
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC; off CPU: when it left */
	/*
	 * Off CPU: how long, all @nr_intervals together; 0 for samples.
	 * EVENT_ALLOC: the bytes asked for.
	 */
	__u64 weight_ns;
	__u32 pid; /* thread group id */
	__u32 tid;
	__u32 flags; /* SAMPLE_* */
	__u16 nr_kernel;
	__u16 nr_user;
	char comm[PROFILE_COMM_LEN];  /* the thread's name */
	char pcomm[PROFILE_COMM_LEN]; /* the thread group leader's name */
	__u32 nr_ips_room;	      /* addresses that follow, used or not */
	__u32 user_stack_size; /* with SAMPLE_USER_REGS: bytes of stack after the registers */
	/*
	 * Off CPU: the intervals this record stands for. Short ones of one
	 * thread and stack are summed in the BPF program (--wall), from the
	 * first one's @time_ns on. 1 for samples; user space sets it to the
	 * count of the samples the program counted after this one (SAMPLE_SUMMED).
	 */
	__u32 nr_intervals;
	__u16 nr_python;  /* Python frames after the user stack */
	__u16 alloc_func; /* EVENT_ALLOC: which function (enum alloc_func); else 0 */
	/*
	 * How many times the process had mapped a file's code since it was
	 * first sampled (sample.bpf.h's code_gens): a stack's addresses are
	 * another library's once it has unloaded one and loaded another in
	 * its place. 0 until it does.
	 */
	__u32 code_gen;
	/*
	 * EVENT_ALLOC from the preloaded sampler (SAMPLE_ALLOC_PRELOADED): how
	 * many of its sampling points the block's bytes reached; it stands for
	 * that many times the sampling rate in bytes. Else 0.
	 */
	__u32 alloc_points;
	union {
		__u64 alloc_addr; /* EVENT_ALLOC: the block's address */
		/*
		 * On-CPU samples of a Go program (go_procs): the address of
		 * its goroutine's pprof labels (runtime.g's labels), which
		 * user space reads; else 0.
		 */
		__u64 go_labels;
	};
};

/*
 * A target thread's time on CPU (--wall), by the clock and at the switches
 * that time its intervals off CPU, so that the two add up to its time.
 */
struct thread_oncpu {
	__u64 oncpu_ns; /* on CPU, up to when it last left one */
	__u64 in_ns;	/* when it last came back on CPU; 0: off CPU (or not seen back) */
	__u32 pid;
	__u32 exited; /* counted to its exit: what follows is not its own */
};

/*
 * A sum of short intervals off CPU, or a count of on-CPU samples: which
 * thread, with which stacks.
 */
struct sum_key {
	__u32 tid;
	/*
	 * On CPU: the thread's process (a tid reused by another process is
	 * another thread), or for an idle thread (tid 0, one per CPU) its CPU.
	 * Off CPU: 0.
	 */
	__u32 pid;
	__u64 stack_hash; /* profile_stack_hash() (and, off CPU, the leaf registers) */
};

/* The most Python frames a record holds: a power of two (the BPF program masks with it - 1). */
#define PROFILE_MAX_PYTHON 64

/* The most words of addresses a record holds: both stacks whole, and its Python frames. */
#define PROFILE_MAX_IPS (PROFILE_MAX_STACK + PROFILE_MAX_USER_STACK + 2 * PROFILE_MAX_PYTHON)

/*
 * A whole record, as the BPF program builds it before it sends the part
 * that is used: the per-CPU scratch of on-CPU samples, and the value by
 * which the `offcpu` map keeps a target thread off CPU (by tid) until it
 * runs again (user space reads those still off CPU when profiling stops).
 */
struct sample_record {
	struct sample_head h;
	__u64 ips[PROFILE_MAX_IPS];
	/* With SAMPLE_USER_REGS: the user registers, then the top of the user stack. */
	__u64 user_regs[PROFILE_NR_REGS];
	__u8 user_stack[PROFILE_LEAF_STACK_BYTES];
};

/*
 * What tells @r's stacks apart, hashed (FNV-1a over whole words): its flags
 * but SAMPLE_SUMMED, its thread's name and its addresses. The BPF program
 * keys its sums with it, and user space finds by it the record a count of
 * samples goes with, so both compute it here. @r may be a record as sent,
 * with room for only the addresses it holds.
 */
static inline __attribute__((always_inline)) __u64 profile_stack_hash(const struct sample_record *r)
{
	const __u64 prime = 0x100000001b3ULL;
	__u32 n = r->h.nr_kernel + r->h.nr_user + 2 * r->h.nr_python;
	__u64 h = 0xcbf29ce484222325ULL, comm[2];

	__builtin_memcpy(comm, r->h.comm, sizeof(comm));
	h = (h ^ (r->h.flags & ~SAMPLE_SUMMED) ^ ((__u64)r->h.nr_kernel << 32)) * prime;
	h = (h ^ comm[0]) * prime;
	h = (h ^ comm[1]) * prime;
	/* Samples of goroutines with other labels are counted apart, and the same addresses in other code. */
	h = (h ^ r->h.go_labels) * prime;
	h = (h ^ r->h.code_gen) * prime;
	/* A bound the verifier sees. */
	for (__u32 i = 0; i < PROFILE_MAX_IPS; i++) {
		if (i >= n)
			break;
		h = (h ^ r->ips[i]) * prime;
	}
	return h;
}

/*
 * The key of the count of sample @r's thread and stacks, taken on CPU @cpu
 * (the BPF program's, or the record's as sent): the same on both sides.
 */
static inline __attribute__((always_inline)) struct sum_key
profile_sum_key(const struct sample_record *r, __u32 cpu)
{
	/* The idle threads (tid 0) are one per CPU: keyed by theirs, no two CPUs share a count. */
	struct sum_key key = { .tid = r->h.tid, .pid = r->h.tid ? r->h.pid : cpu };

	key.stack_hash = profile_stack_hash(r);
	return key;
}

/*
 * Unwind tables (--call-graph cfi, the default). User space turns each
 * mapped file's call frame information into rows sorted by address, each
 * saying from where on, up to the next row, which rule finds the caller:
 * all files' rows in one array (unwind_rows), each file a slice of it, the
 * rules (few distinct ones) in another (unwind_rules). A process's
 * executable mappings, sorted by address, say which slice covers which
 * addresses (unwind_procs).
 */
struct unwind_row {
	__u32 pc;   /* the file's address (ELF vaddr) this row starts at */
	__u32 rule; /* index into unwind_rules */
};

/* How the canonical frame address (the caller's stack pointer) is found. */
enum unwind_cfa {
	UNWIND_CFA_NONE,	/* no unwind information here: the stack ends, truncated */
	UNWIND_CFA_SP,		/* rsp + cfa_off */
	UNWIND_CFA_BP,		/* rbp + cfa_off */
	UNWIND_CFA_PLT,		/* rsp + cfa_off, + 8 when (rip & 15) >= bp_off: a PLT entry */
	UNWIND_CFA_DEREF_BP,	/* *(rbp + cfa_off): a function that realigned its stack */
	UNWIND_CFA_SIGNAL,	/* a signal trampoline: the registers are in the ucontext at rsp */
	UNWIND_CFA_END,		/* the outermost frame: the stack is whole */
	UNWIND_CFA_UNSUPPORTED, /* a rule the BPF program cannot follow: truncated */
	UNWIND_CFA_NO_ROOM,	/* the file's table did not fit in unwind_rows: truncated */
	/*
	 * Code without CFI in a file whose code keeps frame pointers (Go's):
	 * the caller's frame is at rbp, as for a mapping without a table.
	 */
	UNWIND_CFA_FP,
	/*
	 * As UNWIND_CFA_FP, in a function that runs its callee on another
	 * stack (Go's systemstack, mcall, asmcgocall, morestack): rbp leads
	 * back to the stack it came from, which may be below this one.
	 */
	UNWIND_CFA_FP_SWITCH,
};

/* Where the caller's rbp is. */
enum unwind_bp {
	UNWIND_BP_SAME,	  /* rbp is unchanged */
	UNWIND_BP_AT_CFA, /* saved at cfa + bp_off */
	UNWIND_BP_AT_BP,  /* saved at rbp + bp_off */
	UNWIND_BP_LOST,	  /* not known any more */
};

/* The return address is always at cfa - 8 (x86-64); rows with another rule are unsupported. */
struct unwind_rule {
	__s32 cfa_off;
	__s16 bp_off; /* UNWIND_CFA_PLT: the low bits of rip from which the CFA is 8 higher */
	__u8 cfa;     /* UNWIND_CFA_* */
	__u8 bp;      /* UNWIND_BP_* */
};

/* Rules 0-2 are UNWIND_CFA_NONE, _UNSUPPORTED and _NO_ROOM, whatever else is loaded. */
#define UNWIND_RULE_NONE 0
#define UNWIND_RULE_UNSUPPORTED 1
#define UNWIND_RULE_NO_ROOM 2
#define PROFILE_MAX_UNWIND_RULES 65536
/* Executable mappings of one process that the unwinder knows. */
#define PROFILE_MAX_UNWIND_MAPPINGS 256
/* Processes whose unwind mappings are loaded at once. */
#define PROFILE_MAX_UNWIND_PROCS 8192
/* unwind_mapping.nr_rows of code without a table: walk its frame pointers. */
#define UNWIND_MAPPING_FP 0
/*
 * A file's rows are indexed by pages of its addresses this large (64 KiB):
 * after its nr_rows rows, its slice holds nr_pages + 1 more, the Nth of
 * which has in .pc the index (from first_row) of the last row at or below
 * the start of page page_base + N (0 when none is). A frame's row is then
 * searched for among the rows of its page, a few cache lines, rather than
 * among all of a large library's, a cache miss a step.
 */
#define UNWIND_PAGE_SHIFT 16

struct unwind_mapping {
	__u64 start, end; /* the addresses mapped */
	__u64 bias;	  /* address - bias = the file's address, as in unwind_row.pc */
	__u32 first_row;  /* the file's slice of unwind_rows */
	__u32 nr_rows;	  /* UNWIND_MAPPING_FP: none */
	__u32 page_base;  /* the first page indexed: its first row's pc >> UNWIND_PAGE_SHIFT */
	__u32 nr_pages;	  /* pages indexed after its rows; 0: none, search them all */
};

struct unwind_proc {
	__u32 nr; /* valid entries in mappings[], sorted by start, not overlapping */
	__u32 pad;
	struct unwind_mapping mappings[PROFILE_MAX_UNWIND_MAPPINGS];
};

/*
 * CPython. For a process running a supported interpreter, user space loads
 * where its _PyRuntime is and the offsets of the fields the BPF program
 * follows to the sampled thread's frames (python_procs, by tgid): from
 * _PyRuntime through every interpreter's thread states to the one whose
 * thread_id is the thread's pthread_self() (its fs base), then along its
 * frames. Each frame is recorded as two words (struct python_frame), which
 * user space turns into names by reading the code objects.
 */
#define PY_NO_FIELD 0xffff /* a field this version does not have */

struct python_offsets {
	__u16 version;			 /* 0x030b: 3.11 */
	__u16 runtime_interpreters_head; /* _PyRuntimeState.interpreters.head */
	__u16 interp_next;		 /* PyInterpreterState.next */
	__u16 interp_threads_head;	 /* PyInterpreterState.threads.head */
	__u16 tstate_next;		 /* PyThreadState.next */
	__u16 tstate_thread_id;		 /* PyThreadState.thread_id: the thread's pthread_self() */
	/* PyThreadState: 3.10 .frame, 3.11-3.12 .cframe, 3.13 .current_frame */
	__u16 tstate_frame;
	__u16 cframe_current_frame; /* _PyCFrame.current_frame (3.11, 3.12); else PY_NO_FIELD */
	__u16 frame_code;	    /* f_code (3.10-3.12), f_executable (3.13) */
	__u16 frame_previous;	    /* f_back (3.10), previous (3.11+) */
	/* f_lasti (3.10, an int), prev_instr (3.11, 3.12), instr_ptr (3.13) */
	__u16 frame_instr;
	__u16 frame_owner;    /* owner (3.11+, one byte); else PY_NO_FIELD */
	__u16 frame_is_entry; /* is_entry (3.11, one byte); else PY_NO_FIELD */
	/*
	 * The bytes of a frame that hold every field above: what the BPF
	 * program reads of each, which never goes past the frame itself (a
	 * fixed size could, into a page that is not there).
	 */
	__u16 frame_size;
	__u16 code_firstlineno;
	/* Read by user space only. */
	__u16 code_filename;
	__u16 code_name;
	__u16 code_qualname;   /* PY_NO_FIELD before 3.11: co_name */
	__u16 code_linetable;  /* a bytes object: 3.10's line table, 3.11+'s location table */
	__u16 code_adaptive;   /* co_code_adaptive, the instructions (3.11+); else PY_NO_FIELD */
	__u16 unicode_state;   /* PyASCIIObject.state */
	__u16 unicode_ascii;   /* the characters of a compact ASCII string */
	__u16 unicode_compact; /* ... of another compact string */
	__u16 bytes_size;      /* PyVarObject.ob_size of a bytes object */
	__u16 bytes_data;      /* PyBytesObject.ob_sval */
	__u8 cstack_owner;     /* owner of 3.12+'s C-stack entry frames; 0xff: none */
	__u8 pad[7];
};

struct python_proc {
	__u64 runtime; /* the address of _PyRuntime in the process */
	struct python_offsets off;
};

/* Processes with a Python interpreter loaded at once. */
#define PROFILE_MAX_PYTHON_PROCS 4096

/*
 * A Go program whose goroutines' pprof labels are read (collector/golang.c):
 * where its thread's current g is (at fsbase + tls_off), and in the
 * runtime's structures of its release, runtime.g's m and labels and
 * runtime.m's curg.
 */
struct go_proc {
	__s32 tls_off;
	__u32 g_m, m_curg, g_labels;
};

#define PROFILE_MAX_GO_PROCS 4096

/*
 * A process running V8 (collector/v8.c): where a JavaScript frame keeps
 * what names it, from V8's own introspection constants (v8dbg_*). Offsets
 * from the frame pointer are negative; a JS frame holds its context there
 * (a tagged heap object) where other frames hold a small integer marking
 * their type. Heap objects are tagged: the address + 1.
 */
struct v8_proc {
	__s16 fp_context;      /* v8dbg_off_fp_context */
	__s16 fp_function;     /* v8dbg_off_fp_function: the JSFunction */
	__u16 function_shared; /* JSFunction's SharedFunctionInfo */
	__u16 pad;
};

#define PROFILE_MAX_V8_PROCS 4096

/*
 * A frame of a user stack that is a JavaScript function's (v8.bpf.h), in
 * place of its address: the function's SharedFunctionInfo (its address,
 * tagged, below bit V8_FRAME_SHIFT), with the top two bits 10: an address no
 * code has, neither user (bit 63 clear) nor kernel (bits 62 and 63 set).
 * The bits between are free for what may name the frame better (an
 * interpreted frame's bytecode offset, for its line). Records with such
 * frames are flagged SAMPLE_V8_FRAMES.
 */
#define V8_FRAME_TAG (1ULL << 63)
#define V8_FRAME_SHIFT 47
#define V8_FRAME_IS(v) (((v) >> 62) == 2)
#define V8_FRAME_SHARED(v) ((v) & ((1ULL << V8_FRAME_SHIFT) - 1))

/* python_frame.code: the frame is the first its call of _PyEval_EvalFrameDefault ran. */
#define PY_FRAME_ENTRY (1ULL << 63)
/* python_frame.instr: the code object's first line number, low 16 bits, from here up. */
#define PY_FRAME_LINE_SHIFT 48

struct python_frame {
	__u64 code;  /* the code object's address, | PY_FRAME_ENTRY */
	__u64 instr; /* the frame's frame_instr field, | first line << PY_FRAME_LINE_SHIFT */
};

/*
 * Allocations (--alloc). Uprobes on a target's allocator functions sample
 * calls by bytes: each CPU counts down the bytes asked for to its next
 * sampling point, drawn from alloc_intervals (exponential, of mean
 * alloc_rate bytes), and the call that reaches it is sampled: its size is
 * kept by thread (alloc_calls) until the function returns, when an
 * EVENT_ALLOC record is sent with the caller's stacks and the block's
 * address, and the block is watched (alloc_live) for its free, which sends
 * an EVENT_FREE. With alloc_rate 1 every call is sampled.
 */
enum alloc_func {
	ALLOC_FUNC_MALLOC,
	ALLOC_FUNC_CALLOC,
	ALLOC_FUNC_REALLOC,
	ALLOC_FUNC_REALLOCARRAY,
	ALLOC_FUNC_POSIX_MEMALIGN,
	ALLOC_FUNC_ALIGNED_ALLOC,
	ALLOC_FUNC_MEMALIGN,
	ALLOC_FUNC_VALLOC,
	ALLOC_FUNC_PVALLOC,
	ALLOC_FUNC_MMAP, /* anonymous only: its own kind */
	NR_ALLOC_FUNCS,
};

/*
 * A probe's BPF cookie: which function it is on (enum alloc_func, or one
 * of the frees below), and flags.
 */
#define ALLOC_COOKIE_FUNC 0xffULL
#define ALLOC_COOKIE_FREE (NR_ALLOC_FUNCS + 0ULL)
#define ALLOC_COOKIE_MUNMAP (NR_ALLOC_FUNCS + 1ULL)
/* glibc's memalign family hands an alignment of 16 or less to malloc, probed too. */
#define ALLOC_COOKIE_SMALL_ALIGN_IS_MALLOC (1ULL << 8)
#define ALLOC_SMALL_ALIGN 16

/* Drawn at random: a power of two. */
#define ALLOC_NR_INTERVALS 1024
/* Sampled blocks watched for their free at once, by default. */
#define ALLOC_LIVE_DEFAULT 262144

/* A sampled call, from its entry to its return. */
struct alloc_call {
	__u64 size;
	__u64 memptr;  /* posix_memalign: where the block's address is written; else 0 */
	__u64 sp;      /* the stack pointer at its entry: its return address's */
	__u64 old;     /* realloc: the watched block it was given, released if it succeeds */
	__u32 func;    /* enum alloc_func */
	__u32 sampled; /* its block is sent; else it only releases @old */
};

struct alloc_key {
	__u32 pid;
	__u32 pad;
	__u64 addr;
};

struct free_event {
	__u32 type; /* EVENT_FREE */
	__u32 pid;
	__u64 time_ns;
	__u64 addr;
};

/* EVENT_FORK and EVENT_EXEC. */
struct process_event {
	__u32 type;
	__u32 pid;  /* the process (thread group id) */
	__u32 ppid; /* EVENT_FORK: the target that forked it */
	__u32 pad;
	__u64 time_ns;
};

#endif
