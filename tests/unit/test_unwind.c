// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CFI unwinder on stacks made up byte by byte, over a real ELF file (the
 * symbols-pie fixture) mapped at a made-up address: what it finds on good
 * input, and that on bad input (a stack pointer outside the copy, frames that
 * loop or point outside the stack, a corrupt .eh_frame) it stops, says the
 * stack is truncated, and neither crashes nor hangs. And --call-graph's parsing.
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/profile.h"
#include "cli/options.h"
#include "common/proc_maps.h"
#include "elf/elf_file.h"
#include "collector/unwind.h"
#include "collector/unwind_table.h"
#include "common/strset.h"
#include "symbolize/elf_symtab.h"
#include "test.h"

/* Where the fixture's executable segment (file offset and address 0x1000) is mapped. */
#define BASE 0x10000000ULL
#define STACK_TOP 0x7ffc0000ULL

struct unwind_fixture {
	struct strset *strings;
	struct file_table *files;
	struct proc_maps *maps;
	struct unwinder *u;
	uint64_t alpha, beta; /* fixture_alpha() and fixture_beta(), as mapped */
};

/* The ELF address of function @name in @path, or 0. */
static uint64_t symbol_addr(const char *path, const char *name)
{
	struct elf_symtab *tab = elf_symtab__open(path);
	const struct elf_sym *syms;
	uint64_t addr = 0;
	size_t nr;

	if (!tab)
		return 0;
	syms = elf_symtab__syms(tab, &nr);
	for (size_t i = 0; i < nr && !addr; i++)
		if (!strcmp(syms[i].name, name))
			addr = syms[i].addr;
	elf_symtab__free(tab);
	return addr;
}

/*
 * Map @path's executable segment at BASE, and an anonymous executable
 * mapping (code without CFI) after it. 0 or -1.
 */
static int fixture_setup(struct unwind_fixture *f, const char *path)
{
	char real[PATH_MAX], text[2 * PATH_MAX];
	struct stat st;

	memset(f, 0, sizeof(*f));
	if (!realpath(path, real) || stat(real, &st))
		return -1;
	snprintf(text, sizeof(text),
		 "%llx-%llx r-xp 00001000 00:00 %llu %s\n"
		 "%llx-%llx r-xp 00000000 00:00 0\n",
		 BASE + 0x1000, BASE + 0x2000, (unsigned long long)st.st_ino, real, BASE + 0x100000,
		 BASE + 0x101000);
	f->strings = strset__new();
	f->files = f->strings ? file_table__new(f->strings) : NULL;
	f->maps = f->files ? proc_maps__parse(text, getpid(), f->files) : NULL;
	f->u = unwinder__new(NULL);
	f->alpha = BASE + symbol_addr(real, "fixture_alpha");
	f->beta = BASE + symbol_addr(real, "fixture_beta");
	return f->maps && f->u && f->alpha != BASE && f->beta != BASE ? 0 : -1;
}

static void fixture_teardown(struct unwind_fixture *f)
{
	unwinder__free(f->u);
	proc_maps__free(f->maps);
	file_table__free(f->files);
	strset__free(f->strings);
}

/* Registers with @ip, @sp and @bp, the rest 0. */
static void set_regs(uint64_t *regs, uint64_t ip, uint64_t sp, uint64_t bp)
{
	memset(regs, 0, PROFILE_NR_REGS * sizeof(*regs));
	regs[PROFILE_REG_IP] = ip;
	regs[PROFILE_REG_SP] = sp;
	regs[PROFILE_REG_BP] = bp;
}

/*
 * At a function's first instruction the CFA is the stack pointer + 8 and the
 * return address is at the stack pointer: found by both entry points.
 */
TEST(unwind_leaf_at_function_entry)
{
	struct unwind_fixture f;
	uint64_t regs[PROFILE_NR_REGS], stack[4] = { 0 }, ips[8], ra;
	struct unwind_input in = { regs, (const unsigned char *)stack, sizeof(stack) };
	enum unwind_stop stop;
	size_t n;

	CHECK(fixture_setup(&f, test__fixture("symbols-pie")) == 0);
	stack[0] = f.beta + 4;
	set_regs(regs, f.alpha, STACK_TOP - sizeof(stack), 0);
	CHECK(unwinder__leaf_caller(f.u, f.maps, &in, &ra) == 0);
	CHECK_U64(ra, f.beta + 4);

	/* The copy ends before fixture_beta's return address. */
	in.stack_size = sizeof(stack[0]);
	n = unwinder__unwind(f.u, f.maps, &in, NULL, ips, 8, &stop);
	CHECK_U64(n, 2);
	CHECK_U64(ips[0], f.alpha);
	CHECK_U64(ips[1], f.beta + 4);
	CHECK_U64(stop, UNWIND_STACK_ENDED);

	/* A return address outside every mapping is not one (not yet, at least). */
	stack[0] = 0x1234;
	CHECK(unwinder__leaf_caller(f.u, f.maps, &in, &ra) == -ENXIO);
	fixture_teardown(&f);
}

TEST(unwind_stack_pointer_outside_the_copy)
{
	struct unwind_fixture f;
	uint64_t regs[PROFILE_NR_REGS], stack[4] = { 0 }, ips[8], ra;
	struct unwind_input in = { regs, (const unsigned char *)stack, 4 };
	enum unwind_stop stop;

	CHECK(fixture_setup(&f, test__fixture("symbols-pie")) == 0);
	stack[0] = f.beta + 4;
	/* Half a word copied: the return address is not in it. */
	set_regs(regs, f.alpha, STACK_TOP, 0);
	CHECK(unwinder__leaf_caller(f.u, f.maps, &in, &ra) == -ENOENT);
	CHECK(unwinder__unwind(f.u, f.maps, &in, NULL, ips, 8, &stop) == 1);
	CHECK_U64(stop, UNWIND_STACK_ENDED);

	/* Nothing copied at all, and no maps to look code up in. */
	in.stack_size = 0;
	set_regs(regs, f.alpha, STACK_TOP, STACK_TOP + 64);
	CHECK(unwinder__unwind(f.u, NULL, &in, NULL, ips, 8, &stop) == 1);
	CHECK_U64(stop, UNWIND_STACK_ENDED);
	CHECK(unwinder__leaf_caller(f.u, NULL, &in, &ra) == -ENOENT);
	fixture_teardown(&f);
}

/* What the frame hook below was asked: how often, and the last frame pointer. */
struct hook_calls {
	int nr;
	uint64_t bp;
};

/* Stands in for a runtime: a frame whose slot below its frame pointer holds 0xfeed is its own. */
static uint64_t marked_frame(void *arg, const struct unwind_input *in, uint64_t bp, uint64_t ip)
{
	struct hook_calls *calls = arg;
	uint64_t slot;

	calls->nr++;
	calls->bp = bp;
	return unwind_input__read(in, bp - 8, &slot) && slot == 0xfeed ? V8_FRAME_TAG | 0x1235 : ip;
}

/*
 * A runtime is asked about each frame the walk leaves by its frame pointer,
 * and only those, with that frame pointer; what it answers stands for the
 * frame, and the walk goes on to its caller all the same.
 */
TEST(unwind_frame_hook_sees_frame_pointer_frames)
{
	struct unwind_fixture f;
	uint64_t regs[PROFILE_NR_REGS], stack[4], ips[8];
	struct unwind_input in = { regs, (const unsigned char *)stack, sizeof(stack) };
	const uint64_t sp = STACK_TOP - sizeof(stack), anon = BASE + 0x100010;
	struct hook_calls calls = { 0 };
	struct unwind_frame_hook hook = { marked_frame, &calls };
	enum unwind_stop stop;
	size_t n;

	CHECK(fixture_setup(&f, test__fixture("symbols-pie")) == 0);
	/* fixture_alpha (CFI) at its entry, called from code without CFI whose frame is marked. */
	stack[0] = anon;
	stack[1] = 0xfeed;
	stack[2] = 0; /* the outermost frame's saved frame pointer */
	stack[3] = anon + 0x40;
	set_regs(regs, f.alpha, sp, sp + 16);
	n = unwinder__unwind(f.u, f.maps, &in, &hook, ips, 8, &stop);
	CHECK_U64(n, 3);
	CHECK_U64(stop, UNWIND_COMPLETE);
	CHECK_U64(ips[0], f.alpha);
	CHECK_U64(ips[1], V8_FRAME_TAG | 0x1235);
	CHECK_U64(ips[2], anon + 0x40);
	CHECK(calls.nr == 1);
	CHECK_U64(calls.bp, sp + 16);

	/* Unmarked, the frame keeps its address. */
	stack[1] = 0;
	calls.nr = 0;
	n = unwinder__unwind(f.u, f.maps, &in, &hook, ips, 8, &stop);
	CHECK_U64(n, 3);
	CHECK_U64(ips[1], anon);
	CHECK(calls.nr == 1);
	fixture_teardown(&f);
}

/* Code without CFI is walked by its frame pointers, which may loop or point anywhere. */
TEST(unwind_frame_pointer_loops_and_strays)
{
	struct unwind_fixture f;
	uint64_t regs[PROFILE_NR_REGS], stack[8], ips[16];
	struct unwind_input in = { regs, (const unsigned char *)stack, sizeof(stack) };
	const uint64_t sp = STACK_TOP - sizeof(stack), anon = BASE + 0x100010;
	enum unwind_stop stop;
	size_t n;

	CHECK(fixture_setup(&f, test__fixture("symbols-pie")) == 0);
	/* A frame whose saved frame pointer is itself. */
	stack[0] = sp;
	stack[1] = anon;
	set_regs(regs, anon, sp, sp);
	n = unwinder__unwind(f.u, f.maps, &in, NULL, ips, 16, &stop);
	CHECK(n <= 2);
	CHECK_U64(stop, UNWIND_NO_FRAME);

	/* A frame pointer below the stack pointer, and one far above the copy. */
	set_regs(regs, anon, sp, sp - 64);
	CHECK(unwinder__unwind(f.u, f.maps, &in, NULL, ips, 16, &stop) == 1);
	CHECK_U64(stop, UNWIND_NO_FRAME);
	set_regs(regs, anon, sp, STACK_TOP + (1 << 20));
	CHECK(unwinder__unwind(f.u, f.maps, &in, NULL, ips, 16, &stop) == 1);
	CHECK_U64(stop, UNWIND_STACK_ENDED);

	/* A zero frame pointer marks the outermost frame. */
	set_regs(regs, anon, sp, 0);
	CHECK(unwinder__unwind(f.u, f.maps, &in, NULL, ips, 16, &stop) == 1);
	CHECK_U64(stop, UNWIND_COMPLETE);

	/* A chain that ends with a zero return address is whole. */
	stack[0] = sp + 16;
	stack[1] = anon;
	stack[2] = 0;
	stack[3] = 0;
	set_regs(regs, anon, sp, sp);
	n = unwinder__unwind(f.u, f.maps, &in, NULL, ips, 16, &stop);
	CHECK_U64(n, 2);
	CHECK_U64(stop, UNWIND_COMPLETE);
	fixture_teardown(&f);
}

/*
 * A stack full of one return address: CFI moves up a word a frame, so the
 * walk ends at the copy's end or at the most frames asked for, whichever
 * comes first.
 */
TEST(unwind_bounded_by_frames_and_copy)
{
	enum {
		WORDS = 4096
	};
	uint64_t *stack = malloc(WORDS * sizeof(*stack)), regs[PROFILE_NR_REGS],
		 ips[PROFILE_MAX_STACK];
	struct unwind_input in = { regs, (const unsigned char *)stack, WORDS * sizeof(*stack) };
	struct unwind_fixture f;
	enum unwind_stop stop;
	size_t n;

	CHECK(stack);
	CHECK(fixture_setup(&f, test__fixture("symbols-pie")) == 0);
	for (int i = 0; i < WORDS; i++)
		stack[i] = f.alpha + 1; /* as if called from fixture_alpha's first instruction */
	set_regs(regs, f.alpha, STACK_TOP - in.stack_size, 0);
	n = unwinder__unwind(f.u, f.maps, &in, NULL, ips, PROFILE_MAX_STACK, &stop);
	CHECK_U64(n, PROFILE_MAX_STACK);
	CHECK_U64(stop, UNWIND_MAX_FRAMES);
	fixture_teardown(&f);
	free(stack);
}

/* The offset and size of @path's section @name, or -1. */
static int section_range(const char *path, const char *name, uint64_t *offset, uint64_t *size)
{
	int fd = open(path, O_RDONLY), ret = -1;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr shdr;
			const char *n;

			if (!gelf_getshdr(scn, &shdr))
				continue;
			n = elf_strptr(elf, shstrndx, shdr.sh_name);
			if (n && !strcmp(n, name)) {
				*offset = shdr.sh_offset;
				*size = shdr.sh_size;
				ret = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return ret;
}

/*
 * The unwind table of @f's file, if it has one, is sorted and refers to
 * nothing outside it. Whether there was one.
 */
static bool check_table_sorted(struct unwind_fixture *f, int round)
{
	struct unwind_table t = { 0 };
	struct elf_file *file;
	uint64_t bias;

	file = unwinder__table_file(f->u, &f->maps->maps[0], &bias);
	if (!file || unwind_table__build(&t, file))
		return false; /* corrupt beyond reading: no table, which is fine */
	for (size_t i = 1; i < t.nr; i++)
		if (t.rows[i].pc <= t.rows[i - 1].pc) {
			test__fail(__FILE__, __LINE__, "round %d: row %zu at 0x%x after 0x%x",
				   round, i, t.rows[i].pc, t.rows[i - 1].pc);
			break;
		}
	for (size_t i = 0; i < t.nr; i++)
		if (t.rows[i].rule.cfa > UNWIND_CFA_NO_ROOM) {
			test__fail(__FILE__, __LINE__, "round %d: row %zu has rule %u", round, i,
				   t.rows[i].rule.cfa);
			break;
		}
	unwind_table__release(&t);
	return true;
}

/*
 * The unwind table of the C library against libdw's reading of the same
 * CFI, at every 7th byte of its code: where the table says the CFA is the
 * stack or frame pointer plus an offset, libdw says the same; the table
 * covers what libdw covers; and what the BPF program cannot follow is rare.
 */
TEST(unwind_table_agrees_with_libdw)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	size_t checked = 0, covered = 0, agree = 0;
	struct unwind_table t = { 0 };
	Dwarf_CFI *cfi;
	GElf_Shdr shdr;
	Elf_Scn *scn = NULL;
	uint64_t lo = 0, hi = 0;
	struct elf_file *file;
	size_t shstrndx;
	Elf *elf;

	file = elf_file__open(path);
	CHECK(file);
	elf = elf_file__elf(file);
	cfi = elf_file__eh_cfi(file);
	CHECK(cfi);
	CHECK(!elf_file__debug_cfi(
		file)); /* every row read from .eh_frame, as libdw reads it here */
	CHECK(unwind_table__build(&t, file) == 0);
	CHECK(t.nr_fdes > 1000 && t.nr > 10000);
	CHECK(!elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) &&
		    !strcmp(elf_strptr(elf, shstrndx, shdr.sh_name), ".text")) {
			lo = shdr.sh_addr;
			hi = shdr.sh_addr + shdr.sh_size;
		}
	CHECK(hi > lo);
	for (uint64_t pc = lo; pc < hi; pc += 7) {
		const struct unwind_table_row *row = unwind_table__find(&t, pc);
		Dwarf_Frame *frame;
		Dwarf_Op *ops;
		size_t nops;

		if (dwarf_cfi_addrframe(cfi, pc, &frame))
			continue;
		checked++;
		if (row && row->rule.cfa != UNWIND_CFA_NONE)
			covered++;
		if (row && (row->rule.cfa == UNWIND_CFA_SP || row->rule.cfa == UNWIND_CFA_BP) &&
		    !dwarf_frame_cfa(frame, &ops, &nops) && nops == 1 &&
		    ops[0].atom == DW_OP_bregx &&
		    ops[0].number == (row->rule.cfa == UNWIND_CFA_SP ? 7 : 6) &&
		    (int64_t)ops[0].number2 == row->rule.cfa_off)
			agree++;
		else if (row && (row->rule.cfa == UNWIND_CFA_SP || row->rule.cfa == UNWIND_CFA_BP))
			test__fail(__FILE__, __LINE__,
				   "0x%llx: the table's CFA differs from libdw's",
				   (unsigned long long)pc);
		free(frame);
		if (test__failed())
			break;
	}
	printf("# libc: %zu FDEs, %zu rows, %zu unsupported; %zu addresses with CFI, %zu "
	       "covered, %zu with the same CFA register and offset\n",
	       t.nr_fdes, t.nr, t.nr_unsupported, checked, covered, agree);
	CHECK(checked > 100000);
	CHECK(covered == checked);
	CHECK(agree * 100 >= checked * 99);
	CHECK(t.nr_unsupported * 100 < t.nr);
	unwind_table__release(&t);
	elf_file__put(file);
}

/*
 * Corrupt .eh_frame (and .eh_frame_hdr, its search table) of a copy of the
 * fixture a hundred ways, and unwind from every fourth byte of its code over a
 * stack of plausible addresses: every walk ends, within its bounds.
 */
TEST(unwind_corrupt_eh_frame)
{
	const char *src = test__fixture("symbols-pie");
	char path[] = "/tmp/unwind-test-XXXXXX";
	uint64_t eh_off, eh_size, hdr_off, hdr_size, regs[PROFILE_NR_REGS], stack[64],
		ips[PROFILE_MAX_STACK];
	struct unwind_input in = { regs, (const unsigned char *)stack, sizeof(stack) };
	unsigned char *image = NULL;
	unsigned int seed = 1, tables = 0;
	struct stat st;
	int fd, src_fd;

	CHECK(section_range(src, ".eh_frame", &eh_off, &eh_size) == 0);
	CHECK(section_range(src, ".eh_frame_hdr", &hdr_off, &hdr_size) == 0);
	src_fd = open(src, O_RDONLY);
	CHECK(src_fd >= 0);
	CHECK(!fstat(src_fd, &st) && (image = malloc(st.st_size)));
	CHECK(pread(src_fd, image, st.st_size, 0) == st.st_size);
	close(src_fd);
	fd = mkstemp(path);
	CHECK(fd >= 0);

	for (int round = 0; round < 100; round++) {
		struct unwind_fixture f;
		enum unwind_stop stop;

		/* A few bytes flipped, or a run of bytes overwritten, in either section. */
		for (int i = 0; i < 1 + round % 8; i++) {
			uint64_t off = round % 2 ? eh_off : hdr_off,
				 size = round % 2 ? eh_size : hdr_size;

			image[off + rand_r(&seed) % size] = rand_r(&seed);
		}
		if (round % 10 == 9)
			memset(image + eh_off + rand_r(&seed) % (eh_size / 2), 0xff, eh_size / 4);
		CHECK(pwrite(fd, image, st.st_size, 0) == st.st_size);
		/* A new unwinder, which reads the file afresh. */
		CHECK(fixture_setup(&f, path) == 0);
		tables += check_table_sorted(&f, round);
		for (size_t i = 0; i < sizeof(stack) / sizeof(stack[0]); i++)
			stack[i] = BASE + 0x1000 + rand_r(&seed) % 0x5d9;
		for (uint64_t ip = BASE + 0x1000; ip < BASE + 0x15d9; ip += 4) {
			uint64_t ra;
			size_t n;

			set_regs(regs, ip, STACK_TOP - sizeof(stack),
				 STACK_TOP - sizeof(stack) + 64);
			unwinder__leaf_caller(f.u, f.maps, &in, &ra);
			n = unwinder__unwind(f.u, f.maps, &in, NULL, ips, PROFILE_MAX_STACK, &stop);
			if (n < 1 || n > sizeof(stack) / sizeof(stack[0]) + 1) {
				test__fail(__FILE__, __LINE__, "round %d, ip 0x%llx: %zu frames",
					   round, (unsigned long long)ip, n);
				break;
			}
		}
		fixture_teardown(&f);
		if (test__failed())
			break;
	}
	close(fd);
	unlink(path);
	free(image);
	/*
	 * The corruptions pile up round after round, and libdw reads no row
	 * once .eh_frame_hdr is damaged: only the first few images give a
	 * table. At least one must, or nothing above was checked.
	 */
	printf("# %u of 100 corrupt images gave an unwind table\n", tables);
	CHECK(tables > 0);
}

static int parse_options(struct options *o, char *err, size_t size, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options__parse(o, argc, argv, 0, err, size);
}

#define PARSE(o, err, ...)                                                                         \
	parse_options(o, err, sizeof(err), (char *[]){ "profiler", __VA_ARGS__, NULL })

/* --call-graph cfi | fp | dwarf[=SIZE], the last two as perf record spells them. */
TEST(unwind_call_graph_option)
{
	struct options o;
	char err[256];

	CHECK(PARSE(&o, err, "-p", "1") == 0);
	CHECK_U64(o.call_graph, CALL_GRAPH_CFI);
	options__release(&o);
	CHECK(PARSE(&o, err, "--call-graph", "fp", "-p", "1") == 0);
	CHECK_U64(o.call_graph, CALL_GRAPH_FP);
	options__release(&o);
	CHECK(PARSE(&o, err, "--call-graph", "cfi", "--unwind-memory", "8", "-p", "1") == 0);
	CHECK_U64(o.call_graph, CALL_GRAPH_CFI);
	CHECK_U64(o.unwind_table_bytes, 8 << 20);
	options__release(&o);
	CHECK(PARSE(&o, err, "--call-graph", "dwarf", "-p", "1") == 0);
	CHECK_U64(o.call_graph, CALL_GRAPH_DWARF);
	CHECK_U64(o.stack_bytes, 0);
	options__release(&o);
	CHECK(PARSE(&o, err, "--call-graph=dwarf=16384", "-p", "1") == 0);
	CHECK_U64(o.call_graph, CALL_GRAPH_DWARF);
	CHECK_U64(o.stack_bytes, 16384);
	options__release(&o);

	CHECK(PARSE(&o, err, "--call-graph", "lbr", "-p", "1") == -EINVAL);
	CHECK_STR(err, "invalid --call-graph 'lbr': use cfi, fp or dwarf[=SIZE]");
	options__release(&o);
	CHECK(PARSE(&o, err, "--unwind-memory", "0", "-p", "1") == -EINVAL);
	CHECK_STR(err, "invalid --unwind-memory '0': expected 1 to 4096 MB");
	options__release(&o);
	/* dwarf copies on-CPU stacks only: refused where off-CPU stacks are asked for. */
	CHECK(PARSE(&o, err, "--call-graph", "dwarf", "--wall", "-p", "1") == -EINVAL);
	CHECK_STR(err, "--call-graph dwarf copies the stacks of on-CPU samples only: use the "
		       "default --call-graph cfi with --wall");
	options__release(&o);
	CHECK(PARSE(&o, err, "--call-graph", "dwarfy", "-p", "1") == -EINVAL);
	options__release(&o);
	CHECK(PARSE(&o, err, "--call-graph", "dwarf=", "-p", "1") == -EINVAL);
	options__release(&o);
	CHECK(PARSE(&o, err, "--call-graph", "dwarf=70000", "-p", "1") == -EINVAL);
	CHECK_STR(err, "invalid --call-graph stack size '70000': expected 64 to 65528 bytes");
	options__release(&o);
}
